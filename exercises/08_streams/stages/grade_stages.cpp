// Grader for exercise 08's stretch (one stream per stage). Built twice:
// against your exercises/ code (./tutorial grade 08 stages) and against the
// solution (part of ./tutorial test).
//
// As in the first exercise, it RECORDS your run() with stream capture and
// checks the graph for every order the GPU may choose (../graph_check.hpp:
// races, stream-ordered memory, each chunk's data flow, fork and join,
// consecutive chunks free to overlap). Then it checks what makes the stage
// design faster (stages_check.hpp): no input copy waits for any kernel or output copy, and no
// kernel waits for any output copy, so the input engine and the SMs never
// idle behind a later stage. Then it RUNS it twice per shape and checks
// every output element exactly, that nothing past n was written and that the
// input did not change.
#include "../recorded.hpp"
#include "stages.hpp"
#include "stages_check.hpp"

#include "steps/catch.hpp"
#include "steps/grade.hpp"
#include "steps/random.hpp"
#include "steps/timing.hpp"

#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace check = ex08::check;
namespace recorded = ex08::recorded;

struct Shape {
  std::size_t n;
  int chunks;
  std::size_t extra; ///< capacity = n + extra (>= 1): output past n must stay untouched
  std::string what;
};

std::string name_of(const Shape& s) {
  std::ostringstream os;
  os << "n = " << s.n << ", " << s.chunks << " chunks";
  if (!s.what.empty()) os << ": " << s.what;
  return os.str();
}

/// Records run() and checks the graph: graph_check's checks, then the stages'. "" when right.
std::string record(ex08::stages::StagePipeline& p, const Shape& s, cudaStream_t origin) {
  steps::Graph graph;
  const std::string failed = recorded::record(
      [&] { p.run(s.n, s.chunks, origin); }, origin, graph,
      "a stream that waited for origin (directly or through an event) was never joined back: origin must wait "
      "for an event recorded at the end of each of your three streams before run() returns.");
  if (!failed.empty()) return failed;
  check::Job job;
  job.input = recorded::bytes_of(p.input(), (s.n + s.extra) * sizeof(float));
  job.output = recorded::bytes_of(p.output(), (s.n + s.extra) * sizeof(float));
  job.n = s.n;
  job.chunks = s.chunks;
  job.streams = 3;
  const check::Graph g = recorded::read_graph(
      graph, ex08::stages::process_kernel(),
      "a kernel other than the given one (launch it only through ex08::stages::process)");
  std::string bad = check::analyse(g, job);
  if (bad.empty() && s.n > 0) bad = check::stages_apart(g, job);
  if (!bad.empty())
    return "in the work your run() enqueues (recorded, not run: checked for every order the GPU may choose): " + bad;
  return "";
}

std::string run_shape(const Shape& s, std::uint64_t seed) {
  const std::size_t capacity = s.n + s.extra;
  ex08::stages::StagePipeline p(capacity);
  if (std::string bad = recorded::not_pinned(p.input(), p.output()); !bad.empty()) return bad;
  std::vector<float> x(capacity);
  steps::fill_uniform(x.data(), capacity, seed);
  std::memcpy(p.input(), x.data(), capacity * sizeof(float));
  {
    steps::Stream origin(cudaStreamNonBlocking);
    if (std::string bad = record(p, s, origin); !bad.empty()) return bad;
  }
  const std::size_t len = s.n ? ex08::chunk_range(s.n, s.chunks, 0).count : 1;
  return recorded::two_runs([&](cudaStream_t origin) { p.run(s.n, s.chunks, origin); }, p.input(), p.output(), x,
                            s.n, len);
}

void grade(const std::vector<Shape>& shapes) { steps::grade::shapes(shapes, name_of, run_shape, recorded::capture_hint); }

} // namespace

TEST_CASE("stage pipeline on small and odd shapes", "[stages]") {
  grade({{0, 4, 3, "n = 0: nothing to do"},
         {1, 1, 1, "one element, one chunk"},
         {1, 4, 2, "one element in 4 chunks (3 of them empty)"},
         {5, 8, 3, "fewer elements than chunks"},
         {7, 7, 1, "one element per chunk"},
         {1000, 7, 5, "7 chunks do not divide 1000: the last one is shorter"},
         {4099, 16, 1, "prime n"},
         {65537, 2, 7, "two chunks"},
         {100003, 64, 3, "64 chunks: 128 events"}});
}

TEST_CASE("stage pipeline on large shapes", "[stages][large]") {
  grade({{(std::size_t{1} << 22) + 3, 32, 5, ""},
         {(std::size_t{1} << 24) + 1, 9, 1, "a last chunk of a few elements"},
         {(std::size_t{1} << 26) + 7, 64, 3, "256 MiB each way"}});
}

TEST_CASE("stage pipeline speed", "[.speed]") {
  const std::size_t n = std::size_t{1} << 26;
  REQUIRE(run_shape({n, 32, 1, ""}, 99).empty());
  ex08::stages::StagePipeline p(n);
  steps::fill_uniform(p.input(), n, 5);
  steps::TimingOptions opts;
  opts.iters = 10;
  const auto ms = steps::time_gpu([&](cudaStream_t s) { p.run(n, 32, s); }, opts);
  steps::grade::report_speed("stage pipeline, 2^26 floats in 32 chunks (bytes both ways)", ms,
                             8.0 * static_cast<double>(n));
}
