// Chapter 03: shared-memory tiling, on the FP32 matrix multiply C = A * B.
//
// A matrix multiply does 2 * M * N * K floating-point operations on
// 4 * (M * K + K * N + M * N) bytes: at 4096^3 that is 683 FLOP per byte, so
// it could run at the arithmetic limit, if every byte were fetched once. The
// naive kernel instead fetches two floats per multiply-add. Each version
// below reuses what it loads more (shared-memory tiles, then registers) and
// spends fewer instructions moving it, and the last ones run close to cuBLAS:
//
//   v1 naive            one thread per C element, warps walk down the rows
//   v2 naive_coalesced  the same, warps walk along the rows
//   v3 tiled_16/32      TILE x TILE tiles of A and B in shared memory
//   v4 blocktile_1d     64 x 64 tiles, 8 results per thread
//   v5 blocktile_2d     128 x 128 tiles, 8 x 8 results per thread
//   v6 vectorized       float4 copies, A transposed in shared memory
//   v7 warptile         64 x 32 warp tiles, conflict-free shared loads
//   v8 double_buffer    the next slice loads while this one is computed
//   v9 async_copy       ... and the copies bypass the registers (cp.async)
//   v10 deep_slices     slices twice as deep, in dynamic shared memory
//
// Verification (reference.hpp): for small problems every version (and cuBLAS)
// is compared with an FP64 CPU product. For large ones that would take
// minutes, so cuBLAS runs once up front, its result is checked in FP64 on a
// few hundred random elements, and every version is compared with it element
// by element, within the FP32 dot-product tolerance of tolerance.hpp.
//
// Run: ./tutorial run 03    (or build/bin/ch03_tiling --help)
#include "gemm.cuh"
#include "matmul_problem.cuh"
#include "reference.hpp"
#include "v1_naive.cuh"
#include "v2_naive_coalesced.cuh"
#include "v3_tiled.cuh"
#include "v4_blocktile_1d.cuh"
#include "v5_blocktile_2d.cuh"
#include "v6_vectorized.cuh"
#include "v7_warptile.cuh"
#include "v8_double_buffer.cuh"
#include "v9_async_copy.cuh"
#include "v10_deep_slices.cuh"

#include "steps/chapter.hpp"
#include "steps/cublas.hpp"
#include "steps/gemm_dims.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#if STEPS_WITH_EXERCISE
#include "yours.cuh"
#endif

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ch03 {

using Row = steps::Row<MatMul>;

/// A row that computes C = A * B with one of the chapter's kernels.
Row version_row(std::string name, std::string what, std::function<void(const Gemm&, cudaStream_t)> launch) {
  Row r;
  r.name = std::move(name);
  r.what = std::move(what);
  r.role = steps::Role::version;
  r.launch = [launch](MatMul& p, steps::Run& run) { launch(p.gemm(), run.stream()); };
  r.work = [](const MatMul& p) { return p.work(); };
  r.reset = [](MatMul& p) { p.poison(); };
  r.check = [](MatMul& p) { return p.check(); };
  return r;
}

Row cublas_row() {
  Row r;
  r.name = "cublas";
  r.what = "cuBLAS SGEMM in FP32 (CUBLAS_DEFAULT_MATH: no tensor cores)";
  r.role = steps::Role::baseline;
  r.launch = [](MatMul& p, steps::Run& run) { p.run_cublas(run.stream()); };
  r.work = [](const MatMul& p) { return p.work(); };
  r.reset = [](MatMul& p) { p.poison(); };
  r.check = [](MatMul& p) { return p.check_cublas(); };
  return r;
}

/// The rows of v9 and v10: cp.async (sm_80 or newer), in code compiled for
/// this GPU's architecture (`kernel`: a build for sm_75 alone compiles its
/// body out; steps::Row::needs skips the row and says what to rebuild for).
Row async_row(std::string name, std::string what, const void* kernel,
              std::function<void(const Gemm&, cudaStream_t)> launch) {
  Row r = version_row(std::move(name), std::move(what), std::move(launch));
  r.needs = {{steps::Feature::cp_async}, kernel};
  return r;
}

// The registry: the CLI, the table and the JSON all come from these groups.
std::vector<steps::GroupPtr> registry() {
  std::vector<steps::GroupPtr> groups{steps::group<MatMul>({
      cublas_row(),
      version_row("naive", "v1: one thread per element of C, threadIdx.x down the rows (uncoalesced)",
                  [](const Gemm& g, cudaStream_t s) { v1::launch(g, s); }),
      version_row("naive_coalesced", "v2: one thread per element of C, threadIdx.x along the rows",
                  [](const Gemm& g, cudaStream_t s) { v2::launch(g, s); }),
      version_row("tiled_16", "v3: 16 x 16 tiles of A and B in shared memory, one element per thread",
                  [](const Gemm& g, cudaStream_t s) { v3::launch<16>(g, s); }),
      version_row("tiled_32", "v3: 32 x 32 tiles of A and B in shared memory, one element per thread",
                  [](const Gemm& g, cudaStream_t s) { v3::launch<32>(g, s); }),
      version_row("blocktile_1d", "v4: 64 x 64 x 8 tiles, 8 elements (one column) per thread",
                  [](const Gemm& g, cudaStream_t s) { v4::launch(g, s); }),
      version_row("blocktile_2d", "v5: 128 x 128 x 8 tiles, 8 x 8 elements per thread",
                  [](const Gemm& g, cudaStream_t s) { v5::launch(g, s); }),
      version_row("vectorized", "v6: v5 with float4 copies and A transposed in shared memory",
                  [](const Gemm& g, cudaStream_t s) { v6::launch(g, s); }),
      version_row("warptile", "v7: v6 with 64 x 32 warp tiles: conflict-free float4 shared loads",
                  [](const Gemm& g, cudaStream_t s) { v7::launch(g, s); }),
      version_row("double_buffer", "v8: v7 with two shared buffers: the next slice loads during the math",
                  [](const Gemm& g, cudaStream_t s) { v8::launch(g, s); }),
      async_row("async_copy", "v9: v8 with cp.async: the next slice goes to shared memory around the registers",
                reinterpret_cast<const void*>(v9::sgemm_async_copy<v9::Default, true>),
                [](const Gemm& g, cudaStream_t s) { v9::launch(g, s); }),
      async_row("deep_slices", "v10: v9 with 32-deep slices in 66.5 KB of dynamic shared memory per block",
                reinterpret_cast<const void*>(v10::sgemm_deep_slices<v10::Default, true>),
                [](const Gemm& g, cudaStream_t s) { v10::launch(g, s); }),
  })};
#if STEPS_WITH_EXERCISE
  groups.push_back(yours_group());
#endif
  return groups;
}

/// FP32 CUDA cores: each SM retires the architecture's fused multiply-adds
/// (2 FLOP) per clock: 64 on sm_75 and sm_80, 128 from sm_86 on (steps/arch.hpp).
steps::Peak fp32_peak(const steps::DeviceInfo& dev) {
  const steps::ArchFacts* a = steps::find_arch_facts(dev.cc_major, dev.cc_minor);
  if (a == nullptr) return {"FP32", 0, "sm_" + std::to_string(dev.cc_major * 10 + dev.cc_minor) + " is not in the architecture table"};
  return {"FP32", steps::fp32_peak_tflops(dev),
          std::to_string(dev.sm_count) + " SMs x " + std::to_string(a->fp32_fma_per_clock) + " FMA/clock x 2 FLOP x " +
              std::to_string(dev.sm_clock_khz / 1000) + " MHz"};
}

steps::ChapterInfo info() {
  steps::ChapterInfo i;
  steps::gemm_chapter_defaults(i);
  i.summary = "Multiplies two FP32 matrices with ten kernel versions, from one thread per element to "
              "register-blocked tiles fed by asynchronous copies, and compares them with cuBLAS SGEMM (no tensor "
              "cores).";
  // The default, 4096^3 (gemm_chapter_defaults): three 64 MiB matrices (3.2x the H200's 60 MiB L2), about
  // 137 GFLOP: long enough to time, short enough for seconds.
  i.goals = {{"best", "cublas", 0.90, ">= 0.90x cuBLAS SGEMM (FP32) at 4096^3"}};
  // Goals at the other shapes of bench_shapes, each judged in that shape's run.
  auto at = [](const char* text, const char* shape, std::int64_t m, std::int64_t n, std::int64_t k) {
    steps::Goal g{"best", "cublas", 0.85, text};
    g.shape = shape;
    g.at_shape = [m, n, k](const steps::Options& o) {
      return steps::dimension(o, "--m") == m && steps::dimension(o, "--n") == n && steps::dimension(o, "--k") == k;
    };
    return g;
  };
  i.goals.push_back(at(">= 0.85x cuBLAS SGEMM at a short K", "short K 4096 x 4096 x 256", 4096, 4096, 256));
  i.goals.push_back(at(">= 0.85x cuBLAS SGEMM, C tall", "tall 8192 x 2048 x 4096", 8192, 2048, 4096));
  i.goals.push_back(at(">= 0.85x cuBLAS SGEMM, C wide", "wide 2048 x 8192 x 4096", 2048, 8192, 4096));
  i.peak = fp32_peak;
  return i;
}

} // namespace ch03

int main(int argc, char** argv) { return steps::run_chapter(argc, argv, ch03::info(), ch03::registry()); }
