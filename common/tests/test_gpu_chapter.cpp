// GPU tests of the runner's extension points, through a whole chapter
// program on a toy problem: groups and rows skipped by their preconditions,
// the hooks and their order, on-request groups, notes, and one row's state.
#include "fixtures.hpp"
#include "steps/catch.hpp"
#include "steps/chapter.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::vector<std::string> events; // what happened, in order

// A toy problem: one int on the GPU that every run sets.
struct Toy {
  Toy(const steps::Options&, steps::Run&) : value(1) { events.push_back("built"); }
  ~Toy() { events.push_back("freed"); }
  std::string describe() const { return "toy"; }
  steps::DeviceBuffer<int> value;
};

// Counts its own runs; says when it is made and freed.
struct Counter {
  Counter() { events.push_back("state made"); }
  ~Counter() { events.push_back("state freed after " + std::to_string(runs) + " runs"); }
  int runs = 0;
};

steps::Row<Toy> toy_row(const std::string& name, steps::Role role = steps::Role::version) {
  auto r = steps_test::named_row<steps::Row<Toy>>(name, role, "sets one int");
  r.launch = [name](Toy& p, steps::Run& run) {
    CUDA_CHECK(cudaMemsetAsync(p.value.data(), 0, sizeof(int), run.stream()));
    ++run.row_state<Counter>().runs;
    run.row_note("launched by " + name); // every run: kept once
  };
  r.work = [](const Toy&) { return steps::Work{4}; };
  r.check = [](Toy&) { return steps::Comparison{}; };
  return r;
}

steps::ChapterInfo chapter() {
  steps::ChapterInfo i = steps_test::chapter_99("base");
  i.default_size = 1;
  i.default_iters = 3;
  i.default_warmup = 1;
  i.flag_options = {{"--extra", "also the extra rows"}};
  i.before = [](const steps::Options&, steps::Run& run) {
    events.push_back("chapter before");
    run.note("a note of the run");
  };
  return i;
}

std::vector<steps::GroupPtr> registry() {
  steps::GroupOptions first;
  first.before = [](const steps::Options&, steps::Run& run) {
    events.push_back("group before");
    run.note("group 1 ran");
  };
  steps::Row<Toy> shaped = toy_row("shaped");
  shaped.unavailable = [](const Toy&, const steps::Run&) { return std::string("not for this shape"); };
  steps::GroupOptions gone;
  gone.unavailable = [](const steps::Options&, const steps::Run&) { return std::string("needs 9 GPUs"); };
  gone.before = [](const steps::Options&, steps::Run&) { events.push_back("gone before (never)"); };
  steps::GroupOptions extra;
  extra.on_request = "--extra";
  return {steps::group<Toy>({toy_row("base", steps::Role::baseline), shaped, toy_row("fast")}, first),
          steps::group<Toy>({toy_row("far"), toy_row("farther")}, gone),
          steps::group<Toy>({toy_row("extra_row")}, extra)};
}

struct Ran {
  int code;
  std::string out, json;
};

Ran run(std::vector<const char*> args) {
  events.clear();
  const std::string json = "steps_test_gpu_chapter.json";
  args.insert(args.begin(), "ch99_test");
  args.push_back("--json");
  args.push_back(json.c_str());
  std::ostringstream out;
  auto* old = std::cout.rdbuf(out.rdbuf());
  const int code = steps::run_chapter_groups(static_cast<int>(args.size()), const_cast<char**>(args.data()), chapter(),
                                             registry());
  std::cout.rdbuf(old);
  std::ifstream f(json);
  std::stringstream text;
  text << f.rdbuf();
  std::remove(json.c_str());
  return {code, out.str(), text.str()};
}

} // namespace

TEST_CASE("chapter: hooks, skipped rows and groups, notes and row state", "[gpu][chapter]") {
  const Ran r = run({});
  CHECK(r.code == 0);
  // 1 verification run + 1 warm-up + 3 timed runs per row; a state per row.
  CHECK(events == std::vector<std::string>{"chapter before", "group before", "built", "state made",
                                           "state freed after 5 runs", "state made", "state freed after 5 runs",
                                           "freed"});
  CHECK(r.json.find("\"schema\": " + std::to_string(steps::kResultsSchema)) != std::string::npos);
  CHECK(r.json.find("\"machine\": \"" + steps::machine_name(steps::query_device(0), 1) + "\"") != std::string::npos);
  CHECK(r.json.find("\"notes\": [\n    \"a note of the run\",\n    \"group 1 ran\"\n  ]") != std::string::npos);
  CHECK(r.json.find("\"notes\": [\n        \"launched by fast\"\n      ]") != std::string::npos);
  CHECK(r.json.find("\"skipped\": \"not for this shape\"") != std::string::npos);
  CHECK(r.json.find("\"skipped\": \"needs 9 GPUs\"") != std::string::npos);
  CHECK(r.json.find("extra_row") == std::string::npos); // on request only
  CHECK(r.json.find("\"extra\": false") != std::string::npos);
  CHECK(r.out.find("far ") != std::string::npos);
  CHECK(r.out.find("skipped: needs 9 GPUs") != std::string::npos);
  CHECK(r.out.find("fast: launched by fast") != std::string::npos);
}

TEST_CASE("chapter: an on-request group runs with its flag or by name", "[gpu][chapter]") {
  const Ran flag = run({"--extra"});
  CHECK(flag.code == 0);
  CHECK(flag.json.find("\"name\": \"extra_row\"") != std::string::npos);
  CHECK(flag.json.find("\"extra\": true") != std::string::npos);
  const Ran named = run({"--variant", "extra_row"});
  CHECK(named.code == 0);
  CHECK(named.json.find("\"name\": \"extra_row\"") != std::string::npos);
  CHECK(named.json.find("\"name\": \"base\"") == std::string::npos);
}

TEST_CASE("chapter: a run whose every row is skipped exits 77, and builds nothing", "[gpu][chapter]") {
  const Ran r = run({"--variant", "far,farther"});
  CHECK(r.code == 77);
  CHECK(events == std::vector<std::string>{"chapter before"});
  CHECK(r.json.find("\"problem\": null") != std::string::npos);
}
