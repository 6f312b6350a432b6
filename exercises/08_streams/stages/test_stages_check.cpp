// Host test of the stretch's stage check (stages_check.hpp), on graphs built
// by hand the way stream capture records the solution and its
// copies-share-a-stream mutant (no GPU needed).
#include "stages_check.hpp"

#include "steps/catch.hpp"

#include <cstdint>
#include <vector>

namespace {

using namespace ex08::check;

constexpr std::uintptr_t kInput = 0x10000000, kOutput = 0x20000000, kDevice = 0x30000000;

Range floats(std::uintptr_t base, std::size_t begin, std::size_t count) {
  return {base + begin * 4, base + (begin + count) * 4};
}

enum class Design {
  stages,        ///< the solution: 1 input copies, 2 kernels, 3 output copies
  copies_shared, ///< the mutant: the output copies in stream 1 too
  per_chunk,     ///< the first exercise's design over 3 streams: chunk c all in stream 1 + c % 3
};

/// n floats in `chunks` equal chunks; stream 0 is origin. Each stream is a
/// chain; events are edges.
Graph record(std::size_t n, int chunks, Design design, Job& job) {
  Graph g;
  std::vector<long> last(4, -1);
  auto add = [&](int s, Node v, std::vector<std::size_t> waits) {
    const std::size_t i = g.nodes.size();
    g.nodes.push_back(std::move(v));
    if (last[static_cast<std::size_t>(s)] >= 0) g.edges.push_back({static_cast<std::size_t>(last[static_cast<std::size_t>(s)]), i});
    for (auto w : waits) g.edges.push_back({w, i});
    last[static_cast<std::size_t>(s)] = static_cast<long>(i);
    return i;
  };
  const std::size_t len = n / static_cast<std::size_t>(chunks);
  const std::size_t alloc = add(0, {Kind::alloc, {}, {floats(kDevice, 0, 2 * n)}, ""}, {});
  std::vector<std::size_t> ends;
  for (int c = 0; c < chunks; ++c) {
    const std::size_t b = static_cast<std::size_t>(c) * len;
    const int lane = 1 + c % 3;
    const int in = design == Design::per_chunk ? lane : 1, compute = design == Design::per_chunk ? lane : 2;
    const int out = design == Design::per_chunk ? lane : design == Design::copies_shared ? 1 : 3;
    const std::size_t h = add(in, {Kind::copy, {floats(kInput, b, len)}, {floats(kDevice, b, len)}, ""}, {alloc});
    const std::size_t k = add(compute, {Kind::kernel, {floats(kDevice, b, len)}, {floats(kDevice, n + b, len)}, ""}, {h, alloc});
    add(out, {Kind::copy, {floats(kDevice, n + b, len)}, {floats(kOutput, b, len)}, ""}, {k, alloc});
  }
  std::vector<std::size_t> joins;
  for (int s = 1; s <= 3; ++s)
    if (last[static_cast<std::size_t>(s)] >= 0) joins.push_back(static_cast<std::size_t>(last[static_cast<std::size_t>(s)]));
  add(0, {Kind::free, {}, {floats(kDevice, 0, 1)}, ""}, joins);
  job.input = floats(kInput, 0, n);
  job.output = floats(kOutput, 0, n);
  job.n = n;
  job.chunks = chunks;
  job.streams = 3;
  return g;
}

} // namespace

TEST_CASE("the stage pipeline passes both checks", "[stages]") {
  Job job;
  const Graph g = record(64, 8, Design::stages, job);
  CHECK(analyse(g, job).empty());
  CHECK(stages_apart(g, job).empty());
}

TEST_CASE("output copies in the input stream are rejected", "[stages]") {
  Job job;
  const Graph g = record(64, 8, Design::copies_shared, job);
  CHECK(stages_apart(g, job).find("an input copy waits for") != std::string::npos);
}

TEST_CASE("one stream per chunk passes the first exercise's checks, not this one", "[stages]") {
  Job job;
  const Graph g = record(64, 8, Design::per_chunk, job);
  CHECK(analyse(g, job).empty()); // consecutive chunks overlap: chunk c + 3 waits for chunk c
  CHECK(stages_apart(g, job).find("an input copy waits for") != std::string::npos);
}

TEST_CASE("one chunk has no later stage to wait for", "[stages]") {
  Job job;
  const Graph g = record(16, 1, Design::copies_shared, job);
  CHECK(stages_apart(g, job).empty());
}
