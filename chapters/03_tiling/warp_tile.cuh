// Chapter 03: the warp tile, the pieces that versions 7 to 10 share.
//
// Version 7 introduces it (v7_warptile.cuh says why): a block tile of whole
// warp tiles, each lane owning 2 x 2 sub-tiles of 4 x 4. Here: the tile
// shapes (Tiling), a slice's trip from global memory through registers into
// shared memory (Slice, load_slice, store_slice; v7 and v8), where a lane's
// sub-tiles start (LaneOrigin), the multiply-adds of one slice
// (compute_slice) and the stores of the results (store_c), which v8, v9 and
// v10 keep as they are.
#pragma once

#include "gemm.cuh"

namespace ch03::warp_tile {

/// The tile shapes of versions 7 to 10, and what follows from them.
template <int BM_, int BN_, int BK_, int WM_, int WN_>
struct Tiling {
  static constexpr int BM = BM_, BN = BN_, BK = BK_; // block tile, slice depth
  static constexpr int WM = WM_, WN = WN_;           // warp tile
  static constexpr int TM = 4, TN = 4;               // a lane's sub-tile: one float4 of A by one of B
  static constexpr int kLanesM = 8, kLanesN = 4;     // a warp's 32 lanes, 8 down and 4 across
  static constexpr int kSubM = WM / (kLanesM * TM);  // sub-tiles per lane, down (WM / 32)
  static constexpr int kSubN = WN / (kLanesN * TN);  // and across (WN / 16)
  static constexpr int kWarpsN = BN / WN;            // warps across the block tile
  static constexpr int kThreads = 32 * (BM / WM) * (BN / WN);
  static constexpr int kPadA = 4;                    // floats of padding per row of tile_a_t
  static constexpr int kLoadsA = BM * BK / 4 / kThreads; // float4 copies of A per thread per slice
  static constexpr int kLoadsB = BK * BN / 4 / kThreads; // and of B
  static_assert(WM % (kLanesM * TM) == 0 && WN % (kLanesN * TN) == 0, "a warp tile is whole sub-tiles");
  static_assert(BM % WM == 0 && BN % WN == 0, "a block tile is whole warp tiles");
  static_assert(BK % 4 == 0 && BN % 4 == 0, "copies move whole float4");
  static_assert(BM * BK / 4 % kThreads == 0 && BK * BN / 4 % kThreads == 0, "copies split evenly over the threads");
  static_assert(kPadA % 4 == 0, "padding keeps the rows of tile_a_t 16-byte aligned");
};

/// One slice of A and B in registers, between global and shared memory.
template <class T>
struct Slice {
  float4 a[T::kLoadsA];
  float4 b[T::kLoadsB];
};

/// Reads the slice starting at column k0 of A (rows block_row ..) and row k0
/// of B (columns block_col ..). Copy e of a thread is float4 number
/// tid + e * kThreads of the tile, counted row by row.
template <class T, bool kChecked>
__device__ __forceinline__ void load_slice(Slice<T>& s, const float* a, const float* b, int m, int n, int k,
                                           int block_row, int block_col, int k0) {
#pragma unroll
  for (int e = 0; e < T::kLoadsA; ++e) {
    const int f = threadIdx.x + e * T::kThreads;
    s.a[e] = load4<kChecked>(a, m, k, k, block_row + f / (T::BK / 4), k0 + f % (T::BK / 4) * 4);
  }
#pragma unroll
  for (int e = 0; e < T::kLoadsB; ++e) {
    const int f = threadIdx.x + e * T::kThreads;
    s.b[e] = load4<kChecked>(b, k, n, n, k0 + f / (T::BN / 4), block_col + f % (T::BN / 4) * 4);
  }
}

/// Writes a slice into shared memory, A transposed: tile_a_t[i][row].
template <class T>
__device__ __forceinline__ void store_slice(const Slice<T>& s, float (*tile_a_t)[T::BM + T::kPadA],
                                            float (*tile_b)[T::BN]) {
#pragma unroll
  for (int e = 0; e < T::kLoadsA; ++e) {
    const int f = threadIdx.x + e * T::kThreads;
    const int row = f / (T::BK / 4), i = f % (T::BK / 4) * 4;
    tile_a_t[i + 0][row] = s.a[e].x;
    tile_a_t[i + 1][row] = s.a[e].y;
    tile_a_t[i + 2][row] = s.a[e].z;
    tile_a_t[i + 3][row] = s.a[e].w;
  }
#pragma unroll
  for (int e = 0; e < T::kLoadsB; ++e) {
    const int f = threadIdx.x + e * T::kThreads;
    *reinterpret_cast<float4*>(&tile_b[f / (T::BN / 4)][f % (T::BN / 4) * 4]) = s.b[e];
  }
}

/// Where this lane's first sub-tile starts inside the block tile.
template <class T>
struct LaneOrigin {
  int row, col;
  __device__ LaneOrigin() {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    row = warp / T::kWarpsN * T::WM + lane / T::kLanesN * T::TM;
    col = warp % T::kWarpsN * T::WN + lane % T::kLanesN * T::TN;
  }
};

/// acc += this lane's part of (A slice) x (B slice), out of shared memory.
/// acc[sm * TM + r][sn * TN + q] is element (r, q) of sub-tile (sm, sn).
template <class T>
__device__ __forceinline__ void compute_slice(float (&acc)[T::kSubM * T::TM][T::kSubN * T::TN],
                                              const float (*tile_a_t)[T::BM + T::kPadA],
                                              const float (*tile_b)[T::BN], LaneOrigin<T> o) {
#pragma unroll
  for (int i = 0; i < T::BK; ++i) {
    float frag_a[T::kSubM * T::TM], frag_b[T::kSubN * T::TN];
#pragma unroll
    for (int sm = 0; sm < T::kSubM; ++sm)
      *reinterpret_cast<float4*>(&frag_a[sm * T::TM]) =
          *reinterpret_cast<const float4*>(&tile_a_t[i][o.row + sm * (T::WM / T::kSubM)]);
#pragma unroll
    for (int sn = 0; sn < T::kSubN; ++sn)
      *reinterpret_cast<float4*>(&frag_b[sn * T::TN]) =
          *reinterpret_cast<const float4*>(&tile_b[i][o.col + sn * (T::WN / T::kSubN)]);
#pragma unroll
    for (int r = 0; r < T::kSubM * T::TM; ++r)
#pragma unroll
      for (int q = 0; q < T::kSubN * T::TN; ++q) acc[r][q] += frag_a[r] * frag_b[q];
  }
}

/// Writes this lane's results to C, one float4 per row of each sub-tile.
template <class T, bool kChecked>
__device__ __forceinline__ void store_c(const float (&acc)[T::kSubM * T::TM][T::kSubN * T::TN], float* c, int m,
                                        int n, int block_row, int block_col, LaneOrigin<T> o) {
#pragma unroll
  for (int sm = 0; sm < T::kSubM; ++sm)
#pragma unroll
    for (int r = 0; r < T::TM; ++r)
#pragma unroll
      for (int sn = 0; sn < T::kSubN; ++sn) {
        const float* v = &acc[sm * T::TM + r][sn * T::TN];
        store4<kChecked>(c, m, n, n, block_row + o.row + sm * (T::WM / T::kSubM) + r,
                         block_col + o.col + sn * (T::WN / T::kSubN), make_float4(v[0], v[1], v[2], v[3]));
      }
}

} // namespace ch03::warp_tile
