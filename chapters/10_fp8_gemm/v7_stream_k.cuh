// Chapter 10, version 7: v6, with the last, partial wave split by K.
//
// Change from version 6: the schedule. v6's persistent blocks take whole
// tiles in turn; when the tile count is not a multiple of the SM count, the
// last wave is partly empty. 4096 x 7168 has 32 x 38 = 1216 tiles of
// 128 x 192: 9 waves of 132 and 28 tiles, so in the tenth wave 104 SMs have
// nothing to do.
//
// v7 runs v6's kernel, unchanged, on the whole waves (1188 tiles), then a
// second launch on the rest: each of the R tiles left is cut into `ways`
// pieces of its K blocks (ways = 132 / R, at most K blocks / 4), one piece
// per block, so that R x ways blocks work on them side by side:
//
//   28 tiles of 128 K blocks, cut 4 ways over 112 blocks:
//     tile 1188: blocks 0 1 2 3 take K blocks 0-31, 32-63, 64-95, 96-127
//     tile 1189: blocks 4 5 6 7 ...
//
// The block with a tile's first piece is its owner: it adds the others'
// pieces (in block order: the same sum on every run) and stores the tile.
// The others (contributors) write their partial sums to a slot of their own
// in global memory and raise a flag. Flags: one per block and math
// warpgroup, set to the launch's number (the epoch), so they never need
// clearing between launches. A contributor's warpgroup writes its 96 x 128
// floats, meets at a named barrier, and one thread releases the flag
// (__threadfence, then st.release.gpu); the owner's thread 0 waits with
// ld.acquire.gpu, then a named barrier, then every thread reads its floats
// (ld.global.cg: from L2). An owner waits for other blocks, so they must run
// at the same time: the launch is cooperative (all blocks resident at once,
// or the launch fails), and it has at most one block per SM.
//
// Why a second launch and not one persistent kernel that does both: v6's
// math warpgroups use 240 registers, the most a 24-register producer
// leaves them, and in one kernel the schedule's extra state either made
// ptxas spill or made the whole-tile part slower (the lesson's log,
// EXPERIMENTS.md, has the numbers).
// Here v6's kernel (wide_tile_kernel.cuh) is the same machine code as v6's
// row, and the second kernel's blocks each do one piece.
//
// On the H200 at 4096 x 7168 x 16384, in the last benchmark run:
// 1467 TFLOP/s {n:10@DeepSeek-V3_4096_x_7168_x_16384:stream_k:value|.0f}, 1.09x {n:10@DeepSeek-V3_4096_x_7168_x_16384:stream_k:base} cuBLASLt block-scaled (v6: 1.06x {n:10@DeepSeek-V3_4096_x_7168_x_16384:wide_tiles:base}).
// Where the cut takes only a few K blocks off the last wave it loses to v6
// (the lesson), so v7 cuts only where it saves at least 32 (v7_plan.hpp,
// --min-saving).
#pragma once

#include "fp8_gemm.cuh"
#include "scheduler.cuh"
#include "v7_plan.hpp"
#include "wide_tile_kernel.cuh" // v6's kernel, for any schedule: launch_schedule, launch_all_tiles

#include "steps/error.hpp"
#include "steps/math.hpp"
#include "steps/memory.hpp"
#include "steps/ptx.cuh"

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

namespace ch10::v7 {

namespace ptx = steps::ptx;

using wide_tiles::kAccum;
/// Floats of one math warpgroup's piece of a tile: kAccum per thread.
constexpr int kSlot = kAccum * 128;

/// The second launch's schedule (see the top of this file), passed to the
/// kernel by value: block b takes piece b % ways of tile first_tile +
/// b / ways, K blocks piece_start(b % ways) .. piece_start(b % ways + 1) - 1
/// (v7_plan.hpp).
struct LastWave {
  static constexpr bool kSplits = true; ///< pieces are parts of tiles
  int first_tile = 0;  ///< the first tile of the last wave (the whole waves' tiles come before)
  int num_kb = 0;      ///< K blocks of a tile
  int ways = 0;        ///< pieces per tile; the grid is (tiles left) x ways
  float* partials = nullptr; ///< per block and math warpgroup: kSlot floats
  int* flags = nullptr;      ///< per block and math warpgroup: the epoch when its slot is written
  int epoch = 0;             ///< this launch's number, from 1

  template <class F>
  __device__ __forceinline__ void for_each(F&& f) const {
    const int b = blockIdx.x, piece = b % ways;
    f(first_tile + b / ways, piece_start(num_kb, ways, piece), piece_start(num_kb, ways, piece + 1));
  }

  /// A contributor's warpgroup `math`: its partial sums to its slot, then the flag.
  __device__ __forceinline__ void contribute(int math, const float (&total)[kAccum]) const {
    const int tid = threadIdx.x % 128, flag = 2 * blockIdx.x + math;
    float* slot = partials + static_cast<std::size_t>(flag) * kSlot;
#pragma unroll
    for (int i = 0; i < kAccum; ++i) __stcg(slot + i * 128 + tid, total[i]); // 128 threads: 512 contiguous bytes
    ptx::named_barrier_sync(1 + math, 128); // the warpgroup's writes, before thread 0's release
    if (tid == 0) {
      __threadfence();
      ptx::st_release_gpu(flags + flag, epoch);
    }
  }

  /// The owner's warpgroup `math`: adds the pieces of the ways - 1 blocks
  /// after it (its tile's), in block order.
  __device__ __forceinline__ void gather(int math, float (&total)[kAccum]) const {
    const int tid = threadIdx.x % 128;
    if (tid == 0)
      for (int b = blockIdx.x + 1; b < static_cast<int>(blockIdx.x) + ways; ++b)
        while (ptx::ld_acquire_gpu(flags + 2 * b + math) != epoch) __nanosleep(64);
    ptx::named_barrier_sync(1 + math, 128); // thread 0's acquire, before everyone's reads
    for (int b = blockIdx.x + 1; b < static_cast<int>(blockIdx.x) + ways; ++b) {
      const float* slot = partials + static_cast<std::size_t>(2 * b + math) * kSlot;
#pragma unroll
      for (int i = 0; i < kAccum; ++i) total[i] += __ldcg(slot + i * 128 + tid);
    }
  }
};

/// The cut v7 makes of problem `p` (Plan's; a row asks it before it runs).
inline Cut cut_of(const Fp8Gemm& p, int min_saving) {
  const long long tiles = wide_tiles::tile_count(p);
  if (tiles > INT_MAX) throw std::invalid_argument("v7: more than 2^31 - 1 tiles");
  return cut_last_wave(static_cast<int>(tiles), sm_count(), k_blocks(p.k), min_saving);
}

/// How v7 runs one problem (made once per problem: it owns the slots and
/// the flags). `min_saving`: the K blocks a cut must take off the last
/// wave (cut_last_wave).
class Plan {
public:
  Plan(const Fp8Gemm& p, int min_saving) : sms_(sm_count()) {
    const long long tiles = wide_tiles::tile_count(p);
    if (tiles > INT_MAX) throw std::invalid_argument("v7: more than 2^31 - 1 tiles");
    tiles_ = static_cast<int>(tiles);
    last_.num_kb = k_blocks(p.k);
    cut_ = cut_last_wave(tiles_, sms_, last_.num_kb, min_saving);
    if (!cut_.splits()) return; // v6
    last_.first_tile = cut_.first_tile;
    last_.ways = cut_.ways;
    partials_ = steps::DeviceBuffer<float>(static_cast<std::size_t>(2) * cut_.grid * kSlot);
    flags_ = steps::DeviceBuffer<int>(static_cast<std::size_t>(2) * cut_.grid);
    flags_.copy_from_host(std::vector<int>(flags_.size(), 0)); // epoch 0: never a launch's
    last_.partials = partials_.data();
    last_.flags = flags_.data();
  }

  bool splits() const { return cut_.splits(); }

  std::string describe() const {
    const std::string t = std::to_string(tiles_) + " tiles of 128 x 192";
    if (!splits()) return t + ": whole waves, a last wave over half full, or too little to save: no cut (v6)";
    const int rest = tiles_ - cut_.first_tile;
    const int lo = last_.num_kb / cut_.ways, hi = (last_.num_kb + cut_.ways - 1) / cut_.ways;
    const std::string piece = lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
    const std::string which = cut_.first_tile == 0 ? "all " + std::to_string(rest)
                                                   : "v6 on the first " + std::to_string(cut_.first_tile) +
                                                         ", then the last " + std::to_string(rest);
    return t + ": " + which + " cut " + std::to_string(cut_.ways) + " ways by K (" + piece + " of " +
           std::to_string(last_.num_kb) + " K blocks a piece) over " + std::to_string(cut_.grid) + " blocks";
  }

  /// v6 where nothing is cut; else v6 on the whole waves, then the last
  /// wave's pieces (cooperative).
  void launch(const Fp8Gemm& p, cudaStream_t stream) {
    if (!splits()) return wide_tiles::launch_all_tiles(p, stream); // = v6
    if (++last_.epoch == INT_MAX) { // 2^31 launches later: start the flags again
      CUDA_CHECK(cudaStreamSynchronize(stream));
      flags_.copy_from_host(std::vector<int>(flags_.size(), 0));
      last_.epoch = 1;
    }
    if (cut_.first_tile > 0)
      wide_tiles::launch_schedule(p, AllTiles{cut_.first_tile, last_.num_kb}, std::min(sms_, cut_.first_tile), false,
                                  stream);
    wide_tiles::launch_schedule(p, last_, cut_.grid, true, stream);
  }

private:
  int sms_, tiles_ = 0;
  Cut cut_;
  LastWave last_;
  steps::DeviceBuffer<float> partials_;
  steps::DeviceBuffer<int> flags_;
};

} // namespace ch10::v7
