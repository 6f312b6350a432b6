// Chapter 02: the block every kernel of the chapter launches.
#pragma once

namespace ch02 {

/// 256 threads per block in every version: a multiple of the 32-thread warp,
/// and small enough that 8 blocks fit on each SM (2048 resident threads on Hopper).
constexpr int kThreads = 256;

} // namespace ch02
