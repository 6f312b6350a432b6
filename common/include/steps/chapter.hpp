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
///  3. a registry: `steps::group<P>({rows...})` per problem, in teaching
///     order. Each Row names itself, says what it does and what it is (Role),
///     and carries its meaning as functions of its problem:
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
/// run_chapter() does the rest and returns the exit code: 0 all verified,
/// 1 a version failed or a CUDA call failed, 2 usage error, 77 skipped,
/// 3 a run did not finish (watchdog).
#pragma once

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
};

/// A row's name, description and role: what --list shows.
struct RowName {
  std::string name; ///< CLI name
  std::string what; ///< description
  Role role;        ///< role
};

/// Runs one row (verification, then timing) and fills `out`. CUDA errors are
/// caught into the row; returns false when the GPU context is no longer
/// usable (a sticky error such as an illegal address).
bool run_row(RowResult& out, const Options& opts, const ChapterInfo& info, Run& run,
             const std::function<void()>& reset, const std::function<void(cudaStream_t)>& before_each,
             const std::function<void()>& launch, const std::function<Comparison()>& check);

/// Should this row run, given --variant and --mistakes?
bool selected(const Options& opts, const std::string& name, Role role);

/// A type-erased group: the runner sees only this.
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
template <class P>
class Group final : public GroupBase {
public:
  explicit Group(std::vector<Row<P>> rows) : rows_(std::move(rows)) {}

  std::vector<RowName> names() const override {
    std::vector<RowName> out;
    for (const auto& r : rows_) out.push_back({r.name, r.what, r.role});
    return out;
  }

  bool run(const Options& opts, const ChapterInfo& info, Run& run, std::vector<RowResult>& rows,
           std::vector<std::string>& problems) const override {
    bool any = false;
    for (const auto& r : rows_) any = any || selected(opts, r.name, r.role);
    if (!any) return true;
    P problem(opts, run); // only now; a size that does not fit fails here (exit 1, "does not fit")
    const int index = static_cast<int>(problems.size());
    problems.push_back(problem.describe());
    for (const auto& r : rows_) {
      if (!selected(opts, r.name, r.role)) continue;
      RowResult out;
      out.name = r.name;
      out.what = r.what;
      out.role = r.role;
      out.problem = index;
      if (r.work) out.work = r.work(problem);
      if (r.extras) out.extras = r.extras(problem);
      if (r.same_as) out.same_as = r.same_as(problem);
      std::function<void(cudaStream_t)> before;
      if (r.before_each) before = [&](cudaStream_t s) { r.before_each(problem, s); };
      const bool usable = run_row(
          out, opts, info, run, [&] { if (r.reset) r.reset(problem); }, before,
          [&] { r.launch(problem, run); }, [&] { return r.check(problem); });
      rows.push_back(std::move(out));
      if (!usable) return false;
    }
    return true;
  }

private:
  std::vector<Row<P>> rows_;
};
} // namespace detail

/// Makes a group of rows over problem type `P`.
template <class P>
GroupPtr group(std::vector<Row<P>> rows) {
  return std::make_shared<detail::Group<P>>(std::move(rows));
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
