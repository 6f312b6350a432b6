// Chapter 10, version 7: the arithmetic of its plan, apart from the kernel so
// that host tests can check it without a GPU (host_tests.cu).
//
// v7 (v7_stream_k.cuh) runs v6 on the whole waves of tiles, then cuts each of
// the R tiles of the last, partial wave into `ways` pieces of its K blocks,
// one piece per block:
//
//   ways = min(SMs / R, K blocks / 4)
//
// and cuts only where that pays: where the longest piece is at least
// `min_saving` K blocks shorter than a whole tile. Piece i of a tile of
// num_kb K blocks covers K blocks piece_start(i) .. piece_start(i + 1) - 1:
// the pieces differ in length by at most one block.
#pragma once

#include "steps/math.hpp"

#include <algorithm>

namespace ch10::v7 {

/// A piece has at least this many K blocks: each piece more is one more
/// slot of partial sums (96 KB) that the tile's owner reads and adds.
constexpr int kMinBlocksPerPiece = 4;

/// By default v7 cuts only where that takes at least this many K blocks
/// off the last wave (--min-saving). A cut costs a second launch, whose
/// blocks start with empty rings, and the partial sums written and read
/// back: measured on the H200, cuts that saved 37 to 96 K blocks of a
/// tile's time paid, those that saved 8 to 21 lost (the lesson, v7).
constexpr int kDefaultMinSaving = 32;

/// How the last wave is cut: not at all (ways == 0: v6 runs every tile),
/// or the first `first_tile` tiles by v6, then the rest, each in `ways`
/// pieces, on `grid` = (tiles - first_tile) x ways blocks.
struct Cut {
  int first_tile = 0;
  int ways = 0;
  int grid = 0;
  bool splits() const { return ways > 0; }
};

/// The cut of `tiles` tiles of `num_kb` K blocks each on `sms` SMs, made
/// only if its longest piece is at least `min_saving` K blocks shorter than
/// a tile.
inline Cut cut_last_wave(int tiles, int sms, int num_kb, int min_saving) {
  Cut c;
  const int rest = tiles % sms;
  if (rest == 0) return c; // whole waves: nothing to cut
  const int ways = std::min(sms / rest, num_kb / kMinBlocksPerPiece);
  if (ways < 2) return c; // the last wave more than half full, or K too short
  const int longest = steps::ceil_div(num_kb, ways);
  if (num_kb - longest < min_saving) return c; // would not pay
  c.first_tile = tiles - rest;
  c.ways = ways;
  c.grid = rest * ways;
  return c;
}

/// Piece i's first K block (i = ways: num_kb, the end of the last piece).
/// In 64 bits: num_kb x i passes 2^31 when K is near its limit.
STEPS_HD inline int piece_start(int num_kb, int ways, int i) {
  return static_cast<int>(static_cast<long long>(num_kb) * i / ways);
}

} // namespace ch10::v7
