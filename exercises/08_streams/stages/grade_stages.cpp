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

using recorded::Shape;

/// The graph checks: graph_check's, then the stages' (stages_check.hpp).
std::string check_stages(const check::Graph& g, const check::Job& job) {
  std::string bad = check::analyse(g, job);
  if (bad.empty() && job.n > 0) bad = check::stages_apart(g, job);
  return bad;
}

std::string run_shape(const Shape& s, std::uint64_t seed) {
  ex08::stages::StagePipeline p(s.n + s.extra);
  recorded::GraphChecks checks;
  checks.stage = ex08::stages::process_kernel();
  checks.foreign = "a kernel other than the given one (launch it only through ex08::stages::process)";
  checks.unjoined = "a stream that waited for origin (directly or through an event) was never joined back: origin "
                    "must wait for an event recorded at the end of each of your three streams before run() returns.";
  checks.check = check_stages;
  return recorded::grade_shape(p, s, seed, checks);
}

/// A shape of this exercise: n elements in `chunks` chunks, in host buffers
/// of n + extra floats; always three streams, one per stage.
struct StageShape {
  std::size_t n;
  int chunks;
  std::size_t extra;
  std::string what;
};

void grade(const std::vector<StageShape>& stage_shapes) {
  std::vector<Shape> shapes;
  for (const StageShape& s : stage_shapes) shapes.push_back({s.n, s.chunks, 3, s.extra, s.what});
  steps::grade::shapes(shapes, recorded::name_of, run_shape, recorded::capture_hint);
}

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
  REQUIRE(run_shape({n, 32, 3, 1, ""}, 99).empty());
  ex08::stages::StagePipeline p(n);
  recorded::speed(p, n, 32, "stage pipeline, 2^26 floats in 32 chunks (bytes both ways)");
}
