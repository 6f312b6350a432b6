/// @file chapter.hpp
/// @brief The chapter program: one registry of versions drives the CLI
///        (--list, --variant), verification, timing, the table and the JSON.
///
/// A chapter supplies three things:
///  1. a ChapterInfo (number, title, metric, defaults, goal);
///  2. a Problem class that owns the inputs, outputs and CPU reference:
///     @code
///     struct Problem {
///       Problem(const steps::Options&, const steps::DeviceInfo&); // allocate, fill, reference
///       std::string describe() const;                 // "n = 67,108,864 floats (768 MiB)"
///       steps::Work work(const std::string& version) const; // bytes / flops of one run
///       void reset(const std::string& version);       // poison outputs, restore inputs
///       steps::Comparison check(const std::string& version) const; // vs the CPU reference
///     };
///     @endcode
///  3. the registry: a std::vector<steps::Version<Problem>>, in teaching
///     order, each entry a name, one line of what it does, its role and a
///     launch function.
/// run_chapter() does the rest and returns the exit code: 0 all verified,
/// 1 a version failed or a CUDA call failed, 2 usage error, 77 skipped.
#pragma once

#include "steps/cli.hpp"
#include "steps/compare.hpp"
#include "steps/device.hpp"
#include "steps/error.hpp"
#include "steps/memory.hpp"
#include "steps/timing.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <exception>
#include <functional>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <vector>

namespace steps {

/// What a row of the table is.
enum class Role {
  version,  ///< one of the chapter's kernel versions
  baseline, ///< the vendor library or speed-of-light operation the goal is a ratio of
  yours,    ///< your exercise code (shown when the exercise is built; never fails the run)
  mistake,  ///< a deliberately broken version that shows a classic bug being caught;
            ///< runs only with --mistakes or --variant, never fails the run
};

/// What the chapter measures.
enum class Metric {
  bandwidth, ///< GB/s (bytes read + written per second)
  flops,     ///< TFLOP/s
};

/// Work done by one run of a version.
struct Work {
  double bytes = 0;    ///< useful bytes read + written (each input read once, each output written once)
  double flops = 0;    ///< floating-point operations
  double hw_bytes = 0; ///< bytes the memory system really moves (e.g. whole 32-byte sectors for
                       ///< strided access); when any row sets it, the table adds a "moved GB/s" column
};

/// One entry of a chapter's registry.
template <class Problem>
struct Version {
  std::string name;                        ///< CLI name, e.g. "grid_stride"
  std::string what;                        ///< one line: what this version does
  Role role = Role::version;               ///< see Role
  std::function<void(Problem&, cudaStream_t)> launch; ///< one run, enqueued in the stream
};

/// Fixed facts about a chapter program.
struct ChapterInfo {
  std::string number;   ///< "01"
  std::string binary;   ///< "ch01_vector_add"
  std::string title;    ///< "Vector add"
  std::string summary;  ///< paragraph for --help
  Metric metric = Metric::bandwidth; ///< GB/s or TFLOP/s
  std::int64_t default_size = 0;     ///< --size default
  std::string size_help;             ///< --size help line
  int default_iters = 20;            ///< --iters default
  int default_warmup = 3;            ///< --warmup default
  std::string work_note;             ///< how bytes/flops are counted (printed under the table)
  double goal = 0;                   ///< best version / baseline ratio to reach (0 = none)
  std::string goal_text;             ///< e.g. ">= 0.95x cudaMemcpy device-to-device"
  int min_cc_major = 0;              ///< skip (77) below this compute capability
  int min_cc_minor = 0;              ///< (minor part)
  std::string needs;                 ///< what the minimum means: "Hopper (sm_90) tensor cores"
  std::vector<IntOption> int_options;   ///< chapter integer options
  std::vector<FlagOption> flag_options; ///< chapter flags (--mistakes is always there)
};

/// One measured row (filled by run_chapter, reported by report_chapter).
struct RowResult {
  std::string name;             ///< version name
  std::string what;             ///< its description
  Role role = Role::version;    ///< its role
  Work work;                    ///< per run
  bool timed = false;           ///< timing succeeded
  Stats ms;                     ///< milliseconds per run
  bool verified = false;        ///< verification ran and passed
  bool verify_skipped = false;  ///< --no-verify
  std::optional<Comparison> comparison; ///< present when verification ran
  std::string error;            ///< a CUDA error raised while running it
};

/// Builds the parser for a chapter (standard options plus the chapter's own).
Cli make_cli(const ChapterInfo& info);

/// Handles --help and --list and validates --variant names. Returns an exit
/// code to stop with (0 after help/list, 2 on a usage error) or -1 to go on.
int handle_cli(const ChapterInfo& info, const Cli& cli, int argc, const char* const* argv,
               const std::vector<std::pair<std::string, std::string>>& names,
               const std::vector<Role>& roles, Options& out);

/// Checks for a usable GPU of sufficient compute capability, selects it and
/// returns its facts; or returns an exit code (77 skipped, 2 bad --device).
int open_device(const ChapterInfo& info, const Options& opts, DeviceInfo& out);

/// Should this row run, given --variant and --mistakes?
bool selected(const Options& opts, const std::string& name, Role role);

/// Runs one row: verification run (after reset), then timing. CUDA errors are
/// caught into the row; returns false when the device is no longer usable
/// (a sticky error such as an illegal address), so that no more rows run.
bool run_row(RowResult& row, const Options& opts, cudaStream_t stream,
             const std::function<void()>& reset, const std::function<void(cudaStream_t)>& launch,
             const std::function<Comparison()>& check);

/// Prints the table and notes, writes --json, returns the exit code.
int report_chapter(const ChapterInfo& info, const Options& opts, const DeviceInfo& dev,
                   const std::string& problem, const std::vector<RowResult>& rows, bool aborted);

/// Prints "binary: error: what" for an exception escaping a chapter and
/// returns its exit code (1).
int report_exception(const ChapterInfo& info, const std::exception& e);

/// The whole chapter program. Use as `return steps::run_chapter<P>(argc, argv, kInfo, kVersions);`.
template <class Problem>
int run_chapter(int argc, char** argv, const ChapterInfo& info,
                const std::vector<Version<Problem>>& versions) {
  std::vector<std::pair<std::string, std::string>> names;
  std::vector<Role> roles;
  for (const auto& v : versions) {
    names.emplace_back(v.name, v.what);
    roles.push_back(v.role);
  }
  Options opts;
  const Cli cli = make_cli(info);
  if (const int code = handle_cli(info, cli, argc, argv, names, roles, opts); code >= 0) return code;

  try {
    DeviceInfo dev;
    if (const int code = open_device(info, opts, dev); code >= 0) return code;

    Problem problem(opts, dev);
    Stream stream;
    std::vector<RowResult> rows;
    bool aborted = false;
    for (const auto& v : versions) {
      if (!selected(opts, v.name, v.role)) continue;
      RowResult row;
      row.name = v.name;
      row.what = v.what;
      row.role = v.role;
      row.work = problem.work(v.name);
      const bool usable = run_row(
          row, opts, stream, [&] { problem.reset(v.name); },
          [&](cudaStream_t s) { v.launch(problem, s); }, [&] { return problem.check(v.name); });
      rows.push_back(std::move(row));
      if (!usable) {
        aborted = true;
        break;
      }
    }
    return report_chapter(info, opts, dev, problem.describe(), rows, aborted);
  } catch (const std::exception& e) {
    return report_exception(info, e);
  }
}

} // namespace steps
