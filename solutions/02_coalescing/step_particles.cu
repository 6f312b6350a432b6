// Exercise 02 solution: a coalesced particle step on an array of structs.
//
// The idea: a block's particles are one contiguous run of floats. Block b
// owns particles [256 b, 256 b + 256), that is floats [1536 b, 1536 b + 1536)
// of the array. So the block
//   1. loads that run into shared memory with coalesced loads: thread t
//      reads floats t, t + 256, ..., t + 5 * 256 of the run, so each of the
//      six loads of a warp covers 32 consecutive floats (4 sectors);
//   2. waits for the whole block (__syncthreads), then lets each thread
//      update its own particle in shared memory, six floats at 6 t;
//   3. waits again, then stores the run back with the same coalesced pattern.
//
//   global (AoS):  [x y z vx vy vz][x y z vx vy vz] ...   1536 floats per block
//                    |  coalesced loads: thread t takes floats t + 256 k
//                    v
//   shared tile:   [x y z vx vy vz][x y z vx vy vz] ...   same layout, 6 KiB
//                    |  thread t updates particle t (floats 6 t .. 6 t + 5)
//                    v
//   global (AoS):  coalesced stores, as the loads
//
// Shared memory is a small scratchpad per block, as fast as L1; chapter 03
// is about it. Reading particle t at 6 t in it costs 2-way bank conflicts
// (chapter 04), which is cheap next to uncoalesced DRAM access.
#include "step_particles.hpp"

#include "steps/error.hpp"
#include "steps/math.hpp"

namespace ex02 {
namespace {

constexpr int kThreads = 256; // threads per block = particles per block
constexpr int kFields = 6;    // floats per particle

// One block per 256 particles; the last block may have fewer.
__global__ void step_particles_staged(const float* __restrict__ in, float* __restrict__ out, std::size_t n,
                                      float3 a, float dt) {
  __shared__ float tile[kFields * kThreads]; // this block's particles, AoS
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * kThreads; // first particle of the block
  const unsigned int count = static_cast<unsigned int>(n - first < kThreads ? n - first : kThreads);
  const unsigned int floats = kFields * count; // floats of the block's run
  const float* src = in + kFields * first;
  float* dst = out + kFields * first;

  // 1. Coalesced loads: all six into registers first, so that they are in
  //    flight together, then into shared memory.
  float r[kFields];
#pragma unroll
  for (int k = 0; k < kFields; ++k) {
    const unsigned int f = k * kThreads + threadIdx.x;
    if (f < floats) r[k] = src[f];
  }
#pragma unroll
  for (int k = 0; k < kFields; ++k) {
    const unsigned int f = k * kThreads + threadIdx.x;
    if (f < floats) tile[f] = r[k];
  }
  __syncthreads(); // every float of the tile is loaded

  // 2. Thread t updates particle t: velocity first, then position with the
  //    new velocity (semi-implicit Euler).
  if (threadIdx.x < count) {
    float* p = &tile[kFields * threadIdx.x]; // x y z vx vy vz
    const float acc[3] = {a.x, a.y, a.z};
#pragma unroll
    for (int d = 0; d < 3; ++d) {
      const float v = p[3 + d] + acc[d] * dt;
      p[3 + d] = v;
      p[d] += v * dt;
    }
  }
  __syncthreads(); // every particle of the tile is updated

  // 3. Coalesced stores, the same pattern as the loads.
#pragma unroll
  for (int k = 0; k < kFields; ++k) {
    const unsigned int f = k * kThreads + threadIdx.x;
    if (f < floats) dst[f] = tile[f];
  }
}

} // namespace

void step_particles(const Particle* in, Particle* out, std::size_t n, float3 accel, float dt, cudaStream_t stream) {
  if (n == 0) return; // zero blocks would be an invalid launch
  const std::size_t blocks = steps::ceil_div<std::size_t>(n, kThreads);
  step_particles_staged<<<static_cast<unsigned int>(blocks), kThreads, 0, stream>>>(
      reinterpret_cast<const float*>(in), reinterpret_cast<float*>(out), n, accel, dt);
  CUDA_CHECK_LAUNCH();
}

} // namespace ex02
