// Chapter 10: the ring of stages between the producer and the math
// warpgroups (v4 to v8).
//
// Shared memory holds `Stages` stages, each one K block of the tile (A's
// rows, B's rows, their scales). Two mbarriers per stage say who may touch it:
//
//   full[s]:  completes when the producer's expect_tx (1 arrival) and the
//             copy engine's bytes (TMA counts them down) are in: the math
//             warpgroups may read stage s
//   empty[s]: completes when every math warp has arrived (lane 0 of each, 4
//             per math warpgroup): the producer may refill stage s
//
//   producer:  wait empty[s] -> load into s -> (TMA completes full[s]) -> next s
//   math:      wait full[s]  -> wgmma on s  -> arrive empty[s]         -> next s
//
// Both sides walk the stages in the same order, s = 0 1 2 .. Stages-1 0 1 ..,
// and each barrier completes once per lap: a waiter waits for the parity of
// its lap (Ring::phase), which flips each time s wraps to 0. The producer's
// first lap waits for parity 1 of empty[]: a fresh barrier counts as having
// completed that phase, so the first Stages loads start at once.
#pragma once

#include "steps/ptx.cuh"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ch10 {

/// Where a role is in the ring of stages: the stage, and the parity of the
/// lap around the ring (it flips each time the stage index wraps to 0).
// [snippet ring]
template <int Stages>
struct Ring {
  int stage = 0;
  std::uint32_t phase = 0;
  __device__ void advance() {
    if (++stage == Stages) {
      stage = 0;
      phase ^= 1;
    }
  }
};

/// Thread 0 initialises the ring's barriers: full[s] completes on the
/// producer's expect_tx and the TMA bytes, empty[s] on one arrival per
/// warp of the `MathGroups` math warpgroups. Then the last block-wide
/// barrier: from here on the roles only meet at mbarriers.
template <int Stages, int MathGroups>
__device__ __forceinline__ void init_ring(std::uint64_t* full, std::uint64_t* empty) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < Stages; ++s) {
      steps::ptx::mbarrier_init(&full[s], 1);
      steps::ptx::mbarrier_init(&empty[s], 4 * MathGroups);
    }
    steps::ptx::fence_barrier_init();
  }
  __syncthreads();
}
// [/snippet ring]

/// Ring depths a kernel with a run-time choice of depth (--stages) is
/// compiled for.
constexpr int kMinStages = 2, kMaxStages = 5;

/// Calls f(std::integral_constant<int, S>{}) with S = `stages`: the ring
/// depth as a compile-time constant (the kernel is compiled for each).
template <class F>
decltype(auto) with_stages(int stages, F&& f) {
  switch (stages) {
  case 2: return f(std::integral_constant<int, 2>{});
  case 3: return f(std::integral_constant<int, 3>{});
  case 4: return f(std::integral_constant<int, 4>{});
  case 5: return f(std::integral_constant<int, 5>{});
  default: throw std::invalid_argument(std::to_string(stages) + " stages (the ring is compiled for 2 to 5)");
  }
}
static_assert(kMinStages == 2 && kMaxStages == 5, "with_stages lists the depths one by one");

} // namespace ch10
