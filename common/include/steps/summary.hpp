/// @file summary.hpp
/// @brief Results as data: what a chapter run measured and decided (rows,
///        ratios, peak, goals, exit code), separate from how it is printed.
///
/// `summarize()` is pure (no CUDA, no output) and tested on the CPU; two
/// printers render its Summary: `print_table()` for people, `to_json()` for
/// tools (`./tutorial bench`, tools/results.py). The JSON says what every
/// number is (metric and unit, which row is the baseline, which rows are
/// references, the peak and its label, the options as used, which rows were
/// skipped and why, the chapter's notes), so no tool has to guess or parse
/// prose. Its fields: docs/results.md.
#pragma once

#include "steps/cli.hpp"
#include "steps/compare.hpp"
#include "steps/device.hpp"
#include "steps/report.hpp"
#include "steps/timing.hpp"

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace steps {

class Run;

/// What a row of the table is.
enum class Role {
  version,   ///< one of the chapter's kernel versions: ranked, counted in "best"
  baseline,  ///< the vendor library the goals are ratios of (named by ChapterInfo::baseline)
  reference, ///< a measurement shown for comparison (a different or easier problem,
             ///< a hardware probe): verified, shown as % of the baseline, never ranked
  yours,     ///< your exercise code (shown when the exercise is built; never fails the run
             ///< unless asked for by --variant)
  mistake,   ///< a deliberately broken version that shows a classic bug being caught;
             ///< runs only with --mistakes or --variant, never fails the run
};

/// Name of a role as the JSON writes it ("version", "baseline", ...).
const char* role_name(Role r);

/// What the chapter measures.
enum class Metric {
  bandwidth, ///< GB/s (bytes read + written per second); higher is better
  flops,     ///< TFLOP/s; higher is better
  time,      ///< microseconds per run; lower is better (launch overhead, latency)
};

/// Work done by one run of a version.
struct Work {
  double bytes = 0;    ///< useful bytes read + written (each input read once, each output written once)
  double flops = 0;    ///< floating-point operations
  double hw_bytes = 0; ///< bytes the memory system really moves (e.g. whole 32-byte sectors for
                       ///< strided access); when any row sets it, the table adds a "moved GB/s" column
};

/// A named extra value of a row, shown as its own column (registers per
/// thread, occupancy, shared memory per block...).
struct Extra {
  std::string name; ///< column header, e.g. "regs/thread"
  double value = 0; ///< the value
  int decimals = 0; ///< digits after the point in the table
};

/// The hardware limit a chapter measures against, in the chapter's metric
/// (GB/s, TFLOP/s, or the least possible microseconds).
struct Peak {
  std::string label; ///< "DRAM", "shared memory", "PCIe", "NVLink", "FP8 tensor"
  double value = 0;  ///< 0 = no peak
  std::string how;   ///< one line: how it is computed from the device's facts
};

/// A speed goal: numerator / denominator >= threshold, as throughput ratios
/// (for Metric::time, the denominator's time over the numerator's).
struct Goal {
  std::string numerator = "best"; ///< a row name, or "best": the fastest verified version row
  std::string denominator;        ///< a row name (the baseline, or any other row)
  double threshold = 0;           ///< ratio to reach
  std::string text;               ///< e.g. ">= 0.95x memcpy"
  int min_gpus = 1;               ///< GPUs the goal needs: a run with fewer says "n/a", neither met nor missed
  /// A goal set at one of the chapter's other problem shapes (a line of its
  /// bench_shapes file) instead of the default problem: the shape's name for
  /// the tables ("short K 4096 x 4096 x 256") and the test that recognises a
  /// run of that shape by its options. Any other run says "n/a (set at ...)".
  /// Both empty: a goal of the default problem, judged only in a run of it
  /// (Options::off_default empty; any other run says "n/a (set at the
  /// default problem ...)"), and, when its numerator is "best", only in a run
  /// of every version (a --variant list says "n/a (set over every version
  /// ...)"). One without the other stops the program at start (exit 2).
  std::string shape = {};
  std::function<bool(const Options&)> at_shape = {};
};

/// Fixed facts about a chapter program. `number`, `binary` and `title` come
/// from the course manifest (course.tsv, through CMake); a chapter sets the rest.
struct ChapterInfo {
  std::string number;   ///< "01"
  std::string binary;   ///< "ch01_vector_add"
  std::string title;    ///< "Vector add"
  std::string summary;  ///< paragraph for --help
  Metric metric = Metric::bandwidth; ///< GB/s, TFLOP/s or microseconds
  std::int64_t default_size = 0;     ///< --size default
  std::string size_help;             ///< --size help line
  int default_iters = 20;            ///< --iters default
  int default_warmup = 3;            ///< --warmup default
  std::string work_note;             ///< how bytes/flops are counted (printed under the table)
  std::string baseline;              ///< name of the baseline row ("" = none)
  std::vector<Goal> goals;           ///< speed goals (the bench goal table)
  /// The chapter's hardware peak for a device (unset: the DRAM bandwidth for
  /// Metric::bandwidth, none otherwise).
  std::function<Peak(const DeviceInfo&)> peak;
  int min_cc_major = 0;              ///< skip (77) below this compute capability
  int min_cc_minor = 0;              ///< (minor part)
  int max_cc_major = 0;              ///< skip (77) above this compute capability (0 = no maximum):
  int max_cc_minor = 0;              ///< arch-specific code (sm_90a) runs on that architecture only
  std::string needs;                 ///< what the limits mean: "Hopper (sm_90) tensor cores"
  /// What else a GPU must have ("" when it will do): a non-empty answer skips
  /// the chapter (77) with that reason, e.g. an architecture the occupancy
  /// calculator has no table for.
  std::function<std::string(const DeviceInfo&)> unsupported;
  int min_gpus = 1;                  ///< skip (77) with fewer GPUs
  int max_gpus = 1;                  ///< GPUs to open at most (from --device on)
  double timeout_s = 120;            ///< watchdog per row: a run that takes longer is a hang
  std::vector<IntOption> int_options;   ///< chapter integer options
  std::vector<FlagOption> flag_options; ///< chapter flags (--mistakes is always there)
  /// Checks option combinations before any GPU work; throws UsageError (exit 2).
  std::function<void(const Options&)> validate;
  /// Runs once after the GPUs are opened, before the first group (optional):
  /// a device setting for the whole run, a report of what the machine has
  /// (as Run::note lines, so that it reaches the JSON).
  std::function<void(const Options&, Run&)> before;
};

/// The DRAM peak of a device: 2 x memory clock x bus width / 8.
Peak dram_peak(const DeviceInfo& dev);

/// One measured row (filled by the runner, decided on by summarize()).
struct RowResult {
  std::string name;             ///< version name
  std::string what;             ///< its description
  Role role = Role::version;    ///< its role
  int problem = 0;              ///< index of its problem (group) in Summary::problems; -1: none was built
  Work work;                    ///< per run
  std::vector<Extra> extras;    ///< named extra columns
  bool timed = false;           ///< timing succeeded
  Stats ms;                     ///< milliseconds per run
  bool verified = false;        ///< verification ran and passed
  bool verify_skipped = false;  ///< --no-verify
  std::optional<Comparison> comparison; ///< present when verification ran
  std::string error;            ///< a CUDA error (or other failure) raised while running it
  std::string same_as;          ///< the row whose kernel it ran here (Row::same_as), or ""
  std::string skipped;          ///< why it did not run here (Row/GroupOptions::unavailable), or ""
  std::vector<std::string> notes; ///< what it said while it ran (Run::row_note)
};

/// A row with everything derived from it.
struct RowSummary {
  RowResult result;             ///< what was measured
  double value = 0;             ///< in the metric's unit; NaN when not timed or wrong
  double ratio_to_baseline = 0; ///< throughput ratio to the baseline row (NaN if none)
  double pct_of_peak = 0;       ///< % of the chapter's peak (NaN if none)
  double speedup = 0;           ///< over the first version row (NaN for baseline/reference/mistake)
  std::string verdict;          ///< the "verified" column: yes, NO, caught, not yet, skipped, ...
  bool ranked = false;          ///< a version row that may be "best"
  bool failed = false;          ///< wrong result or error
  bool fails_run = false;       ///< its failure makes the exit code 1
};

/// A goal with its measured ratio.
struct GoalResult {
  Goal goal;                  ///< the goal
  std::string numerator_row;  ///< the row "best" resolved to
  double ratio = 0;           ///< NaN when either row was not measured
  bool measured = false;      ///< both rows measured
  bool met = false;           ///< applicable, measured and ratio >= threshold
  bool applicable = true;     ///< the run has the goal's min_gpus GPUs and problem (else: n/a, not a miss)
  bool at_shape = true;       ///< the run is at the goal's shape (always, for a goal of the default problem)
  std::string not_here;       ///< why it is n/a here: "needs 2 GPUs; this run has 1", "set at <shape>",
                              ///< "set at the default problem; this run has --size 1024",
                              ///< "set over every version; this run has --variant a,b"
  std::string skipped;        ///< why one of its rows was skipped ("": none was), so not measured
};

/// A chapter option's value as used (ChapterInfo::int_options, flag_options
/// and --mistakes), for the JSON's "options".
struct OptionValue {
  std::string name;   ///< without the leading dashes: "chase-mib"
  bool flag = false;  ///< a flag (value 1 = given, 0 = not)
  std::int64_t value = 0; ///< the value
};

/// Everything a chapter run decided.
struct Summary {
  ChapterInfo info;                 ///< the chapter
  std::vector<DeviceInfo> devices;  ///< the GPUs used (first = --device)
  std::vector<std::string> problems; ///< one line per problem (group) that ran
  std::int64_t size = 0;            ///< --size
  int iters = 0;                    ///< --iters
  int warmup = 0;                   ///< --warmup
  bool flush_l2 = false;            ///< --flush-l2
  std::string label;                ///< --label: the problem shape's name ("" = the default problem)
  std::vector<OptionValue> options; ///< every chapter option as used
  Peak peak;                        ///< the chapter's peak on devices[0]
  std::vector<RowSummary> rows;     ///< in registry order
  std::vector<std::string> extra_columns; ///< names of the extra columns, in first-seen order
  bool show_moved = false;          ///< some row sets Work::hw_bytes
  std::string baseline;             ///< the baseline row's name if it ran
  std::string best;                 ///< the fastest verified version row
  std::string first;                ///< the first verified version row (speedups are over it)
  std::vector<GoalResult> goals;    ///< one per ChapterInfo::goals
  std::vector<std::string> notes;   ///< the chapter's notes of the run (Run::note)
  std::vector<std::string> messages; ///< lines for stdout (mistakes caught, yours not yet)
  std::vector<std::string> errors;  ///< lines for stderr (failures; nothing ran)
  bool aborted = false;             ///< stopped early (unusable GPU context)
  int exit_code = 0;                ///< 0 all verified, 1 a failure, 77 every row was skipped
};

/// Decides everything about a run. Pure: no output, no CUDA. `notes`: the
/// run's notes (Run::notes()).
Summary summarize(const ChapterInfo& info, const Options& opts, const std::vector<DeviceInfo>& devices,
                  const std::vector<std::string>& problems, std::vector<RowResult> rows, bool aborted,
                  const std::vector<std::string>& notes = {});

/// The metric's unit: "GB/s", "TFLOP/s" or "us".
const char* metric_unit(Metric m);

/// Prints the header, table, notes and goals (failures go to `err`).
void print_table(const Summary& s, std::ostream& out, std::ostream& err);

/// The JSON document of a run (schema 3; its fields: docs/results.md).
Json to_json(const Summary& s, const std::string& date);

/// The version of the JSON that to_json() writes (docs/results.md describes
/// it; tools/runs.py refuses any other, and a host test checks every file in
/// docs/results against it).
constexpr int kResultsSchema = 4;

} // namespace steps
