/// @file recorded.hpp
/// @brief What exercise 08's two graders share (grade_pipeline.cpp and
///        stages/grade_stages.cpp): a learner's run() recorded with stream
///        capture and read as the graph graph_check.hpp checks, the pinned
///        memory check, two real runs checked element by element, and
///        grade_shape, which puts the three together for one shape, and
///        the speed line (speed).
#pragma once

#include "graph_check.hpp"

#include "steps/compare.hpp"
#include "steps/error.hpp"
#include "steps/grade_support.hpp"
#include "steps/handle.hpp"
#include "steps/memory.hpp"
#include "steps/random.hpp"
#include "steps/timing.hpp"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace ex08::recorded {

/// The bytes [p, p + bytes) as a range.
inline check::Range bytes_of(const void* p, std::size_t bytes) {
  const auto b = reinterpret_cast<std::uintptr_t>(p);
  return {b, b + bytes};
}

/// The captured graph as graph_check sees it: what each node reads and
/// writes. A kernel other than `stage` (the given kernel, whose parameters
/// are in, out, count) becomes Kind::other, labelled `foreign`.
inline check::Graph read_graph(cudaGraph_t graph, const void* stage, const std::string& foreign) {
  std::size_t count = 0;
  CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  if (count) CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
  std::map<cudaGraphNode_t, std::size_t> index;
  check::Graph g;
  for (std::size_t i = 0; i < count; ++i) {
    index[nodes[i]] = i;
    check::Node v;
    cudaGraphNodeType type;
    CUDA_CHECK(cudaGraphNodeGetType(nodes[i], &type));
    switch (type) {
      case cudaGraphNodeTypeKernel: {
        cudaKernelNodeParams p{};
        CUDA_CHECK(cudaGraphKernelNodeGetParams(nodes[i], &p));
        if (p.func != stage || p.kernelParams == nullptr) {
          v.kind = check::Kind::other;
          v.label = foreign;
          break;
        }
        const float* in = *static_cast<const float* const*>(p.kernelParams[0]);
        const float* out = *static_cast<float* const*>(p.kernelParams[1]);
        const std::size_t n = *static_cast<const std::size_t*>(p.kernelParams[2]);
        v.kind = check::Kind::kernel;
        v.reads.push_back(bytes_of(in, n * sizeof(float)));
        v.writes.push_back(bytes_of(out, n * sizeof(float)));
        break;
      }
      case cudaGraphNodeTypeMemcpy: {
        cudaMemcpy3DParms p{};
        CUDA_CHECK(cudaGraphMemcpyNodeGetParams(nodes[i], &p));
        if (p.srcArray || p.dstArray || p.extent.height > 1 || p.extent.depth > 1) {
          v.kind = check::Kind::other;
          v.label = "a 2D/3D or array copy (the pipeline needs plain cudaMemcpyAsync)";
          break;
        }
        const std::size_t bytes = p.extent.width;
        v.kind = check::Kind::copy;
        v.reads.push_back(bytes_of(static_cast<const char*>(p.srcPtr.ptr) + p.srcPos.x, bytes));
        v.writes.push_back(bytes_of(static_cast<const char*>(p.dstPtr.ptr) + p.dstPos.x, bytes));
        break;
      }
      case cudaGraphNodeTypeMemset: {
        cudaMemsetParams p{};
        CUDA_CHECK(cudaGraphMemsetNodeGetParams(nodes[i], &p));
        v.kind = check::Kind::memset;
        const std::size_t rows = p.height ? p.height : 1;
        v.writes.push_back(bytes_of(p.dst, rows > 1 ? p.pitch * rows : p.elementSize * p.width));
        break;
      }
      case cudaGraphNodeTypeMemAlloc: {
        cudaMemAllocNodeParams p{};
        CUDA_CHECK(cudaGraphMemAllocNodeGetParams(nodes[i], &p));
        v.kind = check::Kind::alloc;
        v.writes.push_back(bytes_of(p.dptr, p.bytesize));
        break;
      }
      case cudaGraphNodeTypeMemFree: {
        void* p = nullptr;
        CUDA_CHECK(cudaGraphMemFreeNodeGetParams(nodes[i], &p));
        v.kind = check::Kind::free;
        v.writes.push_back(bytes_of(p, 1));
        break;
      }
      case cudaGraphNodeTypeEmpty:
      case cudaGraphNodeTypeWaitEvent:
      case cudaGraphNodeTypeEventRecord: v.kind = check::Kind::empty; break;
      case cudaGraphNodeTypeHost:
        v.kind = check::Kind::other;
        v.label = "a host function (cudaLaunchHostFunc)";
        break;
      default:
        v.kind = check::Kind::other;
        v.label = "a graph node of type " + std::to_string(static_cast<int>(type));
        break;
    }
    g.nodes.push_back(std::move(v));
  }
  std::size_t edges = 0;
#if CUDART_VERSION >= 13000
  CUDA_CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges));
#else
  CUDA_CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, &edges));
#endif
  std::vector<cudaGraphNode_t> from(edges), to(edges);
  if (edges) {
#if CUDART_VERSION >= 13000
    CUDA_CHECK(cudaGraphGetEdges(graph, from.data(), to.data(), nullptr, &edges));
#else
    CUDA_CHECK(cudaGraphGetEdges(graph, from.data(), to.data(), &edges));
#endif
  }
  for (std::size_t e = 0; e < edges; ++e) g.edges.push_back({index.at(from[e]), index.at(to[e])});
  return g;
}

inline const char* const kCaptureHint =
    "\n  Hint: while the grader records run() nothing may wait for the GPU or use the legacy default stream: no "
    "cudaMemcpy (without Async), cudaMalloc, cudaDeviceSynchronize, cudaStreamSynchronize or stream 0 inside "
    "run(). Use cudaMemcpyAsync, cudaMallocAsync/cudaFreeAsync and your own streams.";

/// The capture hint for a CUDA error that mentions capture ("" otherwise).
inline std::string capture_hint(const steps::Error& e) {
  const std::string what = e.what();
  if (what.find("apture") != std::string::npos) return std::string(kCaptureHint).substr(9);
  return "";
}

/// Records `run` (which enqueues into `origin`) with stream capture: nothing
/// runs. "" with the recorded graph in `graph`, or what went wrong;
/// `unjoined` is the message for a stream that was forked and never joined.
inline std::string record(const std::function<void()>& run, cudaStream_t origin, steps::Graph& graph,
                          const std::string& unjoined) {
  CUDA_CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeThreadLocal));
  std::string thrown;
  try {
    run();
  } catch (const std::exception& e) {
    thrown = e.what();
  }
  cudaGraph_t raw = nullptr;
  const cudaError_t end = cudaStreamEndCapture(origin, &raw);
  graph = steps::Graph(raw);
  (void)cudaGetLastError();
  if (!thrown.empty())
    return "while the grader recorded your run() (stream capture), it failed: " + thrown + kCaptureHint;
  if (end == cudaErrorStreamCaptureUnjoined) return unjoined;
  if (end != cudaSuccess)
    return std::string("recording your run() failed: ") + cudaGetErrorName(end) + ": " + cudaGetErrorString(end) +
           kCaptureHint;
  return "";
}

/// The grader's poison: all bits set (a NaN nobody computes).
inline bool is_poison(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b == 0xFFFFFFFFu;
}

/// "" when input and output are pinned host memory, else why that matters.
inline std::string not_pinned(const float* input, const float* output) {
  for (const float* buffer : {input, output}) {
    cudaPointerAttributes a{};
    CUDA_CHECK(cudaPointerGetAttributes(&a, buffer));
    (void)cudaGetLastError();
    if (a.type != cudaMemoryTypeHost)
      return std::string(buffer == input ? "input()" : "output()") +
             " is not pinned (page-locked) host memory: a cudaMemcpyAsync from or to pageable memory (std::vector, "
             "new, malloc) is staged through a driver buffer and returns only when it is done, so nothing "
             "overlaps. The results may be right; the pipeline is not. Allocate it with cudaMallocHost "
             "(steps::PinnedBuffer).";
  }
  return "";
}

/// Two real runs of `run(origin)`, each checked: output[i] = 2 x[i] + 1
/// exactly for i < n, nothing written from n to x.size(), the input
/// unchanged. `len` is a chunk's length (for the message). "" when right.
/// Each run gets a busy non-blocking origin (steps::grade::BusyStream): the
/// input is scrambled until the work pending in origin restores it, so work
/// not ordered after origin's reads it before it is ready.
inline std::string two_runs(const std::function<void(cudaStream_t)>& run, float* input, float* output,
                            const std::vector<float>& x, std::size_t n, std::size_t len) {
  const std::size_t capacity = x.size();
  for (int round = 1; round <= 2; ++round) {
    std::memset(output, 0xFF, capacity * sizeof(float));
    steps::grade::BusyStream origin;
    origin.restores(input, capacity * sizeof(float));
    origin.start();
    run(origin);
    origin.finish();
    for (std::size_t i = 0; i < n; ++i) {
      const float want = std::fmaf(x[i], 2.0f, 1.0f);
      if (output[i] == want) continue;
      const std::size_t c = i / len;
      std::ostringstream os;
      os << "run " << round << ": output[" << i << "] (chunk " << c << ", element " << i - c * len
         << " of it) is " << steps::format_value(output[i]) << ", expected " << steps::format_value(want)
         << " = 2 * " << steps::format_value(x[i]) << " + 1.\n  Hint: ";
      if (is_poison(output[i]))
        os << "never written (it still holds the grader's NaN): was chunk " << c << " copied back, and did origin "
           << "wait for its stream before run() returned?";
      else if (std::fabs(output[i]) > 5)
        os << "computed from input that was not ready yet: origin had work pending ahead of your run() (the "
              "grader's, which finishes writing the input), and chunk " << c << "'s copy did not wait for it. "
              "Every stream you use must wait for origin (an event recorded in it) before its first copy.";
      else
        os << "a value from another element or another chunk: check the chunk's offset on the host and which "
              "device buffer its kernel reads.";
      return os.str();
    }
    for (std::size_t i = n; i < capacity; ++i)
      if (!is_poison(output[i]))
        return "run " + std::to_string(round) + ": output[" + std::to_string(i) + "] was written, but n = " +
               std::to_string(n) + ": the last chunk is shorter than the others (chunk_range).";
    if (std::memcmp(input, x.data(), capacity * sizeof(float)) != 0)
      return "run " + std::to_string(round) + ": input() changed, but it is an input.";
  }
  return "";
}

/// What a grader checks the recorded graph with: the given kernel (`stage`;
/// any other kernel is labelled `foreign`), the message for a stream forked
/// and never joined back (`unjoined`), and `check(graph, job)`, which returns
/// "" or what is wrong.
struct GraphChecks {
  const void* stage = nullptr;
  std::string foreign, unjoined;
  std::function<std::string(const check::Graph&, const check::Job&)> check;
};

/// A shape a grader runs: n elements in `chunks` chunks over `streams`
/// streams, in host buffers of capacity = n + extra floats (extra >= 1:
/// output past n must stay untouched); `what` says what it tests.
struct Shape {
  std::size_t n;
  int chunks;
  int streams;
  std::size_t extra;
  std::string what;
};

inline std::string name_of(const Shape& s) {
  std::ostringstream os;
  os << "n = " << s.n << ", " << s.chunks << " chunks, " << s.streams << " streams";
  if (!s.what.empty()) os << ": " << s.what;
  return os.str();
}

/// Shape `s` of a grade, for either exercise's pipeline `p` (input(),
/// output() and run(n, chunks, origin)) built for it. "" when right.
///   1. input() and output() are pinned host memory (not_pinned);
///   2. run() is recorded on a non-blocking origin (record) and the graph it
///      leaves is checked (read_graph, then checks.check);
///   3. two real runs on seeded random input (two_runs).
template <class Pipeline>
std::string grade_shape(Pipeline& p, const Shape& s, std::uint64_t seed, const GraphChecks& checks) {
  const std::size_t n = s.n, capacity = s.n + s.extra;
  const int chunks = s.chunks;
  if (std::string bad = not_pinned(p.input(), p.output()); !bad.empty()) return bad;
  std::vector<float> x(capacity);
  steps::fill_uniform(x.data(), capacity, seed);
  std::memcpy(p.input(), x.data(), capacity * sizeof(float));
  {
    steps::Stream origin(cudaStreamNonBlocking);
    steps::Graph graph;
    const std::string failed = record([&] { p.run(n, chunks, origin); }, origin, graph, checks.unjoined);
    if (!failed.empty()) return failed;
    check::Job job;
    job.input = bytes_of(p.input(), capacity * sizeof(float));
    job.output = bytes_of(p.output(), capacity * sizeof(float));
    job.n = n;
    job.chunks = chunks;
    job.streams = s.streams;
    const std::string bad = checks.check(read_graph(graph, checks.stage, checks.foreign), job);
    if (!bad.empty())
      return "in the work your run() enqueues (recorded, not run: checked for every order the GPU may choose, not "
             "for one lucky run): " + bad;
  }
  // Work not ordered after origin's reads the input before it is ready (two_runs).
  const std::size_t k = static_cast<std::size_t>(chunks);
  const std::size_t len = n ? (n + k - 1) / k : 1; // a chunk's length, for the messages
  return two_runs([&](cudaStream_t origin) { p.run(n, chunks, origin); }, p.input(), p.output(), x, n, len);
}

/// The grader's speed line: `p.run(n, chunks)` on seeded input, timed over
/// 10 runs and reported as `label` (bytes: n floats each way).
template <class Pipeline>
void speed(Pipeline& p, std::size_t n, int chunks, const std::string& label) {
  steps::fill_uniform(p.input(), n, 5);
  steps::TimingOptions opts;
  opts.iters = 10;
  const auto ms = steps::time_gpu([&](cudaStream_t s) { p.run(n, chunks, s); }, opts);
  steps::grade::report_speed(label, ms, 8.0 * static_cast<double>(n));
}

} // namespace ex08::recorded
