// Chapter 10: which tile a persistent block works on next (v4 to v8).
//
// A persistent kernel starts one block per SM, and each block loops over
// work items t = blockIdx.x, blockIdx.x + gridDim.x, ... . The order in
// which items map to tiles decides what stays in L2: walking D row by row,
// the ~132 tiles running at once would cover 2 rows x all columns of tiles,
// i.e. all of B. Walking down a group of kGroupM rows of tiles first, they
// cover about 12 rows x 11 columns: 12 panels of A and 11 of B, which stay
// in L2.
//
//   item t:   0   3   6 ..        (kGroupM = 3 drawn; 12 in the code)
//             1   4   7 ..
//             2   5   8 ..
//             ------------        the next group of rows starts after the
//             3n  3n+3 ..         group's last column (n columns of tiles)
#pragma once

namespace ch10 {

/// Tiles are handed out in groups of this many rows of tiles (12 measured
/// best of 8, 12, 16 and 24 on the H200, with v4).
constexpr int kGroupM = 12;

/// The tile that work item t covers: its row tm and column tn in the
/// tiles_m x tiles_n grid of tiles, any tile shape.
// [snippet tile_index]
__device__ __forceinline__ void tile_index(int t, int tiles_m, int tiles_n, int& tm, int& tn) {
  const int per_group = kGroupM * tiles_n;
  const int first_m = (t / per_group) * kGroupM;
  const int rows = min(kGroupM, tiles_m - first_m);
  const int r = t % per_group;
  tm = first_m + r % rows;
  tn = r / rows;
}
// [/snippet tile_index]

/// The same, as the first row m0 and column n0 of D of a BlockM x BlockN tile.
template <int BlockM, int BlockN>
__device__ __forceinline__ void tile_at(int t, int tiles_m, int tiles_n, int& m0, int& n0) {
  int tm, tn;
  tile_index(t, tiles_m, tiles_n, tm, tn);
  m0 = tm * BlockM;
  n0 = tn * BlockN;
}

/// A schedule of whole tiles: block b takes tiles b, b + gridDim.x, ...,
/// every K block of each. for_each calls f(tile, kb0, kb1) for each piece
/// of work, in order; producer and math warpgroups walk the same pieces.
/// (A schedule whose pieces are parts of tiles sets kSplits and adds the
/// pieces up: v7_stream_k.cuh.)
struct AllTiles {
  static constexpr bool kSplits = false; ///< no piece is part of a tile
  int tiles, num_kb;
  template <class F>
  __device__ __forceinline__ void for_each(F&& f) const {
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) f(t, 0, num_kb);
  }
};

} // namespace ch10
