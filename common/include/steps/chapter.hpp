/// @file chapter.hpp
/// @brief The chapter program: typed groups of rows, each row carrying its
///        own work, check and launch; one runner for the CLI (--list,
///        --variant), verification, timing, the table and the JSON.
///
/// A chapter supplies:
///  1. a ChapterInfo (summary.hpp): metric, defaults, baseline, goals, peak;
///  2. one or more problem types `P`, each owning the inputs, outputs and
///     reference of some rows, built from `(const steps::Options&, steps::Run&)`
///     and with a `std::string describe() const`;
///  3. a registry: `steps::group<P>({rows...}, options)` per problem, in
///     teaching order. Each Row names itself, says what it does and what it
///     is (Role), and carries its meaning as functions of its problem:
///     @code
///     steps::Row<VectorAdd> r;
///     r.name = "float4"; r.what = "v3: ..."; r.role = steps::Role::version;
///     r.launch = [](VectorAdd& p, steps::Run& run) { v3::launch(..., run.stream()); };
///     r.work   = [](const VectorAdd& p) { return steps::Work{12.0 * p.n()}; };
///     r.check  = [](VectorAdd& p) { return p.check_sum(); };
///     r.reset  = [](VectorAdd& p) { p.poison_output(); };          // before the verification run
///     r.before_each = [](VectorAdd& p, cudaStream_t s) { ... };    // untimed, before every run
///     @endcode
///     Nothing is decoded from a name: renaming a row cannot change how it
///     is verified. A problem is built only when one of its rows is selected,
///     and freed before the next problem is built.
///
/// The extension points (CONTRIBUTING.md, "Extension points"), instead of
/// chapter-local group classes:
///  - Row::unavailable: why this row cannot run here (this shape, this GPU,
///    too few GPUs); the row is listed as skipped with the reason;
///  - GroupOptions::on_request: a group that runs only with a flag (or when
///    --variant names one of its rows);
///  - GroupOptions::unavailable: why the whole group cannot run here, asked
///    before its problem is built;
///  - GroupOptions::before and ChapterInfo::before: hooks before a group's
///    problem is built, and before the first group;
///  - Run::note (a line of the run) and Run::row_note (a line of the row
///    running now): printed under the table and written to the JSON;
///  - Run::row_state<S>(): state one row keeps across its runs (a plan made
///    on first use), freed when the row is done.
///
/// run_chapter() does the rest and returns the exit code: 0 all verified,
/// 1 a version failed or a CUDA call failed, 2 usage error (or a baseline or
/// goal naming no row of the registry), 77 skipped (no usable GPU, or every
/// selected row skipped), 3 a run did not finish (watchdog).
#pragma once

#include "steps/arch.hpp"
#include "steps/cli.hpp"
#include "steps/compare.hpp"
#include "steps/device.hpp"
#include "steps/error.hpp"
#include "steps/memory.hpp"
#include "steps/run.hpp"
#include "steps/summary.hpp"
#include "steps/timing.hpp"

#include <cuda_runtime.h>

#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace steps {

/// One row of a chapter's registry, over problem type `P`.
template <class P>
struct Row {
  std::string name;          ///< CLI name, e.g. "grid_stride" (a label only)
  std::string what;          ///< one line: what this row does
  Role role = Role::version; ///< see Role
  /// One run, enqueued in run.stream() (or forked from it and joined back).
  std::function<void(P&, Run&)> launch;
  /// Useful work of one run (bytes, flops).
  std::function<Work(const P&)> work;
  /// Verification after one run: compare with the reference. Required.
  std::function<Comparison(P&)> check;
  /// Before the verification run: poison outputs, restore inputs (optional).
  std::function<void(P&)> reset;
  /// Untimed work before every run, timed or not (optional): zero an
  /// atomic's target, restore an in-place input.
  std::function<void(P&, cudaStream_t)> before_each;
  /// Named extra columns (optional): registers per thread, occupancy...
  std::function<std::vector<Extra>(const P&)> extras;
  /// The name of another row whose kernel this row runs on this problem, or
  /// "" (optional; asked before the row runs). A version that falls back to
  /// another one (chapter 10's split K when the tiles fill the GPU runs v4)
  /// is still verified and timed, but is not ranked when that row ran too:
  /// one kernel gets one chance at "best", not two.
  std::function<std::string(P&)> same_as;
  /// Why this row cannot run here ("" = it can): this shape, this GPU, the
  /// number of GPUs (optional). Asked after the problem is built, before the
  /// row runs. A skipped row is shown with its reason in the table and in the
  /// JSON ("skipped": reason), never fails the run, and a goal that needs it
  /// reads "not measured (skipped: reason)".
  std::function<std::string(const P&, const Run&)> unavailable;
  /// What the row needs from the GPU and from the binary (optional):
  /// features from the architecture table (steps/arch.hpp) and a kernel of
  /// the row whose code must be in the binary for this GPU. Shown by --list;
  /// asked before the problem is built. A GPU without a feature, or a binary
  /// whose code for this GPU compiled the kernel's body out, skips the row
  /// with the reason ("needs TMA (sm_90 or newer); this GPU is sm_86",
  /// "built for sm_80 ...; rebuild with CMAKE_CUDA_ARCHITECTURES=89").
  Needs needs;
};

/// How a group runs (all optional): `steps::group<P>(rows, options)`.
struct GroupOptions {
  /// A chapter flag such as "--littles-law" (ChapterInfo::flag_options): the
  /// group runs only with it, or when --variant names one of its rows. For
  /// rows too slow or too special for the default table.
  std::string on_request;
  /// Why the whole group cannot run here ("" = it can), asked BEFORE its
  /// problem is built: fewer GPUs than the problem needs, a compute
  /// capability below what its kernels need. Its selected rows are listed as
  /// skipped with the reason.
  std::function<std::string(const Options&, const Run&)> unavailable;
  /// Runs before the group's problem is built (and only when it will be):
  /// set a device limit, enable peer access. May add Run::note lines.
  std::function<void(const Options&, Run&)> before;
};

/// A row's name, description and role: what --list shows.
struct RowName {
  std::string name; ///< CLI name
  std::string what; ///< description
  Role role;        ///< role
  std::string on_request; ///< the flag its group needs (GroupOptions::on_request), or ""
  std::string needs = {};  ///< what it needs (Row::needs.describe()), or ""
};

/// The one-line error for a registry whose names do not add up ("" when they
/// do): ChapterInfo::baseline and every goal's rows (other than "best") must
/// name a row, row names must be unique, and an on-request flag must be one
/// of the chapter's flags. run_chapter() checks it first, before --help,
/// --list or any GPU work, and exits 2 with it.
std::string check_names(const ChapterInfo& info, const std::vector<RowName>& names);

/// Runs one row (verification, then timing) and fills `out`. CUDA errors are
/// caught into the row; returns false when the GPU context is no longer
/// usable (a sticky error such as an illegal address).
bool run_row(RowResult& out, const Options& opts, const ChapterInfo& info, Run& run,
             const std::function<void()>& reset, const std::function<void(cudaStream_t)>& before_each,
             const std::function<void()>& launch, const std::function<Comparison()>& check);

/// Should this row run, given --variant and --mistakes?
bool selected(const Options& opts, const std::string& name, Role role);

/// A type-erased group: the runner sees only this. Chapters do not subclass
/// it: what a group needs beyond its rows is a GroupOptions.
class GroupBase {
public:
  virtual ~GroupBase() = default;
  /// The rows' names, for --list and --variant.
  virtual std::vector<RowName> names() const = 0;
  /// Builds the problem if any row is selected, runs the selected rows, then
  /// frees the problem. Appends to `rows` and `problems`; returns false when
  /// the GPU context is unusable.
  virtual bool run(const Options& opts, const ChapterInfo& info, Run& run, std::vector<RowResult>& rows,
                   std::vector<std::string>& problems) const = 0;
};

/// A shared pointer to a group (the registry is a vector of these).
using GroupPtr = std::shared_ptr<const GroupBase>;

namespace detail {

/// A selected row: its result so far, and whether it may run.
RowResult start_row(const std::string& name, const std::string& what, Role role, int problem);

/// Should the group run at all (its on-request flag given, or --variant)?
bool requested(const Options& opts, const GroupOptions& options);

/// Keeps Run's "row running now" for one row: the row's notes and state
/// live from its construction to its destruction (even on an exception).
class RowScope {
public:
  RowScope(Run& run, RowResult& out) : run_(run), out_(out) { run_.begin_row(out_.name); }
  ~RowScope() { out_.notes = run_.end_row(); }
  RowScope(const RowScope&) = delete;
  RowScope& operator=(const RowScope&) = delete;

private:
  Run& run_;
  RowResult& out_;
};

template <class P>
class Group final : public GroupBase {
public:
  Group(std::vector<Row<P>> rows, GroupOptions options) : rows_(std::move(rows)), options_(std::move(options)) {}

  std::vector<RowName> names() const override {
    std::vector<RowName> out;
    for (const auto& r : rows_) out.push_back({r.name, r.what, r.role, options_.on_request, r.needs.describe()});
    return out;
  }

  bool run(const Options& opts, const ChapterInfo& info, Run& run, std::vector<RowResult>& rows,
           std::vector<std::string>& problems) const override {
    std::vector<const Row<P>*> chosen;
    for (const auto& r : rows_)
      if (selected(opts, r.name, r.role)) chosen.push_back(&r);
    if (chosen.empty() || !requested(opts, options_)) return true;
    if (options_.unavailable) {
      if (const std::string why = options_.unavailable(opts, run); !why.empty()) {
        for (const Row<P>* r : chosen) {
          rows.push_back(start_row(r->name, r->what, r->role, -1)); // no problem was built
          rows.back().skipped = why;
        }
        return true;
      }
    }
    // Rows this GPU or this binary cannot serve are skipped before the
    // problem is built (none is built when no row is left).
    std::vector<std::string> unmet_why;
    bool any_left = false;
    for (const Row<P>* r : chosen) {
      unmet_why.push_back(r->needs.empty() ? std::string() : unmet(r->needs, run.device()));
      any_left = any_left || unmet_why.back().empty();
    }
    if (!any_left) {
      for (std::size_t i = 0; i < chosen.size(); ++i) {
        rows.push_back(start_row(chosen[i]->name, chosen[i]->what, chosen[i]->role, -1));
        rows.back().skipped = unmet_why[i];
      }
      return true;
    }
    if (options_.before) options_.before(opts, run);
    P problem(opts, run); // only now; a size that does not fit fails here (exit 1, "does not fit")
    const int index = static_cast<int>(problems.size());
    problems.push_back(problem.describe());
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      const Row<P>& r = *chosen[i];
      RowResult out = start_row(r.name, r.what, r.role, index);
      out.skipped = unmet_why[i];
      if (out.skipped.empty() && r.unavailable) out.skipped = r.unavailable(problem, run);
      if (!out.skipped.empty()) {
        rows.push_back(std::move(out));
        continue;
      }
      if (r.work) out.work = r.work(problem);
      if (r.extras) out.extras = r.extras(problem);
      if (r.same_as) out.same_as = r.same_as(problem);
      std::function<void(cudaStream_t)> before;
      if (r.before_each) before = [&](cudaStream_t s) { r.before_each(problem, s); };
      bool usable = true;
      {
        RowScope scope(run, out);
        usable = run_row(
            out, opts, info, run, [&] { if (r.reset) r.reset(problem); }, before,
            [&] { r.launch(problem, run); }, [&] { return r.check(problem); });
      }
      rows.push_back(std::move(out));
      if (!usable) return false;
    }
    return true;
  }

private:
  std::vector<Row<P>> rows_;
  GroupOptions options_;
};
} // namespace detail

/// Makes a group of rows over problem type `P` (GroupOptions: on request,
/// unavailable here, a hook before its problem is built).
template <class P>
GroupPtr group(std::vector<Row<P>> rows, GroupOptions options = {}) {
  return std::make_shared<detail::Group<P>>(std::move(rows), std::move(options));
}

/// A row with what every row has: its name, description, role, one run
/// (`launch`) and the work of that run. A chapter's row builders start from
/// it and add the check (required) and what else the row needs (reset,
/// extras...).
template <class P>
Row<P> make_row(std::string name, std::string what, Role role, std::function<void(P&, Run&)> launch,
                std::function<Work(const P&)> work) {
  Row<P> r;
  r.name = std::move(name);
  r.what = std::move(what);
  r.role = role;
  r.launch = std::move(launch);
  r.work = std::move(work);
  return r;
}

/// The vendor's copy as a row named "memcpy", the baseline of the
/// memory-bound chapters: cudaMemcpyAsync device-to-device of `bytes(p)`
/// bytes from `src(p)` to `dst(p)` in run.stream(). Work: every byte read
/// once and written once (2 x bytes). `check` compares the destination with
/// the source; `reset` (optional) runs before the verification run. Change
/// anything else on the row it returns (hw_bytes in `work`, `what`).
template <class P>
Row<P> memcpy_row(std::string what, std::function<void*(P&)> dst, std::function<const void*(P&)> src,
                  std::function<std::size_t(const P&)> bytes, std::function<Comparison(P&)> check,
                  std::function<void(P&)> reset = {}) {
  Row<P> r = make_row<P>(
      "memcpy", std::move(what), Role::baseline,
      [dst, src, bytes](P& p, Run& run) {
        CUDA_CHECK(cudaMemcpyAsync(dst(p), src(p), bytes(p), cudaMemcpyDeviceToDevice, run.stream()));
      },
      [bytes](const P& p) { return Work{2.0 * static_cast<double>(bytes(p))}; });
  r.check = std::move(check);
  r.reset = std::move(reset);
  return r;
}

/// The whole chapter program:
/// `return steps::run_chapter(argc, argv, info(), {steps::group<P>(rows), ...});`
/// `info.number`, `.binary` and `.title` default to the manifest's values,
/// which CMake passes as STEPS_CHAPTER_NUMBER / _BINARY / _TITLE.
int run_chapter_groups(int argc, char** argv, ChapterInfo info, const std::vector<GroupPtr>& groups);

/// @copydoc run_chapter_groups
inline int run_chapter(int argc, char** argv, ChapterInfo info, const std::vector<GroupPtr>& groups) {
#ifdef STEPS_CHAPTER_NUMBER
  if (info.number.empty()) info.number = STEPS_CHAPTER_NUMBER;
  if (info.binary.empty()) info.binary = STEPS_CHAPTER_BINARY;
  if (info.title.empty()) info.title = STEPS_CHAPTER_TITLE;
#endif
  return run_chapter_groups(argc, argv, std::move(info), groups);
}

} // namespace steps
