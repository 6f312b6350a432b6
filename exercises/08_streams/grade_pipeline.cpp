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
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace check = ex08::check;

struct Shape {
  std::size_t n;
  int chunks;
  int streams;
  std::size_t extra; ///< capacity = n + extra (>= 1): output past n must stay untouched
  std::string what;
};

std::string name_of(const Shape& s) {
  std::ostringstream os;
  os << "n = " << s.n << ", " << s.chunks << " chunks, " << s.streams << " streams";
  if (!s.what.empty()) os << ": " << s.what;
  return os.str();
}

check::Range bytes_of(const void* p, std::size_t bytes) {
  const auto b = reinterpret_cast<std::uintptr_t>(p);
  return {b, b + bytes};
}

/// The captured graph as graph_check sees it: what each node reads and writes.
check::Graph read_graph(cudaGraph_t graph) {
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
        if (p.func != ex08::process_kernel() || p.kernelParams == nullptr) {
          v.kind = check::Kind::other;
          v.label = "a kernel other than the given one (launch the stage only through ex08::process)";
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

const char* kCaptureHint =
    "\n  Hint: while the grader records run() nothing may wait for the GPU or use the legacy default stream: no "
    "cudaMemcpy (without Async), cudaMalloc, cudaDeviceSynchronize, cudaStreamSynchronize or stream 0 inside "
    "run(). Use cudaMemcpyAsync, cudaMallocAsync/cudaFreeAsync and your own streams.";

/// Step 2: records run() and checks the graph. "" when right.
std::string record(ex08::Pipeline& p, const Shape& s, cudaStream_t origin) {
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
    return "a stream that waited for origin (a fork) was never joined back: origin must wait for an event "
           "recorded at the end of every stream you use, before run() returns. Otherwise the caller, who waits "
           "for origin only, may read the output before your last copies have landed.";
  if (end != cudaSuccess)
    return std::string("recording your run() failed: ") + cudaGetErrorName(end) + ": " + cudaGetErrorString(end) +
           kCaptureHint;
  check::Job job;
  job.input = bytes_of(p.input(), (s.n + s.extra) * sizeof(float));
  job.output = bytes_of(p.output(), (s.n + s.extra) * sizeof(float));
  job.n = s.n;
  job.chunks = s.chunks;
  job.streams = s.streams;
  const std::string bad = check::analyse(read_graph(graph), job);
  if (!bad.empty())
    return "in the work your run() enqueues (recorded, not run: checked for every order the GPU may choose, not "
           "for one lucky run): " + bad;
  return "";
}

bool is_poison(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b == 0xFFFFFFFFu;
}

std::string run_shape(const Shape& s, std::uint64_t seed) {
  const std::size_t capacity = s.n + s.extra;
  ex08::Pipeline p(capacity, s.streams);

  // 1. Pinned host memory.
  for (float* buffer : {p.input(), p.output()}) {
    cudaPointerAttributes a{};
    CUDA_CHECK(cudaPointerGetAttributes(&a, buffer));
    (void)cudaGetLastError();
    if (a.type != cudaMemoryTypeHost)
      return std::string(buffer == p.input() ? "input()" : "output()") +
             " is not pinned (page-locked) host memory: a cudaMemcpyAsync from or to pageable memory (std::vector, "
             "new, malloc) is staged through a driver buffer and returns only when it is done, so nothing "
             "overlaps. The results may be right; the pipeline is not. Allocate it with cudaMallocHost "
             "(steps::PinnedBuffer).";
  }

  std::vector<float> x(capacity);
  steps::fill_uniform(x.data(), capacity, seed);
  std::memcpy(p.input(), x.data(), capacity * sizeof(float));
  std::memset(p.output(), 0xFF, capacity * sizeof(float));

  // 2. The recorded graph.
  {
    steps::Stream origin(cudaStreamNonBlocking);
    if (std::string bad = record(p, s, origin); !bad.empty()) return bad;
  }

  // 3. Two real runs, each on a non-blocking origin with work still pending
  //    ahead of the call (the grader's, which finishes writing the input):
  //    work not ordered after origin's reads the input before it is ready.
  const std::size_t len = s.n ? (s.n + static_cast<std::size_t>(s.chunks) - 1) / static_cast<std::size_t>(s.chunks) : 1;
  for (int round = 1; round <= 2; ++round) {
    std::memset(p.output(), 0xFF, capacity * sizeof(float));
    steps::grade::BusyStream origin;
    origin.restores(p.input(), capacity * sizeof(float));
    origin.start();
    p.run(s.n, s.chunks, origin);
    origin.finish();
    const float* out = p.output();
    for (std::size_t i = 0; i < s.n; ++i) {
      const float want = ex08::process_reference(x[i]);
      if (out[i] == want) continue;
      const std::size_t c = i / len;
      std::ostringstream os;
      os << "run " << round << ": output[" << i << "] (chunk " << c << ", element " << i - c * len
         << " of it) is " << steps::format_value(out[i]) << ", expected " << steps::format_value(want) << " = 2 * "
         << steps::format_value(x[i]) << " + 1.\n  Hint: ";
      if (is_poison(out[i]))
        os << "never written (it still holds the grader's NaN): was chunk " << c << " copied back, and did origin "
           << "wait for its stream before run() returned?";
      else if (std::fabs(out[i]) > 5)
        os << "computed from input that was not ready yet: origin had work pending ahead of your run() (the "
              "grader's, which finishes writing the input), and chunk " << c << "'s copy did not wait for it. "
              "Every stream you use must wait for an event recorded in origin (the fork) before its first copy.";
      else
        os << "a value from another element or another chunk: check the chunk's offset on the host and which "
              "device buffer its kernel reads.";
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
  steps::fill_uniform(p.input(), n, 5);
  steps::TimingOptions opts;
  opts.iters = 10;
  const auto ms = steps::time_gpu([&](cudaStream_t s) { p.run(n, 32, s); }, opts);
  steps::grade::report_speed("pipeline, 2^26 floats in 32 chunks over 4 streams (bytes both ways)", ms,
                             8.0 * static_cast<double>(n));
}
