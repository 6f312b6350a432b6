// Chapter 10, version 5: when the tiles cannot fill the GPU, split K over a
// thread-block cluster and add the pieces through distributed shared memory.
//
// Change from version 4: nothing inside the K loop. What changes is who
// works. At M = 128, N = 2112, K = 7168 (a DeepSeek-V3 shape) D has 17 tiles
// of 128 x 128: v4 keeps 17 of the 132 SMs busy, each for 56 K blocks. v5
// cuts every tile's K blocks into S slices and gives them to the S blocks of
// one cluster, which the hardware runs at the same time on S SMs of one GPC:
//
//   one tile, S = 4:     K blocks  0 .. 13 | 14 .. 27 | 28 .. 41 | 42 .. 55
//                        block     rank 0  | rank 1   | rank 2   | rank 3
//
//   1. each block runs v4's producer and math warpgroups (pipeline.cuh)
//      over its slice and writes its 128 x 128 FP32 partial tile into its
//      own shared memory (the ring's memory: the ring is empty by then)
//   2. cluster barrier: every partial tile is written
//   3. block r adds rows 128 r / S .. 128 (r + 1) / S of the S partial
//      tiles, reading the other blocks' shared memory directly (distributed
//      shared memory: cluster.map_shared_rank), in rank order, so that every
//      run adds the same numbers in the same order, and stores them as BF16
//   4. cluster barrier: no block exits while another still reads its memory
//
// No workspace in global memory, no second kernel, no atomics.
//
// S is the largest number up to 8 (the portable cluster size) such that
//   - the tiles x S blocks all run at once: cudaOccupancyMaxActiveClusters
//     says how many clusters of S fit (a cluster must fit in one GPC, so
//     this is fewer than SMs / S), and
//   - every slice keeps at least kMinBlocksPerSlice K blocks (the ring needs
//     a few blocks to fill, and each slice pays for one reduction).
// When no S > 1 qualifies (the tiles fill the GPU anyway, or K is too
// short to split), v5 is v4.
#pragma once

#include "fp8_gemm.cuh"
#include "pipeline.cuh"
#include "producer.cuh"
#include "ring.cuh"
#include "scheduler.cuh"
#include "tma.hpp"
#include "wgmma_math.cuh"

#include "steps/error.hpp"
#include "steps/math.hpp"
#include "steps/ptx.cuh"

#include <cooperative_groups.h>

#include <climits>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace ch10::v5 {

namespace ptx = steps::ptx;

using pipeline::BLOCK_M;
using pipeline::BLOCK_N;
/// The largest cluster every Hopper GPU runs without opting in.
constexpr int kMaxSplits = 8;
/// K blocks a slice keeps at least.
constexpr int kMinBlocksPerSlice = 4;
/// Floats between rows of the FP32 partial tile in shared memory: 128 + 4,
/// so that the 8 rows a warp's fragment store touches start in 8 different
/// banks (128 floats per row would put them all in the same one).
constexpr int kPartialStride = BLOCK_N + 4;
constexpr int kPartialBytes = BLOCK_M * kPartialStride * 4; // 67,584 B
static_assert(kPartialBytes <= kMinStages * pipeline::kStageBytes + pipeline::kMathGroups * pipeline::kOutBytes,
              "the partial tile must fit in the ring and epilogue buffers of the shallowest ring");

template <int Stages>
__global__ void __launch_bounds__(pipeline::kThreads, 1)
    fp8_gemm_split_k(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                     const __grid_constant__ CUtensorMap map_sa, Fp8Gemm p) {
#if STEPS_PTX_SM90A // wgmma, setmaxnreg, TMA: sm_90a only (steps/ptx.cuh)
  namespace cg = cooperative_groups;
  const cg::cluster_group cluster = cg::this_cluster();
  const int splits = static_cast<int>(cluster.num_blocks()), rank = static_cast<int>(cluster.block_rank());

  extern __shared__ std::uint8_t smem_raw[];
  const pipeline::Smem<Stages> sm(wg::align_1024(smem_raw));
  std::uint8_t* smem = sm.ring;
  std::uint64_t* full = sm.full;
  std::uint64_t* empty = sm.empty;
  float* partial_tile = reinterpret_cast<float*>(smem); // after the K loop: this block's FP32 piece of the tile

  init_ring<Stages, pipeline::kMathGroups>(full, empty);

  // The cluster's tile, and this block's slice of its K blocks.
  const int tiles_m = steps::ceil_div(p.m, BLOCK_M), tiles_n = steps::ceil_div(p.n, BLOCK_N);
  const int tile = static_cast<int>(blockIdx.x) / splits;
  int m0, n0;
  tile_at<BLOCK_M, BLOCK_N>(tile, tiles_m, tiles_n, m0, n0);
  const int num_kb = k_blocks(p.k);
  const int kb0 = num_kb * rank / splits, kb1 = num_kb * (rank + 1) / splits;
  const int role = __shfl_sync(0xffffffff, static_cast<int>(threadIdx.x / 128), 0); // warp-uniform: read from lane 0

  if (role == 0) {
    ptx::setmaxnreg_dec<pipeline::kProducerRegs>();
    if (threadIdx.x == 0) // the producer over one tile's slice of K
      produce<Stages, BLOCK_M, BLOCK_N>(&map_a, &map_b, &map_sa, smem, sm.scales, full, empty, tiles_m, tiles_n, tile,
                                        tiles_m * tiles_n, kb0, kb1);
    // The producer's warps stay to the end: every thread of the cluster
    // meets at the two cluster barriers of the math warpgroups below. (Each
    // role calls them in its own branch: code after the branches would be
    // compiled for the producer's 40 registers, and spill.)
    __syncwarp();
    cluster.sync();
    cluster.sync();
  } else {
    ptx::setmaxnreg_inc<pipeline::kMathRegs>();
    const int math = role - 1, warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    Ring<Stages> ring;
    float partial0[wg::kAccum] = {}, partial1[wg::kAccum] = {}, total[wg::kAccum] = {};
    // Zeroed here, not between the first wgmma and its wait: moved there, the
    // zeroing makes the compiler wait for that wgmma (ptxas warning C7517).
    wg::fence_operands(total);
    wg::fence_operands(partial1);
    pipeline::math_tile(ptx::smem_addr(thread_scales(sm.scales, math, warp, lane)), p.sb.address(n0, kb0),
                        p.sb.kb_stride, ptx::wgmma_desc_sw128_lo(smem + math * wg::kMathRows * wg::kRowBytes),
                        ptx::wgmma_desc_sw128_lo(smem + pipeline::kABytes), full, empty, ring, kb1 - kb0, total,
                        partial0, partial1);
    // Both math warpgroups have finished reading the ring (their last wgmma
    // waited for) before either overwrites it with its partial tile.
    ptx::named_barrier_sync(3, 256);
    const int row0 = math * wg::kMathRows + 16 * warp + lane / 4, col0 = 2 * (lane % 4);
#pragma unroll
    for (int i = 0; i < wg::kAccum / 4; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        *reinterpret_cast<float2*>(partial_tile + (row0 + 8 * h) * kPartialStride + col0 + 8 * i) =
            make_float2(total[4 * i + 2 * h], total[4 * i + 2 * h + 1]);

    cluster.sync(); // every block's partial tile is written (release / acquire across the cluster)

    // This block's rows of the tile: the sum of all S partial tiles, in rank
    // order, 4 columns per thread and item (a warp covers one 128-column
    // row). Whatever S, a block reads 128 x 128 floats in all: 16 float4 per
    // thread, in kItems items of S loads. The items are unrolled so that
    // their loads (most of them from other SMs' shared memory, about as far
    // away as L2) are in flight together, not one after another.
    const int tid = threadIdx.x - 128;
    const int r0 = BLOCK_M * rank / splits, r1 = BLOCK_M * (rank + 1) / splits;
    constexpr int kQuads = BLOCK_N / 4;
    constexpr int kItems = steps::ceil_div(steps::ceil_div(BLOCK_M, 2) * kQuads, 256); // S >= 2: at most 64 rows
    const int items = (r1 - r0) * kQuads;
    float4 sum[kItems];
#pragma unroll
    for (int j = 0; j < kItems; ++j) sum[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int q = 0; q < splits; ++q) {
      const float* peer = cluster.map_shared_rank(partial_tile, q);
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        const int idx = tid + 256 * j;
        if (idx >= items) break;
        const float4 v =
            *reinterpret_cast<const float4*>(peer + (r0 + idx / kQuads) * kPartialStride + 4 * (idx % kQuads));
        sum[j].x += v.x;
        sum[j].y += v.y;
        sum[j].z += v.z;
        sum[j].w += v.w;
      }
    }
    const bool vector_ok = p.n % 4 == 0; // every 4 BF16 of a row then start 8-byte aligned
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int idx = tid + 256 * j;
      const int row = m0 + r0 + idx / kQuads, col = n0 + 4 * (idx % kQuads);
      if (idx >= items || row >= p.m || col >= p.n) continue;
      const __nv_bfloat162 lo = __floats2bfloat162_rn(sum[j].x, sum[j].y);
      const __nv_bfloat162 hi = __floats2bfloat162_rn(sum[j].z, sum[j].w);
      __nv_bfloat16* dst = p.d + static_cast<std::size_t>(row) * p.n + col;
      if (vector_ok && col + 4 <= p.n) {
        __nv_bfloat162* d2 = reinterpret_cast<__nv_bfloat162*>(dst);
        d2[0] = lo;
        d2[1] = hi;
      } else {
        const __nv_bfloat16 v[4] = {lo.x, lo.y, hi.x, hi.y};
#pragma unroll
        for (int x = 0; x < 4; ++x)
          if (col + x < p.n) dst[x] = v[x];
      }
    }
    cluster.sync(); // the other blocks have read this block's shared memory
  }
#endif
}

/// How v5 runs one problem: K cut into `splits` slices (1: v4 as it is).
struct Plan {
  int tiles = 0;
  int splits = 1;
  int k_blocks = 0;
  std::string describe() const {
    if (splits == 1 && k_blocks / 2 < kMinBlocksPerSlice)
      return std::to_string(tiles) + " tiles of 128 x 128, K too short to split (" + std::to_string(k_blocks) +
             " blocks; two slices of " + std::to_string(kMinBlocksPerSlice) + " need " +
             std::to_string(2 * kMinBlocksPerSlice) + "): no split (v4)";
    if (splits == 1)
      return std::to_string(tiles) + " tiles of 128 x 128 fill the GPU: no split (v4)";
    return std::to_string(tiles) + " tiles of 128 x 128, K (" + std::to_string(k_blocks) + " blocks) split " +
           std::to_string(splits) + " ways: " + std::to_string(tiles) + " clusters of " + std::to_string(splits) +
           " blocks on " + std::to_string(tiles * splits) + " SMs";
  }
};

template <int Stages>
cudaLaunchConfig_t launch_config(int tiles, int splits, cudaLaunchAttribute& cluster, cudaStream_t stream) {
  CUDA_CHECK(cudaFuncSetAttribute(fp8_gemm_split_k<Stages>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  pipeline::smem_bytes(Stages)));
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = static_cast<unsigned int>(splits);
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned int>(tiles * splits));
  config.blockDim = dim3(pipeline::kThreads);
  config.dynamicSmemBytes = static_cast<std::size_t>(pipeline::smem_bytes(Stages));
  config.stream = stream;
  config.attrs = &cluster;
  config.numAttrs = 1;
  return config;
}

/// How many clusters of `splits` blocks the GPU runs at once.
template <int Stages>
int max_active_clusters(int splits) {
  cudaLaunchAttribute cluster;
  const cudaLaunchConfig_t config = launch_config<Stages>(splits, splits, cluster, nullptr);
  int clusters = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, fp8_gemm_split_k<Stages>, &config));
  return clusters;
}

template <int Stages>
Plan plan_stages(const Fp8Gemm& p) {
  const int sms = sm_count();
  const long long tiles = static_cast<long long>(steps::ceil_div(p.m, BLOCK_M)) * steps::ceil_div(p.n, BLOCK_N);
  Plan plan;
  plan.tiles = static_cast<int>(std::min<long long>(tiles, INT_MAX));
  plan.k_blocks = k_blocks(p.k);
  for (int s = kMaxSplits; s > 1; --s)
    if (tiles * s <= sms && plan.k_blocks / s >= kMinBlocksPerSlice && max_active_clusters<Stages>(s) >= tiles) {
      plan.splits = s;
      break;
    }
  return plan;
}

template <int Stages>
void launch_stages(const Fp8Gemm& p, const Plan& plan, cudaStream_t stream) {
  const CUtensorMap map_a = make_tensor_map_k_major(p.a, p.m, p.k, BLOCK_M);
  const CUtensorMap map_b = make_tensor_map_k_major(p.b, p.n, p.k, BLOCK_N);
  const CUtensorMap map_sa = make_tensor_map_scales(p.sa_by_kb, p.m, k_blocks(p.k), p.sa_by_kb_ld, BLOCK_M);
  cudaLaunchAttribute cluster;
  const cudaLaunchConfig_t config = launch_config<Stages>(plan.tiles, plan.splits, cluster, stream);
  CUDA_CHECK(cudaLaunchKernelEx(&config, fp8_gemm_split_k<Stages>, map_a, map_b, map_sa, p));
  CUDA_CHECK_LAUNCH();
}

/// The plan for problem `p` with a ring of `stages` stages (made once per
/// problem: it asks the occupancy calculator).
inline Plan plan(const Fp8Gemm& p, int stages) {
  return with_stages(stages, [&](auto depth) { return plan_stages<decltype(depth)::value>(p); });
}

/// v5 where `plan` splits K (plan.splits > 1; otherwise v4 runs instead:
/// kernel_problem.cuh).
inline void launch(const Fp8Gemm& p, const Plan& plan, int stages, cudaStream_t stream) {
  if (plan.splits < 2) throw std::invalid_argument("v5: a plan that does not split K (run v4)");
  with_stages(stages, [&](auto depth) { launch_stages<decltype(depth)::value>(p, plan, stream); });
}

} // namespace ch10::v5
