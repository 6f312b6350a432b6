// Grader for exercise 08 (the pipeline). Built twice: against your
// exercises/ code (./tutorial grade 08) and against the solution (part of
// ./tutorial test).
//
// A race in a pipeline shows only when the timing is unlucky, so this grader
// does not rely on timing. For every shape it
//   1. checks that input() and output() are pinned memory (a copy from
//      pageable memory is staged by the driver and overlaps nothing: right
//      results, no pipeline), with cudaPointerGetAttributes;
//   2. RECORDS your run() with stream capture (cudaStreamBeginCapture on
//      origin: nothing runs, every operation becomes a node of a CUDA graph
//      and every wait an edge) and checks that graph for every possible
//      order at once (graph_check.hpp): no two operations on the same bytes
//      without an order between them, device memory used only between its
//      cudaMallocAsync and its cudaFreeAsync, each chunk's data flowing
//      input copy -> kernel -> output copy, every forked stream joined back,
//      and with 2+ streams, consecutive chunks free to overlap;
//   3. RUNS it twice, each time on a non-blocking origin with work still
//      pending ahead of the call (the grader's, which finishes writing the
//      input), and checks every output element exactly, that nothing past n
//      was written and that the input did not change.
#include "graph_check.hpp"
#include "pipeline.hpp"
#include "recorded.hpp"

#include "steps/catch.hpp"
#include "steps/compare.hpp"
#include "steps/error.hpp"
#include "steps/grade.hpp"
#include "steps/handle.hpp"
#include "steps/memory.hpp"
#include "steps/random.hpp"
#include "steps/timing.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace check = ex08::check;
namespace recorded = ex08::recorded;

using recorded::Shape;

std::string run_shape(const Shape& s, std::uint64_t seed) {
  ex08::Pipeline p(s.n + s.extra, s.streams);
  recorded::GraphChecks checks;
  checks.stage = ex08::process_kernel();
  checks.foreign = "a kernel other than the given one (launch the stage only through ex08::process)";
  checks.unjoined =
      "a stream that waited for origin (a fork) was never joined back: origin must wait for an event recorded at "
      "the end of every stream you use, before run() returns. Otherwise the caller, who waits for origin only, "
      "may read the output before your last copies have landed.";
  checks.check = check::analyse;
  // Steps 1 to 3 (above): pinned memory, the recorded graph, two real runs.
  return recorded::grade_shape(p, s, seed, checks);
}

void grade(const std::vector<Shape>& shapes) { steps::grade::shapes(shapes, recorded::name_of, run_shape, recorded::capture_hint); }

} // namespace

TEST_CASE("pipeline on small and odd shapes", "[pipeline]") {
  grade({{0, 4, 2, 3, "n = 0: nothing to do"},
         {1, 1, 1, 1, "one element, one chunk, one stream"},
         {1, 4, 3, 2, "one element in 4 chunks (3 of them empty)"},
         {5, 8, 2, 3, "fewer elements than chunks"},
         {7, 7, 7, 1, "one element per chunk, one stream per chunk"},
         {1000, 7, 3, 5, "7 chunks do not divide 1000: the last one is shorter"},
         {1000, 3, 8, 1, "more streams than chunks"},
         {4099, 16, 4, 1, "prime n"},
         {65537, 2, 2, 7, "two chunks, two streams"},
         {100003, 64, 4, 3, "64 chunks in 4 streams: each stream reuses its buffers 16 times"},
         {100003, 10, 1, 2, "one stream: nothing can overlap, still correct"}});
}

// Large shapes (more data per chunk than a block touches): kept out of the
// compute-sanitizer pass, which the small shapes above go through.
TEST_CASE("pipeline on large shapes", "[pipeline][large]") {
  grade({{(std::size_t{1} << 22) + 3, 32, 4, 5, ""},
         {(std::size_t{1} << 24) + 1, 9, 3, 1, "a last chunk of a few elements"},
         {(std::size_t{1} << 26) + 7, 64, 8, 3, "256 MiB each way"}});
}

TEST_CASE("pipeline speed", "[.speed]") {
  const std::size_t n = std::size_t{1} << 26;
  REQUIRE(run_shape({n, 32, 4, 1, ""}, 99).empty());
  ex08::Pipeline p(n, 4);
  recorded::speed(p, n, 32, "pipeline, 2^26 floats in 32 chunks over 4 streams (bytes both ways)");
}
