/// @file graph_check.hpp
/// @brief Exercise 08 grader: what a recorded pipeline must look like.
///
/// The grader records your run() with stream capture: nothing runs; every
/// copy, kernel, stream-ordered allocation and free becomes a node of a CUDA
/// graph, and every wait (stream order, cudaStreamWaitEvent) an edge. This
/// file checks that graph, with no GPU: it sees the memory each node reads
/// and writes, and which nodes are ordered (a path of edges between them).
/// A race is a property of this graph, not of one lucky or unlucky run:
///   - two nodes that touch the same bytes, one of them writing, must be
///     ordered (otherwise one may run while the other is halfway);
///   - device memory must come from a cudaMallocAsync of the same run, and
///     every node that touches it must come after that cudaMallocAsync and
///     before its cudaFreeAsync;
///   - chunk c's data must flow H2D(c) -> process -> D2H(c): the last
///     writer of what each step reads is the step before;
///   - with 2 or more streams, chunk c+1's input copy must not be ordered
///     with chunk c's output copy (otherwise nothing overlaps).
/// analyse() returns "" or what is wrong, in the learner's words. It is
/// tested on hand-made graphs in test_graph_check.cpp (label host).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace ex08::check {

/// Bytes [begin, end).
struct Range {
  std::uintptr_t begin = 0, end = 0;
  bool empty() const { return end <= begin; }
  bool overlaps(const Range& o) const { return begin < o.end && o.begin < end && !empty() && !o.empty(); }
  bool operator==(const Range& o) const { return begin == o.begin && end == o.end; }
};

/// What a node is.
enum class Kind {
  copy,   ///< a memcpy node: reads `reads[0]`, writes `writes[0]`
  kernel, ///< a launch of the given process kernel: reads its input, writes its output
  memset, ///< writes
  alloc,  ///< cudaMallocAsync: the allocation `writes[0]` begins to exist
  free,   ///< cudaFreeAsync: the allocation starting at `writes[0].begin` ends
  other,  ///< anything else that runs: a host function, a foreign kernel... (`label` says what)
  empty,  ///< no work (joins, event nodes)
};

struct Node {
  Kind kind = Kind::empty;
  std::vector<Range> reads, writes;
  std::string label; ///< for Kind::other: what it is
};

/// The recorded graph: nodes and edges (from, to: `to` waits for `from`).
struct Graph {
  std::vector<Node> nodes;
  std::vector<std::pair<std::size_t, std::size_t>> edges;
};

/// What the run was asked to do.
struct Job {
  Range input, output; ///< the host buffers: capacity floats each
  std::size_t n = 0;
  int chunks = 1;
  int streams = 1;
};

namespace detail {

/// Reachability: reach[a] has bit b when a path leads from a to b.
class Reach {
public:
  explicit Reach(const Graph& g) : n_(g.nodes.size()), words_((n_ + 63) / 64), bits_(n_ * words_, 0) {
    std::vector<std::vector<std::size_t>> out(n_);
    std::vector<std::size_t> indegree(n_, 0);
    for (const auto& e : g.edges) {
      out[e.first].push_back(e.second);
      ++indegree[e.second];
    }
    std::vector<std::size_t> order, ready;
    for (std::size_t i = 0; i < n_; ++i)
      if (indegree[i] == 0) ready.push_back(i);
    while (!ready.empty()) {
      const std::size_t v = ready.back();
      ready.pop_back();
      order.push_back(v);
      for (std::size_t w : out[v])
        if (--indegree[w] == 0) ready.push_back(w);
    }
    // Reverse topological order: a node reaches its successors and all they reach.
    for (auto it = order.rbegin(); it != order.rend(); ++it)
      for (std::size_t w : out[*it]) {
        set(*it, w);
        for (std::size_t k = 0; k < words_; ++k) bits_[*it * words_ + k] |= bits_[w * words_ + k];
      }
  }
  bool path(std::size_t a, std::size_t b) const { return (bits_[a * words_ + b / 64] >> (b % 64)) & 1u; }
  bool ordered(std::size_t a, std::size_t b) const { return path(a, b) || path(b, a); }

private:
  void set(std::size_t a, std::size_t b) { bits_[a * words_ + b / 64] |= std::uint64_t{1} << (b % 64); }
  std::size_t n_, words_;
  std::vector<std::uint64_t> bits_;
};

inline bool inside(const Range& r, const Range& outer) { return r.begin >= outer.begin && r.end <= outer.end; }

} // namespace detail

/// The graph's problems in a learner's words, or "" when it is right.
inline std::string analyse(const Graph& g, const Job& job) {
  using detail::inside;
  const std::size_t count = g.nodes.size();
  const detail::Reach reach(g);
  if (job.n == 0 || job.chunks < 1) {
    for (const auto& v : g.nodes)
      if (v.kind != Kind::empty && v.kind != Kind::alloc && v.kind != Kind::free)
        return "n = 0: there is nothing to copy or compute, yet your run() enqueued work.";
    return "";
  }
  const std::size_t len = (job.n + static_cast<std::size_t>(job.chunks) - 1) / static_cast<std::size_t>(job.chunks);
  auto chunk_bytes = [&](const Range& buffer, int c) {
    const std::size_t begin = std::min(job.n, len * static_cast<std::size_t>(c));
    const std::size_t end = std::min(job.n, begin + len);
    return Range{buffer.begin + begin * sizeof(float), buffer.begin + end * sizeof(float)};
  };
  auto elements = [&](const Range& buffer, const Range& r) {
    std::ostringstream os;
    os << "elements [" << (r.begin - buffer.begin) / sizeof(float) << ", " << (r.end - buffer.begin) / sizeof(float)
       << ")";
    return os.str();
  };
  int nonempty = 0;
  for (int c = 0; c < job.chunks; ++c)
    if (!chunk_bytes(job.input, c).empty()) ++nonempty;

  // 1. What each node is, and the chunk of every host copy.
  std::vector<std::vector<std::size_t>> h2d(static_cast<std::size_t>(nonempty)), d2h(static_cast<std::size_t>(nonempty));
  std::vector<std::string> name(count);
  for (std::size_t i = 0; i < count; ++i) {
    const Node& v = g.nodes[i];
    if (v.kind == Kind::other)
      return "your run() enqueued " + v.label +
             ": the pipeline needs only copies, process() launches and stream-ordered allocations.";
    if (v.kind != Kind::copy) continue;
    const Range& src = v.reads.at(0);
    const Range& dst = v.writes.at(0);
    const bool from_input = src.overlaps(job.input), to_output = dst.overlaps(job.output);
    if (from_input && to_output) return "a copy straight from the input to the output: every chunk goes through the GPU.";
    if (from_input || to_output) {
      const Range& host = from_input ? src : dst;
      const Range& buffer = from_input ? job.input : job.output;
      const Range limit{buffer.begin, buffer.begin + job.n * sizeof(float)};
      const char* what = from_input ? "an input copy" : "an output copy";
      if (!inside(host, limit))
        return std::string(what) + " covers " + elements(buffer, host) + ", past the n = " + std::to_string(job.n) +
               " elements you were asked for: check the last chunk's length (chunk_range).";
      int c = static_cast<int>((host.begin - buffer.begin) / sizeof(float) / len);
      if (!(host == chunk_bytes(buffer, c)))
        return std::string(what) + " covers " + elements(buffer, host) + ", which is not a chunk: chunk " +
               std::to_string(c) + " is " + elements(buffer, chunk_bytes(buffer, c)) +
               " (chunk_range: chunks of ceil(n / chunks) elements, the last one shorter).";
      (from_input ? h2d : d2h)[static_cast<std::size_t>(c)].push_back(i);
      name[i] = std::string(from_input ? "the input copy" : "the output copy") + " of chunk " + std::to_string(c);
    } else {
      name[i] = "a device-to-device copy";
    }
  }
  for (int c = 0; c < nonempty; ++c) {
    const auto sc = static_cast<std::size_t>(c);
    for (auto* list : {&h2d[sc], &d2h[sc]}) {
      const char* what = list == &h2d[sc] ? "input" : "output";
      if (list->empty())
        return "chunk " + std::to_string(c) + " has no " + what + " copy in the work that follows origin. Every " +
               "stream you use must first wait for an event recorded in origin (the fork): work in a stream " +
               "that never waited for origin is not ordered after the caller's work, and is not part of the run.";
      if (list->size() > 1)
        return "chunk " + std::to_string(c) + " is copied " + std::to_string(list->size()) + " times (" + what +
               "): one copy per chunk and direction.";
    }
  }
  for (std::size_t i = 0; i < count; ++i) {
    const Node& v = g.nodes[i];
    if (v.kind == Kind::kernel) name[i] = "a process() kernel on " + std::to_string((v.reads.at(0).end - v.reads.at(0).begin) / sizeof(float)) + " elements";
    if (v.kind == Kind::memset) name[i] = "a memset";
    if (v.kind == Kind::alloc) name[i] = "cudaMallocAsync";
    if (v.kind == Kind::free) name[i] = "cudaFreeAsync";
  }
  // A kernel is named by the latest chunk whose input copy, before it, wrote
  // what it reads (stream order puts a stream's later chunks after it).
  for (std::size_t i = 0; i < count; ++i) {
    if (g.nodes[i].kind != Kind::kernel) continue;
    for (int c = 0; c < nonempty; ++c) {
      const std::size_t w = h2d[static_cast<std::size_t>(c)][0];
      if (g.nodes[w].writes[0] == g.nodes[i].reads[0] && reach.path(w, i))
        name[i] = "chunk " + std::to_string(c) + "'s kernel";
    }
  }

  // 2. Device memory comes from this run's cudaMallocAsync: every range a
  //    copy, kernel or memset touches lies in the host input or output, or
  //    inside a block one of the graph's alloc nodes made.
  for (std::size_t i = 0; i < count; ++i) {
    const Node& v = g.nodes[i];
    if (v.kind != Kind::copy && v.kind != Kind::kernel && v.kind != Kind::memset) continue;
    std::vector<Range> ranges = v.reads;
    ranges.insert(ranges.end(), v.writes.begin(), v.writes.end());
    for (const Range& r : ranges) {
      if (r.empty() || inside(r, job.input) || inside(r, job.output)) continue;
      bool allocated = false;
      for (const auto& a : g.nodes)
        if (a.kind == Kind::alloc && inside(r, a.writes.at(0))) allocated = true;
      if (!allocated)
        return (name[i].empty() ? std::string("an operation") : name[i]) +
               " uses device memory that no cudaMallocAsync of this run() allocated. The chunks' device "
               "buffers are allocated in stream order inside run(): cudaMallocAsync(..., origin) before the "
               "fork, cudaFreeAsync(..., origin) after the join (not once in the constructor, not with "
               "cudaMalloc): then every run owns its buffers, also when runs in different streams overlap.";
    }
  }

  // 3. Stream-ordered allocations: used only between their alloc and free.
  const bool accesses[] = {true, true, true, false, false, false, false};
  auto is_access = [&](std::size_t i) { return accesses[static_cast<int>(g.nodes[i].kind)]; };
  for (std::size_t a = 0; a < count; ++a) {
    if (g.nodes[a].kind != Kind::alloc) continue;
    const Range block = g.nodes[a].writes.at(0);
    std::vector<std::size_t> frees;
    for (std::size_t f = 0; f < count; ++f)
      if (g.nodes[f].kind == Kind::free && g.nodes[f].writes.at(0).begin == block.begin) frees.push_back(f);
    for (std::size_t i = 0; i < count; ++i) {
      if (!is_access(i)) continue;
      bool touches = false;
      for (const auto& r : g.nodes[i].reads) touches = touches || r.overlaps(block);
      for (const auto& r : g.nodes[i].writes) touches = touches || r.overlaps(block);
      if (!touches) continue;
      if (!reach.path(a, i))
        return name[i] + " uses memory from cudaMallocAsync without waiting for the allocation: its stream must " +
               "wait (an event) for origin after the cudaMallocAsync.";
      for (std::size_t f : frees)
        if (!reach.path(i, f))
          return name[i] + " may still use its device memory after cudaFreeAsync: the free must come after " +
                 "every stream has joined back into origin (origin waits for an event recorded after the last " +
                 "operation of each stream), never before.";
    }
  }

  // 4. Races: the same bytes, one writer, no order.
  for (std::size_t i = 0; i < count; ++i) {
    if (!is_access(i)) continue;
    for (std::size_t j = i + 1; j < count; ++j) {
      if (!is_access(j) || reach.ordered(i, j)) continue;
      bool conflict = false;
      for (const auto& w : g.nodes[i].writes) {
        for (const auto& r : g.nodes[j].reads) conflict = conflict || w.overlaps(r);
        for (const auto& r : g.nodes[j].writes) conflict = conflict || w.overlaps(r);
      }
      for (const auto& w : g.nodes[j].writes)
        for (const auto& r : g.nodes[i].reads) conflict = conflict || w.overlaps(r);
      if (conflict)
        return name[i] + " and " + name[j] + " use the same memory, one of them writing it, with no order " +
               "between them: either may run first, or both at once (a race). Two operations on the same data " +
               "belong in one stream, or the second one's stream must wait for an event recorded after the " +
               "first. (Device buffers shared by two streams are a race too: give each stream its own.)";
    }
  }

  // 5. Data flow: D2H(c) <- process <- H2D(c).
  auto last_writer = [&](std::size_t reader, const Range& r) -> std::size_t {
    std::size_t best = count;
    for (std::size_t w = 0; w < count; ++w) {
      if (w == reader || !reach.path(w, reader)) continue;
      bool writes = false;
      for (const auto& x : g.nodes[w].writes) writes = writes || x.overlaps(r);
      if (!writes) continue;
      if (best == count || reach.path(best, w)) best = w;
    }
    return best;
  };
  for (int c = 0; c < nonempty; ++c) {
    const std::size_t out = d2h[static_cast<std::size_t>(c)][0];
    const std::size_t in = h2d[static_cast<std::size_t>(c)][0];
    const std::size_t k = last_writer(out, g.nodes[out].reads[0]);
    if (k == count || g.nodes[k].kind != Kind::kernel || !(g.nodes[k].writes[0] == g.nodes[out].reads[0]))
      return "chunk " + std::to_string(c) + "'s output copy does not copy what chunk " + std::to_string(c) +
             "'s kernel wrote" + (k == count ? std::string(" (no earlier operation wrote that memory)")
                                             : " (the last operation before it that wrote there is " + name[k] + ")") +
             ": the output copy must come after the kernel, in the same stream or after an event.";
    const std::size_t h = last_writer(k, g.nodes[k].reads[0]);
    if (h != in || !(g.nodes[in].writes[0] == g.nodes[k].reads[0]))
      return "chunk " + std::to_string(c) + "'s kernel does not read what chunk " + std::to_string(c) +
             "'s input copy wrote" + (h == count ? std::string(" (nothing wrote that memory before it)")
                                                 : " (the last operation before it that wrote there is " + name[h] + ")") +
             ": the kernel must come after the copy, in the same stream or after an event.";
  }

  // 6. Overlap: with 2+ streams, chunk c+1 comes in while chunk c goes out.
  if (job.streams >= 2)
    for (int c = 0; c + 1 < nonempty; ++c) {
      const std::size_t out = d2h[static_cast<std::size_t>(c)][0];
      const std::size_t next = h2d[static_cast<std::size_t>(c) + 1][0];
      if (reach.ordered(out, next))
        return "chunk " + std::to_string(c + 1) + "'s input copy is ordered with chunk " + std::to_string(c) +
               "'s output copy (one waits for the other), so the chunks cannot overlap: the pipeline is " +
               "serial. Give consecutive chunks to different streams (chunk c in stream c % streams), and " +
               "add no waits beyond what the data needs.";
    }
  return "";
}

} // namespace ex08::check
