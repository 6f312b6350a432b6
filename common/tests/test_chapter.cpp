// Host tests of the chapter runner's start-up: the registry's names are
// checked (a baseline or goal naming no row stops the program with exit code
// 2 before --help, --list or any GPU work), and --list needs no GPU.
#include "fixtures.hpp"
#include "steps/catch.hpp"
#include "steps/chapter.hpp"

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

// A problem that must never be built here: --list and start-up errors stop first.
struct Never {
  Never(const steps::Options&, steps::Run&) { throw std::logic_error("a problem was built"); }
  std::string describe() const { return "never"; }
};

steps::Row<Never> named(const std::string& name, steps::Role role = steps::Role::version) {
  return steps_test::named_row<steps::Row<Never>>(name, role, "does things");
}

steps::ChapterInfo chapter() {
  steps::ChapterInfo i = steps_test::chapter_99("memcpy");
  i.goals = {{"best", "memcpy", 0.9, ">= 0.90x memcpy"}};
  i.flag_options = {{"--slow-rows", "also the slow rows"}};
  return i;
}

std::vector<steps::GroupPtr> registry() {
  steps::GroupOptions on_request;
  on_request.on_request = "--slow-rows";
  return {steps::group<Never>({named("memcpy", steps::Role::baseline), named("fast")}),
          steps::group<Never>({named("chase", steps::Role::reference)}, on_request)};
}

struct Ran {
  int code;
  std::string out, err;
};

// Runs the chapter program with `args`, capturing stdout and stderr.
Ran run(const steps::ChapterInfo& info, const std::vector<steps::GroupPtr>& groups, std::vector<const char*> args) {
  args.insert(args.begin(), "ch99_test");
  std::ostringstream out, err;
  auto* old_out = std::cout.rdbuf(out.rdbuf());
  auto* old_err = std::cerr.rdbuf(err.rdbuf());
  const int code = steps::run_chapter_groups(static_cast<int>(args.size()), const_cast<char**>(args.data()), info, groups);
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  return {code, out.str(), err.str()};
}

std::vector<steps::RowName> names(const std::vector<steps::GroupPtr>& groups) {
  std::vector<steps::RowName> out;
  for (const auto& g : groups)
    for (auto& n : g->names()) out.push_back(n);
  return out;
}

} // namespace

TEST_CASE("chapter: the registry's names are checked", "[chapter]") {
  const auto rows = names(registry());
  CHECK(steps::check_names(chapter(), rows).empty());

  auto goal = chapter();
  goal.goals.push_back({"fast", "cublas", 1.0, ">= 1x cublas"});
  CHECK(steps::check_names(goal, rows) == "goal '>= 1x cublas' names row 'cublas', which the registry does not have");
  auto numerator = chapter();
  numerator.goals.push_back({"fastest", "memcpy", 1.0, ">= 1x memcpy"});
  CHECK(steps::check_names(numerator, rows).find("row 'fastest'") != std::string::npos);
  auto base = chapter();
  base.baseline = "cudaMemcpy";
  CHECK(steps::check_names(base, rows) == "the baseline names row 'cudaMemcpy', which the registry does not have");
  auto twice = rows;
  twice.push_back(rows[1]);
  CHECK(steps::check_names(chapter(), twice) == "two rows of the registry are named 'fast'");
  auto shape = chapter();
  shape.goals.push_back({"fast", "memcpy", 1.0, ">= 1x memcpy at K = 1"});
  shape.goals.back().shape = "K = 1";
  CHECK(steps::check_names(shape, rows) == "goal '>= 1x memcpy at K = 1' needs both a shape name and a test of the "
                                           "options (Goal::shape, Goal::at_shape)");
  shape.goals.back().at_shape = [](const steps::Options&) { return true; };
  CHECK(steps::check_names(shape, rows).empty());
  auto flag = chapter();
  flag.flag_options.clear();
  CHECK(steps::check_names(flag, rows) ==
        "row 'chase' runs on request of '--slow-rows', which is not a flag of the chapter");
}

TEST_CASE("chapter: a goal naming a missing row stops the program with exit code 2", "[chapter]") {
  auto info = chapter();
  info.goals.push_back({"best", "cublas", 1.0, ">= 1x cublas"});
  for (const auto& args : std::vector<std::vector<const char*>>{{}, {"--list"}, {"--help"}}) {
    const Ran r = run(info, registry(), args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "ch99_test: error: goal '>= 1x cublas' names row 'cublas', which the registry does not have\n");
  }
}

TEST_CASE("chapter: --list needs no GPU, one row per line, its name first", "[chapter]") {
  const Ran r = run(chapter(), registry(), {"--list"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  std::istringstream lines(r.out);
  std::vector<std::string> first;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string word;
    words >> word;
    first.push_back(word);
  }
  CHECK(first == std::vector<std::string>{"memcpy", "fast", "chase"});
  CHECK(r.out.find("memcpy memcpy does things [baseline]") != std::string::npos);
  CHECK(r.out.find("[on request: --slow-rows]") != std::string::npos);
}

TEST_CASE("chapter: a bad option is exit code 2 before any GPU work", "[chapter]") {
  const Ran r = run(chapter(), registry(), {"--frobnicate"});
  CHECK(r.code == 2);
  CHECK(r.err == "ch99_test: error: unknown option '--frobnicate' (see --help)\n");
  const Ran v = run(chapter(), registry(), {"--variant", "slowest"});
  CHECK(v.code == 2);
  CHECK(v.err.find("no version named 'slowest'") != std::string::npos);
}
