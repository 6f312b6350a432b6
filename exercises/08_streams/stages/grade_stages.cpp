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
#include "stages.hpp"
#include "stages_check.hpp"

#include "steps/catch.hpp"
#include "steps/compare.hpp"
#include "steps/error.hpp"
#include "steps/grade.hpp"
#include "steps/handle.hpp"
#include "steps/memory.hpp"
#include "steps/random.hpp"
#include "steps/timing.hpp"

#include <cstdint>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace check = ex08::check;

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

check::Range bytes_of(const void* p, std::size_t bytes) {
  const auto b = reinterpret_cast<std::uintptr_t>(p);
  return {b, b + bytes};
}

/// One captured node as graph_check sees it: copies, the given kernel,
/// stream-ordered allocations; event and empty nodes order only.
check::Node node_of(cudaGraphNode_t node) {
  check::Node v;
  cudaGraphNodeType type;
  CUDA_CHECK(cudaGraphNodeGetType(node, &type));
  if (type == cudaGraphNodeTypeKernel) {
    cudaKernelNodeParams p{};
    CUDA_CHECK(cudaGraphKernelNodeGetParams(node, &p));
    if (p.func != ex08::stages::process_kernel() || p.kernelParams == nullptr) {
      v.kind = check::Kind::other;
      v.label = "a kernel other than the given one (launch it only through ex08::stages::process)";
      return v;
    }
    const float* in = *static_cast<const float* const*>(p.kernelParams[0]);
    const float* out = *static_cast<float* const*>(p.kernelParams[1]);
    const std::size_t count = *static_cast<const std::size_t*>(p.kernelParams[2]);
    v.kind = check::Kind::kernel;
    v.reads.push_back(bytes_of(in, count * sizeof(float)));
    v.writes.push_back(bytes_of(out, count * sizeof(float)));
  } else if (type == cudaGraphNodeTypeMemcpy) {
    cudaMemcpy3DParms p{};
    CUDA_CHECK(cudaGraphMemcpyNodeGetParams(node, &p));
    if (p.srcArray || p.dstArray || p.extent.height > 1 || p.extent.depth > 1) {
      v.kind = check::Kind::other;
      v.label = "a 2D/3D or array copy (the pipeline needs plain cudaMemcpyAsync)";
      return v;
    }
    v.kind = check::Kind::copy;
    v.reads.push_back(bytes_of(static_cast<const char*>(p.srcPtr.ptr) + p.srcPos.x, p.extent.width));
    v.writes.push_back(bytes_of(static_cast<const char*>(p.dstPtr.ptr) + p.dstPos.x, p.extent.width));
  } else if (type == cudaGraphNodeTypeMemAlloc) {
    cudaMemAllocNodeParams p{};
    CUDA_CHECK(cudaGraphMemAllocNodeGetParams(node, &p));
    v.kind = check::Kind::alloc;
    v.writes.push_back(bytes_of(p.dptr, p.bytesize));
  } else if (type == cudaGraphNodeTypeMemFree) {
    void* p = nullptr;
    CUDA_CHECK(cudaGraphMemFreeNodeGetParams(node, &p));
    v.kind = check::Kind::free;
    v.writes.push_back(bytes_of(p, 1));
  } else if (type == cudaGraphNodeTypeEmpty || type == cudaGraphNodeTypeWaitEvent ||
             type == cudaGraphNodeTypeEventRecord) {
    v.kind = check::Kind::empty;
  } else {
    v.kind = check::Kind::other;
    v.label = "a graph node of type " + std::to_string(static_cast<int>(type)) +
              " (memsets, host functions and the like are not part of this pipeline)";
  }
  return v;
}

check::Graph read_graph(cudaGraph_t graph) {
  std::size_t count = 0;
  CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  if (count) CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
  std::map<cudaGraphNode_t, std::size_t> index;
  check::Graph g;
  for (std::size_t i = 0; i < count; ++i) {
    index[nodes[i]] = i;
    g.nodes.push_back(node_of(nodes[i]));
  }
  std::size_t edges = 0;
#if CUDART_VERSION >= 13000
  CUDA_CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges));
#else
  CUDA_CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, &edges));
#endif
  std::vector<cudaGraphNode_t> from(edges), to(edges);
#if CUDART_VERSION >= 13000
  if (edges) CUDA_CHECK(cudaGraphGetEdges(graph, from.data(), to.data(), nullptr, &edges));
#else
  if (edges) CUDA_CHECK(cudaGraphGetEdges(graph, from.data(), to.data(), &edges));
#endif
  for (std::size_t e = 0; e < edges; ++e) g.edges.push_back({index.at(from[e]), index.at(to[e])});
  return g;
}

const char* kCaptureHint =
    "\n  Hint: while the grader records run() nothing may wait for the GPU or use the legacy default stream: no "
    "cudaMemcpy (without Async), cudaMalloc, cudaDeviceSynchronize, cudaStreamSynchronize or stream 0 inside "
    "run(). Use cudaMemcpyAsync, cudaMallocAsync/cudaFreeAsync and your own streams.";

std::string record(ex08::stages::StagePipeline& p, const Shape& s, cudaStream_t origin) {
  CUDA_CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeThreadLocal));
  std::string thrown;
  try {
    p.run(s.n, s.chunks, origin);
  } catch (const std::exception& e) {
    thrown = e.what();
  }
  cudaGraph_t raw = nullptr;
  const cudaError_t end = cudaStreamEndCapture(origin, &raw);
  steps::Graph graph(raw);
  (void)cudaGetLastError();
  if (!thrown.empty())
    return "while the grader recorded your run() (stream capture), it failed: " + thrown + kCaptureHint;
  if (end == cudaErrorStreamCaptureUnjoined)
    return "a stream that waited for origin (directly or through an event) was never joined back: origin must "
           "wait for an event recorded at the end of each of your three streams before run() returns.";
  if (end != cudaSuccess)
    return std::string("recording your run() failed: ") + cudaGetErrorName(end) + ": " + cudaGetErrorString(end) +
           kCaptureHint;
  check::Job job;
  job.input = bytes_of(p.input(), (s.n + s.extra) * sizeof(float));
  job.output = bytes_of(p.output(), (s.n + s.extra) * sizeof(float));
  job.n = s.n;
  job.chunks = s.chunks;
  job.streams = 3;
  const check::Graph g = read_graph(graph);
  std::string bad = check::analyse(g, job);
  if (bad.empty() && s.n > 0) bad = check::stages_apart(g, job);
  if (!bad.empty())
    return "in the work your run() enqueues (recorded, not run: checked for every order the GPU may choose): " + bad;
  return "";
}

bool is_poison(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b == 0xFFFFFFFFu;
}

std::string run_shape(const Shape& s, std::uint64_t seed) {
  const std::size_t capacity = s.n + s.extra;
  ex08::stages::StagePipeline p(capacity);
  for (float* buffer : {p.input(), p.output()}) {
    cudaPointerAttributes a{};
    CUDA_CHECK(cudaPointerGetAttributes(&a, buffer));
    (void)cudaGetLastError();
    if (a.type != cudaMemoryTypeHost)
      return std::string(buffer == p.input() ? "input()" : "output()") +
             " is not pinned host memory: copies from or to it cannot overlap anything (steps::PinnedBuffer).";
  }
  std::vector<float> x(capacity);
  steps::fill_uniform(x.data(), capacity, seed);
  std::memcpy(p.input(), x.data(), capacity * sizeof(float));
  steps::Stream origin(cudaStreamNonBlocking);
  if (std::string bad = record(p, s, origin); !bad.empty()) return bad;

  const std::size_t len = s.n ? ex08::chunk_range(s.n, s.chunks, 0).count : 1;
  for (int round = 1; round <= 2; ++round) {
    std::memset(p.output(), 0xFF, capacity * sizeof(float));
    p.run(s.n, s.chunks, origin);
    origin.synchronize();
    const float* out = p.output();
    for (std::size_t i = 0; i < s.n; ++i) {
      const float want = ex08::process_reference(x[i]);
      if (out[i] == want) continue;
      const std::size_t c = i / len;
      std::ostringstream os;
      os << "run " << round << ": output[" << i << "] (chunk " << c << ", element " << i - c * len << " of it) is "
         << steps::format_value(out[i]) << ", expected " << steps::format_value(want) << " = 2 * "
         << steps::format_value(x[i]) << " + 1.\n  Hint: "
         << (is_poison(out[i]) ? "never written: was chunk's output copied back, and does origin wait for the "
                                 "output stream before run() returns?"
                               : "a value from another element: check the chunk's offset on the host and on the "
                                 "device.");
      return os.str();
    }
    for (std::size_t i = s.n; i < capacity; ++i)
      if (!is_poison(out[i]))
        return "run " + std::to_string(round) + ": output[" + std::to_string(i) + "] was written, but n = " +
               std::to_string(s.n) + ": the last chunk is shorter than the others (chunk_range).";
    if (std::memcmp(p.input(), x.data(), capacity * sizeof(float)) != 0)
      return "run " + std::to_string(round) + ": input() changed, but it is an input.";
  }
  return "";
}

std::string hint(const steps::Error& e) {
  const std::string what = e.what();
  if (what.find("apture") != std::string::npos) return std::string(kCaptureHint).substr(9);
  return "";
}

void grade(const std::vector<Shape>& shapes) { steps::grade::shapes(shapes, name_of, run_shape, hint); }

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
