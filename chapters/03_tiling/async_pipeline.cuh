// Chapter 03: the cp.async pipeline of versions 9 and 10.
//
// Version 9 introduces it (v9_async_copy.cuh says why): each thread copies
// its part of the next slice straight into shared memory (cp.async) while
// the block computes the current one from the other buffer; one wait and
// one barrier per slice. gemm_block is the whole loop, written for any
// Tiling (warp_tile.cuh) and any place the two buffers live: version 9's
// static arrays, version 10's dynamic shared memory.
#pragma once

#include "gemm.cuh"
#include "warp_tile.cuh" // LaneOrigin, compute_slice, store_c

#include "steps/ptx.cuh"

namespace ch03::async_pipeline {

/// Where one thread's copies of a slice come from and go to. The copies of
/// slice 0 start at `a` and `b`; slice t's are BK columns of A and BK rows
/// of B further. Within a slice, copy e of A is e * kRowStepA rows further
/// down, copy e of B e * kRowStepB rows. Everything a slice needs beyond
/// that is a constant offset: no per-slice index arithmetic.
template <class T>
struct CopyPlan {
  static constexpr int kGroupsK = T::BK / 8;                  // groups of 8 k in a slice
  static constexpr int kWarps = T::kThreads / 32;
  static constexpr int kCopiesA = T::BM * T::BK / T::kThreads; // 4-byte copies of A per thread
  static constexpr int kRowStepA = kWarps / kGroupsK * 4;      // rows between them
  static constexpr int kRowStepB = T::kThreads / (T::BN / 4);  // rows of B between 16-byte copies
  static_assert(T::BK % 8 == 0 && kWarps % kGroupsK == 0 && T::BM % kRowStepA == 0,
                "A is copied in groups of 4 rows x 8 k, a group per warp");
  static_assert((T::BM + T::kPadA) % 32 == 4, "the row stride that puts a group's 32 words in 32 banks");
  static_assert(T::kThreads % (T::BN / 4) == 0, "B's 16-byte copies cover whole rows");
  int row, i;       // this thread's first A word: row in the tile, k in the slice
  int b_row, b_col; // and its first 16-byte piece of B
  __device__ CopyPlan() {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    row = warp / kGroupsK * 4 + lane % 4; // a warp: 4 rows x 8 consecutive k
    i = warp % kGroupsK * 8 + lane / 4;
    b_row = threadIdx.x / (T::BN / 4);
    b_col = threadIdx.x % (T::BN / 4) * 4;
  }
};

/// Starts the copies of one slice into one buffer. Fast path (the tiles
/// divide the matrices): A word by word, transposed; B in 16-byte pieces.
/// `a_src` / `b_src`: this thread's first A word and B piece of the slice.
template <class T>
__device__ __forceinline__ void copy_slice(float (*tile_a_t)[T::BM + T::kPadA], float (*tile_b)[T::BN],
                                           const CopyPlan<T>& p, const float* a_src, const float* b_src, int k,
                                           int n) {
#if STEPS_PTX_CP_ASYNC
  using P = CopyPlan<T>;
#pragma unroll
  for (int e = 0; e < P::kCopiesA; ++e)
    steps::ptx::cp_async_4_or_zero(&tile_a_t[p.i][p.row + e * P::kRowStepA],
                                   a_src + static_cast<std::size_t>(e * P::kRowStepA) * k, true);
#pragma unroll
  for (int e = 0; e < T::kLoadsB; ++e)
    steps::ptx::cp_async_16(&tile_b[p.b_row + e * P::kRowStepB][p.b_col],
                            b_src + static_cast<std::size_t>(e * P::kRowStepB) * n);
#endif
}

/// The same at the edges: every element checked, word by word, zeros where
/// the matrices end. Slice at k0. The loops unroll by 4, not fully: with
/// version 10's 32-deep slices, 32 addresses at once spill registers.
template <class T>
__device__ __forceinline__ void copy_slice_checked(float (*tile_a_t)[T::BM + T::kPadA], float (*tile_b)[T::BN],
                                                   const CopyPlan<T>& p, const float* a, const float* b, int m,
                                                   int n, int k, int block_row, int block_col, int k0) {
#if STEPS_PTX_CP_ASYNC
  using P = CopyPlan<T>;
#pragma unroll 4
  for (int e = 0; e < P::kCopiesA; ++e) {
    const int row = p.row + e * P::kRowStepA;
    const bool inside = block_row + row < m && k0 + p.i < k;
    const float* src = inside ? a + static_cast<std::size_t>(block_row + row) * k + k0 + p.i : a;
    steps::ptx::cp_async_4_or_zero(&tile_a_t[p.i][row], src, inside);
  }
#pragma unroll 4
  for (int e = 0; e < T::BK * T::BN / T::kThreads; ++e) {
    const int f = threadIdx.x + e * T::kThreads; // consecutive threads, consecutive columns
    const int i = f / T::BN, col = f % T::BN;
    const bool inside = k0 + i < k && block_col + col < n;
    const float* src = inside ? b + static_cast<std::size_t>(k0 + i) * n + block_col + col : b;
    steps::ptx::cp_async_4_or_zero(&tile_b[i][col], src, inside);
  }
#endif
}

/// The block's whole product, C tile = A rows x B columns, slice by slice:
/// the copies of slice t + 1 run while slice t is computed. `tile_a_t` and
/// `tile_b` are the two buffers of each (shared memory, wherever the kernel
/// put it: a static array here, dynamic shared memory in version 10).
template <class T, bool kChecked>
__device__ __forceinline__ void gemm_block(int m, int n, int k, const float* __restrict__ a,
                                           const float* __restrict__ b, float* __restrict__ c,
                                           float (*tile_a_t)[T::BK][T::BM + T::kPadA],
                                           float (*tile_b)[T::BK][T::BN]) {
  const int block_row = blockIdx.y * T::BM, block_col = blockIdx.x * T::BN;
  const warp_tile::LaneOrigin<T> origin;
  const CopyPlan<T> plan;
  float acc[T::kSubM * T::TM][T::kSubN * T::TN] = {};
  const int slices = steps::ceil_div(k, T::BK);
  // Fast path: this thread's first A word and B piece, moved BK on per slice.
  const float* a_src = a + static_cast<std::size_t>(block_row + plan.row) * k + plan.i;
  const float* b_src = b + static_cast<std::size_t>(plan.b_row) * n + block_col + plan.b_col;
  auto copy = [&](int buf, int k0) {
    if constexpr (kChecked) {
      copy_slice_checked<T>(tile_a_t[buf], tile_b[buf], plan, a, b, m, n, k, block_row, block_col, k0);
    } else {
      copy_slice<T>(tile_a_t[buf], tile_b[buf], plan, a_src, b_src, k, n);
      a_src += T::BK;
      b_src += static_cast<std::size_t>(T::BK) * n;
    }
  };

  if (slices > 0) copy(0, 0);
  steps::ptx::cp_async_commit();
  // cur: the buffer slice t is computed from; nxt: the one slice t + 1 is
  // copied into. (Two variables, not t % 2 and its complement: with those,
  // nvcc 13.0 gives the same loop other registers, and it runs slower; see
  // the lesson's Pitfalls.)
  int cur = 0, nxt = 1;
  for (int t = 0; t < slices; ++t) {
    steps::ptx::cp_async_wait<0>(); // this thread's copies of slice t have landed
    __syncthreads();                // everyone's have; everyone is done with slice t - 1
    if (t + 1 < slices) copy(nxt, (t + 1) * T::BK);
    steps::ptx::cp_async_commit();
    warp_tile::compute_slice<T>(acc, tile_a_t[cur], tile_b[cur], origin);
    cur ^= 1;
    nxt ^= 1;
  }
  warp_tile::store_c<T, kChecked>(acc, c, m, n, block_row, block_col, origin);
}

} // namespace ch03::async_pipeline
