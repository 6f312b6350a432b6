// Chapter 10, version 6: wider tiles, 128 x 192.
//
// Change from version 4: the tile is 192 columns wide, and each math
// warpgroup has room for one set of partial sums only, which it fills in two
// halves of 96 columns (wgmma m64n96k32), so that one half is always in
// flight while the other is promoted.
//
//   block = 3 warpgroups (384 threads), tile 128 x 192, 4 stages of 40 KB
//   warpgroup 0: the producer, as in v4 (B's box is 192 rows)
//   warpgroups 1 and 2, rows 0-63 and 64-127, per K block kb:
//     wait for half 0 of kb; promote it          (half 1 of kb in flight)
//     wait full[s(kb+1)]; issue half 0 of kb + 1
//     wait for half 1 of kb; arrive empty[s(kb)]; promote it
//                                                (half 0 of kb + 1 in flight)
//     issue half 1 of kb + 1
//
// What it was built for: fewer shared-memory bytes per multiply-add. Per
// K block, v4's two warpgroups read 2 x (8 KB of A + 16 KB of B) from
// shared memory and TMA writes 32 KB: 80 KB per 128 x 128 x 128; a 192-wide
// tile read in one piece: 2 x (8 + 24) KB read and 40 KB written for 1.5
// times the work, 69 KB per 128 x 128 x 128. In halves each warpgroup reads
// its 8 KB of A twice: 80 KB per 128 x 128 x 128, as in v4.
//
// Why halves: 96 registers of partial sums and 96 of totals per thread
// leave no room for v4's second partial set (v4 has 64 + 64 + 64). With the
// 192 columns issued as one group, a warpgroup had to wait for all of its
// wgmma (wait_group 0) before it could promote and issue the next block,
// and the tensor cores idled while both warpgroups promoted. Two groups of
// 48 registers are the same 96, and wait_group 1 leaves one in flight.
// (Measured on the H200: the halves kept the tensor pipe busier and ran a
// little faster on most shapes; the lesson's log, EXPERIMENTS.md, has the
// numbers and what ate the rest.)
//
// Where it wins: a 192-wide tile makes fewer tiles, and on some shapes they
// fill the 132 SMs better. 128 x 24576: 192 tiles of 128 x 128 are 1.45
// waves (the second one less than half full), 128 tiles of 128 x 192 one.
//
// Scales: a 192-column tile starts at a multiple of 64, so each of its three
// 64-column chunks lies in one 128-row block of B's scales, the tile's first
// block or the one after it: a thread reads three B scales per K block
// (chunks 0, 1, 2) from the stage, where the producer copies them with A's
// (produce_k_blocks with BScales::in_stage; v4 loads its one B scale from
// global memory); half 0 uses chunks 0 and 1, half 1 chunks 1 and 2.
//
// The registers: v4's 40 (producer) + 2 x 232 left the math warpgroups a
// few short here (ptxas spilled 16 bytes); 24 + 2 x 240 fits.
//
// On the H200 at 8192 x 8192 x 4096, in the last benchmark run:
// 1457 TFLOP/s {n:10:wide_tiles:value|.0f}, 1.11x {n:10:wide_tiles:base} cuBLASLt block-scaled.
//
// The kernel (fp8_gemm_wide_tiles, a template on its schedule), its budgets
// and its launch live in wide_tile_kernel.cuh: version 7 runs the same
// kernel on other schedules. This file is the version: whole tiles, one
// persistent block per SM.
#pragma once

#include "fp8_gemm.cuh"
#include "wide_tile_kernel.cuh" // the kernel this version introduces, its maps and launch_schedule

namespace ch10::v6 {

/// v6: one block per SM (never more than tiles), persistent, on whole tiles.
inline void launch(const Fp8Gemm& p, cudaStream_t stream) { wide_tiles::launch_all_tiles(p, stream); }

} // namespace ch10::v6
