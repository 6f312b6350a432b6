// Chapter 10: FP8 GEMM on Hopper: scaled FP8 products, from CUDA cores to a
// warp-specialized wgmma pipeline, checked and measured against cuBLASLt.
//
// D (BF16, M x N) = A (E4M3, M x K) * B^T (B: E4M3, N x K), both inputs
// K-major, FP32 accumulation, with per-tensor or fine-grained scales (A:
// 1 x 128, B: 128 x 128; see fp8_gemm.cuh). The inputs are random FP32
// matrices with block-to-block changes of magnitude and a few outliers,
// quantized on the GPU (quantize.cuh; not timed).
//
//   v0 cublaslt                  cuBLASLt FP8 matmul on the kernels' own inputs and scales (block
//                                scaling: VEC128 / BLK128x128 scale modes; --per-tensor: scalar
//                                scale pointers): the baseline
//      cublas_bf16               cuBLAS BF16 GEMM of the same inputs dequantized to BF16: a control
//      cublaslt_per_tensor       cuBLASLt with one scale per tensor: a different (easier) problem,
//                                a reference row
//      cublaslt_per_tensor_fast  the same with fast accumulation (no promotion): a reference row
//   v1 naive                     one thread per element of D, CUDA cores
//   v2 mma_sync                  128 x 128 tiles, mma.sync m16n8k32 E4M3 (on Hopper: converted to FP16
//                                HMMA, see v2_mma_sync.cuh), FP32 promotion per 128 K
//   v3a wgmma_cp_async           v2's loads (cp.async, every thread; the 128-byte swizzle by hand),
//                                the math by one warpgroup's wgmma from shared memory, 64 x 128 tiles
//   v3b wgmma                    the same math, loaded by TMA + mbarrier (one thread), 2 stages
//   v4a ring                     v3b with a ring of 4 stages: the loads 3 K blocks ahead
//   v4b warp_roles               a TMA producer warpgroup and two wgmma warpgroups (128 x 128
//                                tiles), full/empty mbarriers per stage, 5 stages, setmaxnreg
//   v4c overlapped               v4b with block kb + 1's wgmma in flight while kb is promoted
//   v4 warp_specialized          v4c persistent (one block per SM loops over tiles), D stored
//                                through shared memory by TMA (--stages: the ring's depth)
//   v5 split_k                   v4, and when the tiles cannot fill the GPU: K split over a
//                                thread-block cluster, partial tiles added through distributed
//                                shared memory
//   v6 wide_tiles                v4 with 128 x 192 tiles, one partial set per warpgroup filled in
//                                two halves (wgmma m64n96k32), 4 stages: fewer tiles, a better fit
//                                on some shapes
//   v7 stream_k                  v6 on the whole waves, then the last, partial wave's tiles cut by
//                                K over the SMs it leaves idle (where that saves enough:
//                                --min-saving): the owner of a tile adds the other blocks'
//                                pieces from global memory
//   v8 small_m                   v4 with 64 x 128 tiles, one math warpgroup per block, 8 stages: at
//                                M = 128 twice v4's tiles, so twice the SMs pull B from DRAM
//      memory_bound              a device-to-device copy of the bytes the GEMM must move: the least
//                                time DRAM allows this shape (memory_bound.cuh), a reference row
//
// Two groups of rows, each with its own data (problem.cuh): the chapter's
// kernels, cuBLASLt's baseline and the BF16 control run the scaling the
// command line asks for (fine by default) on the same quantized inputs; the
// per-tensor cuBLASLt rows run the per-tensor product in every mode. Every
// row is checked against a reference of its own product, with the
// accumulation error of the way it sums (reference.hpp).
//
// Run: ./tutorial run 10    (or build/bin/ch10_fp8_gemm --help)
#include "cublaslt_problem.cuh"
#include "fp8_gemm.cuh"
#include "kernel_problem.cuh"
#include "memory_bound.cuh"
#include "mistakes.cuh"
#include "problem.cuh"
#include "reference.hpp"
#include "v0_cublaslt.cuh"
#include "v1_naive.cuh"
#include "v2_mma_sync.cuh"
#include "v3_wgmma.cuh"
#include "v3a_wgmma_cp_async.cuh"
#include "v4_warp_specialized.cuh"
#include "v4b_warp_roles.cuh"
#include "v5_split_k.cuh"
#include "v6_wide_tiles.cuh"
#include "v7_stream_k.cuh"
#include "v8_small_m.cuh"

#include "steps/chapter.hpp"
#include "steps/cli.hpp"
#include "steps/device.hpp"
#include "steps/peaks.hpp"

#if STEPS_WITH_EXERCISE_FP8_GEMM
#include "yours.cuh"
#endif

#include <climits>
#include <string>
#include <vector>

namespace ch10 {

// The rows the shape rules and the goals name (the registry uses the same
// names; kernel_problem.cuh names kWarpSpecialized and kWideTiles).
constexpr const char* kCublasLt = "cublaslt";
constexpr const char* kCublasBf16 = "cublas_bf16";
constexpr const char* kCublasLtPerTensor = "cublaslt_per_tensor";
constexpr const char* kCublasLtPerTensorFast = "cublaslt_per_tensor_fast";

/// What cuBLASLt's FP8 matmul needs ("" = it can run): sm_89 or newer; N a
/// multiple of 8 (rows of BF16 D start 16-byte aligned); with `block`
/// scales (1 x 128 of A, 128 x 128 of B), Hopper, where we run it (not
/// checked elsewhere), and M a multiple of 4 (its 1 x 128 scales of A are
/// stored M-major, each K block's M scales 16-byte aligned).
std::string cublaslt_needs(std::int64_t m, std::int64_t n, bool block, const steps::Run& run) {
  const steps::DeviceInfo& dev = run.device();
  const std::string sm = "sm_" + std::to_string(dev.cc_major) + std::to_string(dev.cc_minor);
  if (const std::string why = steps::lacks(dev, kFp8MmaFeatures); !why.empty()) return "cuBLASLt's FP8 matmul " + why;
  if (n % 8 != 0) return "cuBLASLt needs N a multiple of 8 (rows of BF16 D 16-byte aligned); N = " + std::to_string(n);
  if (!block) return "";
  // cuBLASLt's 1 x 128 / 128 x 128 block-scaling modes are Hopper's (its
  // documentation lists them for sm_90; Blackwell has its own modes): a
  // fact of the library, not of the architecture table.
  if (!(dev.cc_major == 9 && dev.cc_minor == 0))
    return "cuBLASLt's block scaling is run on Hopper (sm_90) only; this GPU is " + sm;
  if (std::string why = v0::lt_block_scales_missing(); !why.empty()) return why;
  if (m % 4 != 0)
    return "cuBLASLt's block scaling needs M a multiple of 4 (its 1 x 128 scales of A are stored M-major, each K "
           "block's M scales 16-byte aligned); M = " + std::to_string(m);
  return "";
}

// The registry: the CLI, the table and the JSON all come from these groups.
std::vector<steps::GroupPtr> registry() {
  using steps::Role;
  using steps::Run;
  using Lt = CublasLtProblem;
  using Kernels = KernelProblem;
  // One kernel of each Hopper row: its code must be sm_90a's (steps::Row::needs).
  const void* const v3a_kernel = reinterpret_cast<const void*>(v3a::fp8_gemm_cp_async_wgmma);
  const void* const v3_kernel = reinterpret_cast<const void*>(v3::fp8_gemm_wgmma);
  const void* const v4a_kernel = reinterpret_cast<const void*>(v3::fp8_gemm_ring);
  const void* const v4b_kernel = reinterpret_cast<const void*>(v4b::fp8_gemm_warp_roles);
  const void* const v4c_kernel = reinterpret_cast<const void*>(v4b::fp8_gemm_overlapped);
  const void* const v4_kernel = reinterpret_cast<const void*>(v4::fp8_gemm_warp_specialized<kMaxStages>);
  const void* const v6_kernel = reinterpret_cast<const void*>(wide_tiles::fp8_gemm_wide_tiles<AllTiles>);
  const void* const v8_kernel = reinterpret_cast<const void*>(v8::fp8_gemm_small_m);
  steps::GroupOptions lt_options; // asked before the per-tensor problem is built
  lt_options.unavailable = [](const steps::Options& opts, const Run& run) {
    return cublaslt_needs(steps::dimension(opts, "--m"), steps::dimension(opts, "--n"), false, run);
  };
  std::vector<steps::GroupPtr> groups{
      steps::group<Kernels>({
          with_extras<Kernels>(needs<Kernels>(fp8_row<Kernels>(kCublasLt,
                     "v0: cuBLASLt FP8 matmul on these inputs and scales (fine: A 1 x 128 as VEC128_32F, B "
                     "128 x 128 as BLK128x128_32F), default accumulation",
                     Role::baseline, gamma_cublaslt, [](Kernels& p, Run& run) { p.run_cublaslt(run); }),
                     [](const Kernels& p, const Run& run) {
                       return cublaslt_needs(p.m(), p.n(), p.scaling() == Scaling::fine, run);
                     }), [](const Kernels& p) { return p.quantization_extras(); }),
          needing<Kernels>(fp8_row<Kernels>(kCublasBf16, "control: cuBLAS BF16 GEMM of the same inputs dequantized to BF16",
                     Role::reference, gamma_bf16_inputs, [](Kernels& p, Run& run) { p.run_bf16(run); }),
                     kBf16Features, nullptr),
          fp8_row<Kernels>("naive", "v1: one thread per element of D, FP32 on the CUDA cores", Role::version,
                     gamma_cuda_cores, [](Kernels& p, Run& run) { v1::launch(p.gemm(), run.stream()); }),
          needing<Kernels>(fp8_row<Kernels>("mma_sync",
                     "v2: 128 x 128 tiles, mma.sync m16n8k32 E4M3 (FP16 HMMA on Hopper), FP32 promotion every 128 K",
                     Role::version, gamma_tensor_cores,
                     [](Kernels& p, Run& run) { v2::launch(p.gemm(), run.stream()); }),
                     kFp8MmaFeatures, reinterpret_cast<const void*>(v2::fp8_gemm_mma_sync)),
          needing<Kernels>(fp8_row<Kernels>("wgmma_cp_async",
                     "v3a: wgmma m64n128k32 from shared memory, one warpgroup, 64 x 128 tiles; v2's cp.async "
                     "loads into the 128-byte swizzle",
                     Role::version, gamma_tensor_cores,
                     [](Kernels& p, Run& run) { v3a::launch(p.gemm(), run.stream()); }),
                     kWgmmaCpAsyncFeatures, v3a_kernel),
          needing<Kernels>(fp8_row<Kernels>("wgmma",
                     "v3b: v3a's math, loaded by TMA + mbarrier (one thread), double buffer",
                     Role::version, gamma_tensor_cores,
                     [](Kernels& p, Run& run) { v3::launch(p.gemm(), run.stream()); }),
                     kHopperFeatures, v3_kernel),
          needing<Kernels>(fp8_row<Kernels>("ring",
                     "v4a: v3b's kernel with a ring of 4 stages, the loads 3 K blocks ahead",
                     Role::version, gamma_tensor_cores,
                     [](Kernels& p, Run& run) { v3::launch(p.gemm(), run.stream(), true); }),
                     kHopperFeatures, v4a_kernel),
          needing<Kernels>(fp8_row<Kernels>("warp_roles",
                     "v4b: a TMA producer warpgroup + 2 wgmma warpgroups, full/empty mbarriers, 5 stages, "
                     "128 x 128 tiles",
                     Role::version, gamma_tensor_cores,
                     [](Kernels& p, Run& run) { v4b::launch(p.gemm(), run.stream(), false); }),
                     kHopperFeatures, v4b_kernel),
          needing<Kernels>(fp8_row<Kernels>("overlapped",
                     "v4c: v4b with block kb + 1's wgmma in flight while block kb is promoted",
                     Role::version, gamma_tensor_cores,
                     [](Kernels& p, Run& run) { v4b::launch(p.gemm(), run.stream(), true); }),
                     kHopperFeatures, v4c_kernel),
          needing<Kernels>(fp8_row<Kernels>(kWarpSpecialized,
                     "v4: v4c persistent (one block per SM loops over tiles), D stored through shared memory by TMA",
                     Role::version, gamma_tensor_cores,
                     [](Kernels& p, Run& run) { v4::launch(p.gemm(), run.stream(), p.stages()); }),
                     kHopperFeatures, v4_kernel),
          split_k_row(),
          needing<Kernels>(fp8_row<Kernels>(kWideTiles,
                     "v6: v4 with 128 x 192 tiles, one partial set per warpgroup in two halves (wgmma m64n96k32), 4 stages",
                     Role::version, gamma_tensor_cores,
                     [](Kernels& p, Run& run) { v6::launch(p.gemm(), run.stream()); }),
                     kHopperFeatures, v6_kernel),
          stream_k_row(),
          needing<Kernels>(fp8_row<Kernels>("small_m",
                     "v8: v4 with 64 x 128 tiles, one math warpgroup per block, 8 stages: at M = 128 twice the "
                     "tiles, twice the SMs pulling B",
                     Role::version, gamma_tensor_cores,
                     [](Kernels& p, Run& run) { v8::launch(p.gemm(), run.stream()); }),
                     kHopperFeatures, v8_kernel),
          fp8_row<Kernels>("mistake_scale_after_k", "scales applied once after the whole K sum (right only per tensor)",
                     Role::mistake, gamma_cuda_cores,
                     [](Kernels& p, Run& run) {
                       mistakes::launch<mistakes::Bug::scale_after_k>(p.gemm(), run.stream());
                     }),
          fp8_row<Kernels>("mistake_k_tail_dropped", "K / 128 blocks: the partial last K block is skipped", Role::mistake,
                     gamma_cuda_cores,
                     [](Kernels& p, Run& run) {
                       mistakes::launch<mistakes::Bug::k_tail_dropped>(p.gemm(), run.stream());
                     }),
      }),
      steps::group<Lt>(
          {
              fp8_row<Lt>(kCublasLtPerTensor,
                          "different problem: one scale per tensor; cuBLASLt FP8 matmul, default accumulation",
                          Role::reference, gamma_cublaslt, [](Lt& p, Run& run) { p.run(false, run); }),
              fp8_row<Lt>(kCublasLtPerTensorFast,
                          "different problem: one scale per tensor; cuBLASLt FP8, FAST_ACCUM = 1 (no promotion)",
                          Role::reference, gamma_cublaslt, [](Lt& p, Run& run) { p.run(true, run); }),
          },
          lt_options),
      steps::group<MemoryBound>({memory_bound_row()})};
#if STEPS_WITH_EXERCISE_FP8_GEMM
  groups.push_back(yours_group());
#endif
  return groups;
}

/// The shape rules the command line cannot express: a usage error (exit 2)
/// before any GPU work.
void validate(const steps::Options& opts) {
  if (opts.has("--per-tensor") && opts.has("--fine"))
    throw steps::UsageError("--per-tensor and --fine: choose one scaling");
  const std::int64_t k = opts.get("--k");
  if (k % 16 != 0)
    throw steps::UsageError("--k " + std::to_string(k) +
                            ": K must be a multiple of 16 (rows of E4M3 must be whole 16-byte chunks for cp.async "
                            "and cuBLASLt)");
}

steps::ChapterInfo info() {
  steps::ChapterInfo i;
  i.summary = "Multiplies E4M3 matrices with per-tensor or fine-grained (1 x 128 / 128 x 128) scales into BF16: "
              "CUDA cores, mma.sync, wgmma + TMA, and a warp-specialized pipeline, against cuBLASLt's FP8 matmul "
              "on the same inputs and scales (block-scaled), with a BF16 cuBLAS control and cuBLASLt per tensor "
              "for reference.";
  i.metric = steps::Metric::flops;
  // 8192 x 8192 x 4096: 32 MiB per FP8 input, 128 MiB of BF16 output (3x
  // the H200's 60 MiB L2), 550 GFLOP.
  i.default_size = 8192;
  i.size_help = "M = N = SIZE: rows of A and of B (--m, --n override them; K is --k)";
  i.default_iters = 10;
  i.default_warmup = 2;
  i.work_note = "TFLOP/s: 2 * M * N * K floating-point operations per second, 1 TFLOP = 1e12. cublaslt (the "
                "baseline) and cublas_bf16 run the kernels' inputs and scaling; the cublaslt_per_tensor rows run "
                "one scale per tensor in every mode (a different, easier problem).";
  i.baseline = kCublasLt;
  // The goal: faster than the vendor on the same problem (fine-grained
  // scales, promotion every 128 K). Beside it, a stretch: the per-tensor
  // product at default accumulation, i.e. fine-grained scaling at no cost.
  i.goals = {{"best", kCublasLt, 1.10, ">= 1.10x cuBLASLt block-scaled (and >= 1.0x on every bench shape)"},
             {"best", kCublasLt, 1.15, ">= 1.15x cuBLASLt block-scaled (stretch: a different design)"},
             {"best", kCublasLtPerTensor, 1.0, ">= 1.0x cuBLASLt per-tensor (stretch: fine-grained scaling for free)"}};
  // The dense FP8 rate (E4M3 inputs, FP32 accumulation): 8192 FLOP per clock
  // per SM on Hopper, 2048 on Ada, none before sm_89 (steps/arch.hpp).
  i.peak = [](const steps::DeviceInfo& dev) {
    return steps::tensor_peak(dev, steps::TensorType::fp8, "FP8 tensor", "E4M3");
  };
  // No compute capability for the whole chapter: each row says what it
  // needs (v1 runs anywhere, v2 from sm_89, v3a to v8 on Hopper only).
  i.int_options.push_back({"--m", "M", "rows of A and D; 0: --size; a multiple of 4 for cuBLASLt's block scaling",
                           0, 0, INT_MAX});
  i.int_options.push_back({"--n", "N", "rows of B, columns of D; 0: --size; a multiple of 8 for cuBLASLt",
                           0, 0, INT_MAX});
  i.int_options.push_back({"--k", "K", "the dot-product length, a multiple of 16", 4096, 16, INT_MAX});
  i.int_options.push_back({"--outlier-exponent", "E",
                           "outlier rows of A and blocks of B are 2^E times larger than the rest", kDefaultOutlierExponent,
                           0, 24});
  i.int_options.push_back({"--stages", "S", "stages of the v4 / v5 ring (2 to 5): the pipeline depth",
                           v4::kDefaultStages, kMinStages, kMaxStages});
  i.int_options.push_back({"--min-saving", "B",
                           "v7 cuts the last wave's tiles by K only if that shortens them by B K blocks or more",
                           v7::kDefaultMinSaving, 0, INT_MAX});
  i.flag_options.push_back({"--per-tensor", "one FP32 scale per tensor (default: fine-grained)"});
  i.flag_options.push_back({"--fine", "fine-grained scales: A 1 x 128, B 128 x 128 (the default)", true});
  i.validate = validate;
  return i;
}

} // namespace ch10

int main(int argc, char** argv) { return steps::run_chapter(argc, argv, ch10::info(), ch10::registry()); }
