// Exercise 10, part 3 (wgmma): what is given (and correct). Your wgmma.cu
// and the solution both include this file; you do not need to change it.
//
//   - the tensor maps: TMA copies 64 x 128-byte boxes of A and 128 x 128-byte
//     boxes of B into shared memory with the 128-byte swizzle, zeros past m,
//     n and k;
//   - the kernel around your two functions: one warpgroup (128 threads) per
//     64 x 128 tile of D, K in blocks of 128 bytes, two stages with one
//     mbarrier each (thread 0 loads block kb + 1 while everyone computes
//     block kb), the promotion total += partial after each K block, and the
//     epilogue (FP32, inside m x n only);
//   - the wgmma wrappers you call (wg_fence, wg_mma, wg_commit, wg_wait),
//     which also check the order of your calls (see "The checks" below);
//   - the trace for the grader and the launch.
//
// The checks. Each wrapper keeps, per thread, where the warpgroup is in the
// wgmma protocol (in shared memory): a wgmma issued with no wgmma.fence since
// the accumulators were last touched by ordinary instructions, or k_block
// returning while wgmma are still uncommitted or not waited for, is written
// to the trace. ptxas repairs both in the machine code when it can see them
// (it injects the missing warpgroup.arrive or warpgroup.wait and says so with
// -Xptxas -v: C7519, C7517), so the results alone would not show them.
#pragma once

#include "wgmma.hpp"

#include "steps/error.hpp"
#include "steps/math.hpp"
#include "steps/ptx.cuh" // mbarrier, TMA and wgmma instructions
#include "steps/tma.hpp" // the tensor maps

#include <cuda.h>
#include <cudaTypedefs.h>

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ex10::wgmma {

namespace ptx = steps::ptx;

constexpr int BLOCK_M = 64;   ///< rows of D per block: one wgmma m64
constexpr int BLOCK_N = 128;  ///< columns of D per block: one wgmma n128
constexpr int BLOCK_K = 128;  ///< K bytes per stage: one 128-byte swizzled row, 4 wgmma k32
constexpr int kThreads = 128; ///< one warpgroup
constexpr int kStages = 2;
constexpr int kABytes = BLOCK_M * BLOCK_K;         // 8 KB
constexpr int kStageBytes = kABytes + BLOCK_N * BLOCK_K; // 24 KB
constexpr int kAccum = BLOCK_M * BLOCK_N / kThreads;     // 64 FP32 registers per thread

/// This thread's piece of the 64 x 128 tile (PTX ISA, wgmma m64nNk32 f32
/// accumulator): for i = 0..15, with w = warp (0..3) and l = lane,
///   d[4i], d[4i+1]:   row 16w + l/4,     columns 8i + 2(l%4), 8i + 2(l%4) + 1
///   d[4i+2], d[4i+3]: row 16w + l/4 + 8, the same columns
/// (A typedef: Doxygen 1.9 misreads the `using` form of an array type.)
typedef float Accumulators[kAccum];

// ------------------------------------------------------------- yours (wgmma.cu)

/// The shared-memory matrix descriptor of a tile that TMA wrote (see wgmma.cu).
__device__ std::uint64_t make_descriptor(const std::uint8_t* tile);
/// One K block: partial = A tile (64 x 128 bytes) x B tile (128 x 128 bytes)^T (see wgmma.cu).
__device__ void k_block(Accumulators& partial, const std::uint8_t* a_tile, const std::uint8_t* b_tile);

// ------------------------------------------------------------------ the checks

#ifndef STEPS_WGMMA_CHECKED
#define STEPS_WGMMA_CHECKED 1
#endif

/// Dynamic shared memory, from a 1024-byte boundary (the 128-byte swizzle's
/// period): the stages, their barriers, and the protocol shadow.
struct Shared {
  std::uint8_t stage[kStages][kStageBytes]; // A tile (8 KB), then B tile (16 KB)
  std::uint64_t full[kStages];              // the TMA copies of a stage have landed
  Trace* trace;
  int kb;                                   // the K block being computed
  int fenced[kThreads];                     // 1: wgmma.fence since the accumulators were last touched
  int pending[kThreads];                    // wgmma issued and not committed yet
  int groups[kThreads];                     // committed groups not waited for yet
};
constexpr int kSmemBytes = static_cast<int>(sizeof(Shared)) + 1024; // + room to align to 1024

inline Trace* g_trace = nullptr;
__device__ int g_trace_claimed;

__device__ __forceinline__ Shared& shared() {
  extern __shared__ __align__(128) std::uint8_t wgmma_smem[];
  const auto p = (reinterpret_cast<std::uintptr_t>(wgmma_smem) + 1023) & ~std::uintptr_t{1023};
  return *reinterpret_cast<Shared*>(p);
}

/// Writes the first finding of the launch into the trace (the kernel goes on).
__device__ __noinline__ void report(Finding f) {
  Shared& sm = shared();
  if (sm.trace == nullptr || atomicCAS(&g_trace_claimed, 0, 1) != 0) return;
  volatile Trace* t = sm.trace;
  t->block_x = static_cast<int>(blockIdx.x);
  t->block_y = static_cast<int>(blockIdx.y);
  t->thread = static_cast<int>(threadIdx.x);
  t->kb = sm.kb;
  __threadfence_system();
  t->finding = static_cast<int>(f);
  __threadfence_system();
}

// ------------------------------------------------------- the wgmma you call

/// wgmma.fence: this thread's earlier register accesses (the accumulators,
/// touched by the promotion after the previous K block) are ordered before
/// the wgmma that follow.
__device__ __forceinline__ void wg_fence() {
  ptx::wgmma_fence();
#if STEPS_WGMMA_CHECKED
  shared().fenced[threadIdx.x] = 1;
#endif
}

/// One wgmma m64n128k32 E4M3 x E4M3 -> FP32 of the warpgroup:
///   d = A (64 x 32, at desc_a) * B (128 x 32, at desc_b)^T + (accumulate ? d : 0)
/// Asynchronous: d holds the result only after wg_commit() and wg_wait().
__device__ __forceinline__ void wg_mma(Accumulators& d, std::uint64_t desc_a, std::uint64_t desc_b, bool accumulate) {
#if STEPS_WGMMA_CHECKED
  Shared& sm = shared();
  if (!sm.fenced[threadIdx.x]) report(Finding::mma_without_fence);
  ++sm.pending[threadIdx.x];
#endif
  ptx::wgmma_m64n128k32_e4m3(d, desc_a, desc_b, accumulate ? 1u : 0u);
}

/// wgmma.commit_group: closes the wgmma issued since the last commit into a group.
__device__ __forceinline__ void wg_commit() {
  ptx::wgmma_commit();
#if STEPS_WGMMA_CHECKED
  Shared& sm = shared();
  if (sm.pending[threadIdx.x] > 0) ++sm.groups[threadIdx.x];
  sm.pending[threadIdx.x] = 0;
#endif
}

/// wgmma.wait_group 0: waits until every committed group has completed.
__device__ __forceinline__ void wg_wait() {
  ptx::wgmma_wait<0>();
#if STEPS_WGMMA_CHECKED
  shared().groups[threadIdx.x] = 0;
#endif
}

// ------------------------------------------------------------------ the kernel

/// Tells the compiler that every accumulator may have changed here (an empty
/// asm that "redefines" each register): it must not move reads of them across
/// the wgmma that write them asynchronously.
__device__ __forceinline__ void fence_operands(Accumulators& r) {
#pragma unroll
  for (int i = 0; i < kAccum; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

/// After k_block: the results must be in the registers now (checked builds).
/// The promotion then touches them, so the next K block needs a new fence.
__device__ __forceinline__ void after_k_block() {
#if STEPS_WGMMA_CHECKED
  Shared& sm = shared();
  if (sm.pending[threadIdx.x] > 0) report(Finding::not_committed);
  else if (sm.groups[threadIdx.x] > 0) report(Finding::not_waited);
  sm.pending[threadIdx.x] = 0;
  sm.groups[threadIdx.x] = 0;
  sm.fenced[threadIdx.x] = 0;
#endif
}

__global__ void __launch_bounds__(kThreads) wgmma_gemm_kernel(const __grid_constant__ CUtensorMap map_a,
                                                              const __grid_constant__ CUtensorMap map_b, float* d,
                                                              int m, int n, int k, Trace* trace) {
  Shared& sm = shared();
  const int m0 = static_cast<int>(blockIdx.y) * BLOCK_M, n0 = static_cast<int>(blockIdx.x) * BLOCK_N;
  const int kbs = steps::ceil_div(k, BLOCK_K);
  if (threadIdx.x == 0) {
    ptx::tma_prefetch_map(&map_a);
    ptx::tma_prefetch_map(&map_b);
    for (int s = 0; s < kStages; ++s) ptx::mbarrier_init(&sm.full[s], 1); // one arrival: thread 0's expect_tx
    ptx::fence_barrier_init();
    sm.trace = trace;
    sm.kb = 0;
  }
  sm.fenced[threadIdx.x] = 0;
  sm.pending[threadIdx.x] = 0;
  sm.groups[threadIdx.x] = 0;
  __syncthreads();

  // Thread 0: K block kb on its way into stage kb % 2 (zeros past m, n, k;
  // the barrier counts the full boxes' bytes either way).
  auto load = [&](int kb) {
    std::uint8_t* stage = sm.stage[kb % kStages];
    std::uint64_t* bar = &sm.full[kb % kStages];
    ptx::mbarrier_arrive_expect_tx(bar, kStageBytes);
    ptx::tma_load_2d(stage, &map_a, bar, kb * BLOCK_K, m0);
    ptx::tma_load_2d(stage + kABytes, &map_b, bar, kb * BLOCK_K, n0);
  };
  if (threadIdx.x == 0) load(0);

  Accumulators total = {};
  Accumulators partial = {};
  for (int kb = 0; kb < kbs; ++kb) {
    if (threadIdx.x == 0) sm.kb = kb;
    // Stage (kb + 1) % 2 held block kb - 1, released by the __syncthreads() below.
    if (threadIdx.x == 0 && kb + 1 < kbs) load(kb + 1);
    const std::uint8_t* a_tile = sm.stage[kb % kStages];
    const std::uint8_t* b_tile = a_tile + kABytes;
    ptx::mbarrier_wait(&sm.full[kb % kStages], (kb / kStages) & 1);
    if (trace != nullptr && kb == 0 && blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) {
      volatile Trace* t = trace;
      t->addr_a = ptx::smem_addr(a_tile);
      t->addr_b = ptx::smem_addr(b_tile);
      t->desc_a = make_descriptor(a_tile);
      t->desc_b = make_descriptor(b_tile);
      __threadfence_system();
      t->recorded = 1;
      __threadfence_system();
    }
    fence_operands(partial);
    k_block(partial, a_tile, b_tile);
    fence_operands(partial);
    after_k_block();
#pragma unroll
    for (int i = 0; i < kAccum; ++i) total[i] += partial[i]; // the promotion (no scales here)
    __syncthreads(); // every warp is done with this stage: the load of kb + 2 may overwrite it
  }

  // The epilogue: this thread's rows and columns (see Accumulators).
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int row0 = m0 + 16 * warp + lane / 4, col0 = n0 + 2 * (lane % 4);
#pragma unroll
  for (int i = 0; i < kAccum / 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int row = row0 + 8 * (j / 2), col = col0 + 8 * i + j % 2;
      if (row < m && col < n) d[static_cast<std::size_t>(row) * n + col] = total[4 * i + j];
    }
}

// -------------------------------------------------------------------- the host

/// The tensor map of a row-major matrix of `rows` rows of `k` bytes (E4M3
/// codes, `k` a multiple of 16), copied in boxes of `box_rows` rows x 128
/// bytes and laid out in shared memory with the 128-byte swizzle: 16-byte
/// chunk c of row r of a box lands in slot c ^ (r % 8) of that row. Bytes
/// past the matrix (the last rows, the K tail) arrive as zeros.
inline CUtensorMap swizzled_map(const void* base, int rows, int k, int box_rows) {
  return steps::encode_2d(CU_TENSOR_MAP_DATA_TYPE_UINT8, base, static_cast<std::uint64_t>(k),
                          static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(k), BLOCK_K,
                          static_cast<std::uint32_t>(box_rows), CU_TENSOR_MAP_SWIZZLE_128B,
                          CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "a swizzled operand of the wgmma exercise");
}

/// The sizes gemm accepts (wgmma.hpp); throws std::invalid_argument otherwise.
inline void check_arguments(int m, int n, int k, const void* a, const void* b) {
  const std::string shape = std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(k);
  if (m < 1 || n < 1 || k < 16 || k % 16 != 0)
    throw std::invalid_argument("wgmma gemm: need m, n >= 1 and k a positive multiple of 16 (got " + shape + ")");
  if (1LL * m * k > INT_MAX || 1LL * n * k > INT_MAX || 1LL * m * n > INT_MAX)
    throw std::invalid_argument("wgmma gemm: A (m x k), B (n x k) and D (m x n) must each have fewer than 2^31 "
                                "elements (got " + shape + ")");
  if (steps::ceil_div(m, BLOCK_M) > 65535)
    throw std::invalid_argument("wgmma gemm: m must be at most 65535 * 64 (one grid; got " + shape + ")");
  if (reinterpret_cast<std::uintptr_t>(a) % 16 != 0 || reinterpret_cast<std::uintptr_t>(b) % 16 != 0)
    throw std::invalid_argument("wgmma gemm: A and B must be 16-byte aligned (TMA)");
}

} // namespace ex10::wgmma

// The host functions of wgmma.hpp (this header is included by wgmma.cu only:
// one definition each).
namespace ex10::wgmma {

void set_trace(Trace* mapped) { g_trace = mapped; }

void gemm(int m, int n, int k, const __nv_fp8_e4m3* a, const __nv_fp8_e4m3* b, float* d, cudaStream_t stream) {
  check_arguments(m, n, k, a, b);
  const CUtensorMap map_a = swizzled_map(a, m, k, BLOCK_M);
  const CUtensorMap map_b = swizzled_map(b, n, k, BLOCK_N);
  Trace* trace = nullptr;
  if (g_trace != nullptr) CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&trace), g_trace, 0));
  void* claimed = nullptr;
  CUDA_CHECK(cudaGetSymbolAddress(&claimed, g_trace_claimed));
  CUDA_CHECK(cudaMemsetAsync(claimed, 0, sizeof(int), stream));
  CUDA_CHECK(cudaFuncSetAttribute(wgmma_gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  const dim3 grid(static_cast<unsigned>(steps::ceil_div(n, BLOCK_N)), static_cast<unsigned>(steps::ceil_div(m, BLOCK_M)));
  wgmma_gemm_kernel<<<grid, kThreads, kSmemBytes, stream>>>(map_a, map_b, d, m, n, k, trace);
  CUDA_CHECK_LAUNCH();
}

} // namespace ex10::wgmma
