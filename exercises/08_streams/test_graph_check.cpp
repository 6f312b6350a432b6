// Host test of the exercise 08 graph checks (graph_check.hpp), on graphs
// built by hand the way stream capture records the solution and each of its
// mutants: the rejections the grader relies on, checked without a GPU.
#include "graph_check.hpp"

#include "steps/catch.hpp"

#include <cstdint>
#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

namespace {

using namespace ex08::check;

constexpr std::uintptr_t kInput = 0x10000000, kOutput = 0x20000000, kStaging = 0x30000000;

/// Builds a graph the way capture does: each stream's operations in a chain,
/// a node with no predecessor in its stream waits for `fork_from`.
struct Builder {
  Graph g;
  std::vector<long> last;
  explicit Builder(int streams) : last(static_cast<std::size_t>(streams) + 1, -1) {}
  std::size_t add(int stream, Node v, const std::vector<std::size_t>& waits = {}) {
    const std::size_t i = g.nodes.size();
    g.nodes.push_back(std::move(v));
    long& l = last[static_cast<std::size_t>(stream)];
    if (l >= 0) g.edges.push_back({static_cast<std::size_t>(l), i});
    for (auto w : waits) g.edges.push_back({w, i});
    l = static_cast<long>(i);
    return i;
  }
};

Range floats(std::uintptr_t base, std::size_t begin, std::size_t count) {
  return {base + begin * 4, base + (begin + count) * 4};
}
Node copy(Range from, Range to) { return {Kind::copy, {from}, {to}, ""}; }
Node kernel(Range in, Range out) { return {Kind::kernel, {in}, {out}, ""}; }

enum class Bug { none, kernel_next_stream, free_before_join, d2h_before_kernel, shared_slot, one_lane, tail_full, no_fork, no_alloc };

/// The solution's run() on n elements in `chunks` chunks over `streams`
/// streams (stream 0 is origin), with one bug.
Graph record(std::size_t n, int chunks, int streams, Bug bug) {
  const std::size_t len = (n + static_cast<std::size_t>(chunks) - 1) / static_cast<std::size_t>(chunks);
  const int used = std::min<int>(streams, static_cast<int>((n + len - 1) / len));
  Builder b(streams);
  // no_alloc: the buffers come from the constructor (cudaMalloc): no alloc node, no free node.
  const std::size_t alloc = bug == Bug::no_alloc ? b.add(0, {Kind::empty, {}, {}, ""})
                                                 : b.add(0, {Kind::alloc, {}, {floats(kStaging, 0, 2 * used * len)}, ""});
  std::vector<bool> forked(static_cast<std::size_t>(used) + 1, false);
  for (int c = 0; c < chunks; ++c) {
    const std::size_t begin = static_cast<std::size_t>(c) * len;
    if (begin >= n) break;
    const std::size_t count = bug == Bug::tail_full ? len : std::min(len, n - begin);
    const int l = bug == Bug::one_lane ? 0 : c % used;
    const int slot = bug == Bug::shared_slot || bug == Bug::one_lane ? 0 : l;
    const Range in = floats(kStaging, 2 * slot * len, count), out = floats(kStaging, (2 * slot + 1) * len, count);
    const int s = l + 1;
    auto fork = [&](int stream) {
      std::vector<std::size_t> w;
      if (!forked[static_cast<std::size_t>(stream - 1)] && bug != Bug::no_fork) w.push_back(alloc);
      forked[static_cast<std::size_t>(stream - 1)] = true;
      return w;
    };
    if (bug == Bug::no_fork) continue; // work in a stream that never waited for origin is not recorded
    const std::size_t h = b.add(s, copy(floats(kInput, begin, count), in), fork(s));
    const int ks = bug == Bug::kernel_next_stream ? (l + 1) % used + 1 : s;
    Node k = kernel(in, out);
    Node d = copy(out, floats(kOutput, begin, count));
    if (bug == Bug::d2h_before_kernel) {
      b.add(s, std::move(d));
      b.add(ks, std::move(k), fork(ks));
    } else {
      b.add(ks, std::move(k), fork(ks));
      b.add(s, std::move(d));
    }
    (void)h;
  }
  std::vector<std::size_t> ends;
  for (int l = 1; l <= used; ++l)
    if (b.last[static_cast<std::size_t>(l)] >= 0) ends.push_back(static_cast<std::size_t>(b.last[static_cast<std::size_t>(l)]));
  Node free_node{Kind::free, {}, {Range{kStaging, kStaging + 1}}, ""};
  if (bug == Bug::no_alloc) {
    b.add(0, {Kind::empty, {}, {}, ""}, ends);
  } else if (bug == Bug::free_before_join) {
    b.add(0, free_node);
    b.add(0, {Kind::empty, {}, {}, ""}, ends);
  } else {
    b.add(0, {Kind::empty, {}, {}, ""}, ends);
    b.add(0, free_node);
  }
  return b.g;
}

Job job(std::size_t n, int chunks, int streams) {
  Job j;
  j.input = floats(kInput, 0, n + 3);
  j.output = floats(kOutput, 0, n + 3);
  j.n = n;
  j.chunks = chunks;
  j.streams = streams;
  return j;
}

std::string verdict(std::size_t n, int chunks, int streams, Bug bug) {
  return analyse(record(n, chunks, streams, bug), job(n, chunks, streams));
}

bool says(const std::string& verdict, const std::string& words) {
  INFO("verdict: " << verdict);
  return verdict.find(words) != std::string::npos;
}

} // namespace

TEST_CASE("the solution's graph passes", "[graph_check]") {
  for (auto [n, chunks, streams] : {std::tuple{std::size_t{1000}, 7, 3}, {1, 4, 3}, {5, 8, 2}, {100003, 64, 4},
                                    {1000, 3, 8}, {100, 10, 1}}) {
    INFO("n " << n << " chunks " << chunks << " streams " << streams);
    CHECK(verdict(n, chunks, streams, Bug::none) == "");
  }
}

TEST_CASE("each mutant's graph is rejected, with the right words", "[graph_check]") {
  CHECK(says(verdict(1000, 7, 3, Bug::kernel_next_stream), "no order"));
  CHECK(says(verdict(1000, 7, 3, Bug::free_before_join), "cudaFreeAsync"));
  CHECK(says(verdict(1000, 7, 3, Bug::d2h_before_kernel), "output copy does not copy"));
  CHECK(says(verdict(1000, 7, 3, Bug::shared_slot), "no order"));
  CHECK(says(verdict(1000, 7, 3, Bug::one_lane), "serial"));
  CHECK(says(verdict(1000, 7, 3, Bug::tail_full), "past the n"));
  CHECK(says(verdict(1000, 7, 3, Bug::no_fork), "fork"));
  CHECK(says(verdict(1000, 7, 3, Bug::no_alloc), "no cudaMallocAsync"));
}

TEST_CASE("one stream needs no overlap", "[graph_check]") {
  CHECK(verdict(1000, 7, 1, Bug::one_lane) == "");
}
