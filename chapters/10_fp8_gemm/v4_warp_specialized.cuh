// Chapter 10, version 4: warp-specialized, pipelined, persistent.
//
// Change from version 4c (v4b_warp_roles.cuh): the block stays. 4c launched
// one block per tile, and each block ended after its store: its producer
// could not load the next tile's first stages while the math warpgroups
// stored D, and every new block paid its start (barrier initialisation, the
// tensor maps' prefetch, setmaxnreg). Here one block per SM loops over
// tiles (grouped by 12 rows of tiles, so that the tiles running at once
// share A and B in L2), and the store goes through shared memory, where the
// copy engine takes it (a TMA store) while the math warpgroups already wait
// for the next tile's data. Everything up to 4c stays: the ring of 5
// stages, the producer and the two math warpgroups, the overlapped
// promotion (pipeline::math_tile).
//
//   block = 3 warpgroups (384 threads), tile 128 x 128, 5 stages of 32 KB
//   (--stages 2..5 picks another depth: the sweep in the lesson)
//
//   warpgroup 0, the producer (1 thread works; 40 registers per thread):
//     for each tile, for each K block:
//       wait empty[s]          (the math warpgroups are done with stage s)
//       expect_tx full[s], 32 KB + 512 B; TMA A (128 x 128 B), B (128 x 128 B)
//       and A's 128 scales of the K block (512 B) -> stage s
//   warpgroups 1 and 2, the math (232 registers per thread), rows 0-63 and 64-127:
//     for each tile, for each K block kb:
//       wait full[s(kb+1)]; issue the 4 wgmma of kb + 1      (tensor cores stay busy)
//       wait for kb's wgmma; arrive empty[s(kb)]; promote kb  (CUDA cores)
//     store the tile through shared memory; meanwhile the producer is
//     already loading the next tile's first stages
//
//   stage ring:  s = 0 1 2 3 4 0 1 2 ...   the phase bit flips each lap
//   full[s]:  1 arrival (producer's expect_tx) + 32.5 KB of TMA bytes per phase
//   empty[s]: 8 arrivals (lane 0 of each math warp) per phase
//
// Why each piece:
//   - Several stages in flight hide the memory latency: 5 x 32.5 KB of the
//     227 KB of shared memory (the epilogue buffers take 32 KB more). A sixth
//     no longer fits beside the scales; before they moved into the stages it
//     did, and did not help (the lesson's stage sweep).
//   - Two math warpgroups, and in each the wgmma of block kb + 1 in flight
//     while block kb is promoted: the tensor cores never wait for the
//     promotion. (Two sets of 64 partial sums plus 64 totals per thread.)
//   - setmaxnreg: the producer needs few registers, the math warpgroups many:
//     40 + 2 x 232 per thread fills the register file as far as a
//     384-thread block may.
//   - A's scales come with the stage (one 512-byte TMA box from the
//     K-block-major copy Fp8Gemm::sa_by_kb), the B scale from global memory
//     through a per-thread pointer; both are read one block ahead and
//     multiplied late (wg::promote).
//   - The epilogue goes through shared memory: when N is a multiple of 8 the
//     copy engine stores the tile (a TMA store, store_tile_tma); otherwise
//     every thread reads the buffer back and stores 16-byte pieces
//     (store_tile).
//   - Persistent: one block per SM loops over tiles (grouped by 12 rows of
//     tiles, so that the tiles running at once share A and B in L2).
//
// Where the pieces are: ring.cuh (the stages and their barriers),
// producer.cuh (the loads), pipeline.cuh (this block's shape, its shared
// memory and the math loop), wgmma_math.cuh (one K block of wgmma and its
// promotion), epilogue.cuh (the stores of D), scheduler.cuh (the tile order).
//
// On the H200 at 8192 x 8192 x 4096, in the last benchmark run:
// 1379 TFLOP/s {n:10:warp_specialized:value|.0f}, 1.05x {n:10:warp_specialized:base} cuBLASLt block-scaled.
#pragma once

#include "epilogue.cuh"
#include "fp8_gemm.cuh"
#include "pipeline.cuh"
#include "producer.cuh"
#include "ring.cuh"
#include "scheduler.cuh"
#include "tma.hpp"
#include "trace.cuh"
#include "wgmma_math.cuh"

#include "steps/error.hpp"
#include "steps/math.hpp"
#include "steps/ptx.cuh"

#include <algorithm>
#include <climits>
#include <stdexcept>

namespace ch10::v4 {

namespace ptx = steps::ptx;
using pipeline::BLOCK_M;
using pipeline::BLOCK_N;

/// The ring depth by default (--stages picks 2 to 5): 5 fills shared memory
/// (the lesson's stage sweep).
constexpr int kDefaultStages = 5;

/// `kTrace`: record the warp roles' timeline into `trace` (trace.cuh; the
/// program warp_roles.cu). The chapter's rows run kTrace = false, where the
/// recorder compiles to nothing.
template <int Stages, bool kTrace = false>
__global__ void __launch_bounds__(pipeline::kThreads, 1)
    fp8_gemm_warp_specialized(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                              const __grid_constant__ CUtensorMap map_sa, const __grid_constant__ CUtensorMap map_d,
                              bool tma_store, Fp8Gemm p, TraceBuffer trace_buffer) {
#if STEPS_PTX_SM90A // wgmma, setmaxnreg, TMA: sm_90a only (steps/ptx.cuh)
  extern __shared__ std::uint8_t smem_raw[];
  const pipeline::Smem<Stages> sm(wg::align_1024(smem_raw));
  std::uint8_t* smem = sm.ring;
  std::uint8_t* out = sm.out; // kMathGroups epilogue buffers
  std::uint64_t* full = sm.full;
  std::uint64_t* empty = sm.empty;

  init_ring<Stages, pipeline::kMathGroups>(full, empty);

  const int tiles_m = steps::ceil_div(p.m, BLOCK_M), tiles_n = steps::ceil_div(p.n, BLOCK_N);
  const int tiles = tiles_m * tiles_n;
  const int num_kb = k_blocks(p.k);
  // 0 producer, 1.. math. Read from lane 0, so that the compiler knows it is
  // the same in the whole warp: the shared-memory addresses and descriptors
  // computed from it then live in uniform registers.
  const int role = __shfl_sync(0xffffffff, static_cast<int>(threadIdx.x / 128), 0);
  auto trace = make_tracer<kTrace>(trace_buffer, role, threadIdx.x % 128 == 0);

  if (role == 0) {
    ptx::setmaxnreg_dec<pipeline::kProducerRegs>();
    if (threadIdx.x == 0)
      produce<Stages, BLOCK_M, BLOCK_N>(&map_a, &map_b, &map_sa, smem, sm.scales, full, empty, tiles_m, tiles_n,
                                        blockIdx.x, gridDim.x, 0, num_kb, trace);
  } else {
    ptx::setmaxnreg_inc<pipeline::kMathRegs>();
    const int math = role - 1; // rows 64 * math .. of the tile
    const int warp_in_group = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    const std::uint32_t a_lo = ptx::wgmma_desc_sw128_lo(smem + math * wg::kMathRows * wg::kRowBytes);
    const std::uint32_t b_lo = ptx::wgmma_desc_sw128_lo(smem + pipeline::kABytes);
    const std::uint32_t sa = ptx::smem_addr(thread_scales(sm.scales, math, warp_in_group, lane));
    Ring<Stages> ring;
    float partial0[wg::kAccum] = {}, partial1[wg::kAccum] = {};
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      int m0, n0;
      tile_at<BLOCK_M, BLOCK_N>(t, tiles_m, tiles_n, m0, n0);
      float total[wg::kAccum] = {};
      pipeline::math_tile(sa, p.sb.address(n0, 0), p.sb.kb_stride, a_lo, b_lo, full, empty, ring, num_kb, total,
                          partial0, partial1, trace);
      const int row0 = m0 + math * wg::kMathRows;
      trace(TraceEvent::store);
      if (tma_store) {
        if (row0 < p.m) store_tile_tma(&map_d, total, out + math * pipeline::kOutBytes, row0, n0, 1 + math);
      } else {
        store_tile(p, total, out + math * pipeline::kOutBytes, row0, n0, 1 + math);
      }
      trace(TraceEvent::stored);
    }
    // The last stores must finish reading shared memory before the block ends.
    if (tma_store && threadIdx.x % 128 == 0) ptx::bulk_wait<0>();
  }
#endif
}

/// What every launch of v4 on one problem takes besides the kernel's
/// template arguments: the tensor maps and the grid.
struct LaunchPlan {
  CUtensorMap map_a, map_b, map_sa, map_d{}; ///< map_d stays zero (unused) when N is not a multiple of 8
  bool tma_store = false;
  int grid = 0;
};

inline LaunchPlan plan_launch(const Fp8Gemm& p) {
  LaunchPlan l;
  l.map_a = make_tensor_map_k_major(p.a, p.m, p.k, BLOCK_M);
  l.map_b = make_tensor_map_k_major(p.b, p.n, p.k, BLOCK_N);
  l.map_sa = make_tensor_map_scales(p.sa_by_kb, p.m, k_blocks(p.k), p.sa_by_kb_ld, BLOCK_M);
  l.tma_store = make_tensor_map_d(p.d, p.m, p.n, wg::kMathRows, l.map_d);
  // One block per SM (a block takes most of the SM's shared memory and all
  // of its registers), never more blocks than tiles.
  const long long tiles = static_cast<long long>(steps::ceil_div(p.m, BLOCK_M)) * steps::ceil_div(p.n, BLOCK_N);
  if (tiles > INT_MAX) throw std::invalid_argument("v4: more than 2^31 - 1 tiles");
  l.grid = static_cast<int>(std::min<long long>(sm_count(), tiles));
  return l;
}

template <int Stages, bool kTrace = false>
void launch_stages(const Fp8Gemm& p, const LaunchPlan& l, cudaStream_t stream, TraceBuffer trace = {}) {
  CUDA_CHECK(cudaFuncSetAttribute(fp8_gemm_warp_specialized<Stages, kTrace>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, pipeline::smem_bytes(Stages)));
  fp8_gemm_warp_specialized<Stages, kTrace><<<l.grid, pipeline::kThreads, pipeline::smem_bytes(Stages), stream>>>(
      l.map_a, l.map_b, l.map_sa, l.map_d, l.tma_store, p, trace);
  CUDA_CHECK_LAUNCH();
}

/// v4 with a ring of `stages` stages (kMinStages .. kMaxStages, ring.cuh).
inline void launch(const Fp8Gemm& p, cudaStream_t stream, int stages = kDefaultStages) {
  const LaunchPlan l = plan_launch(p);
  with_stages(stages, [&](auto depth) { launch_stages<decltype(depth)::value>(p, l, stream); });
}

} // namespace ch10::v4
