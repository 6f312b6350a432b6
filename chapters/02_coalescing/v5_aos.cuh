// Chapter 02, version 5: particle update on an array of structs (AoS).
//
// One thread per particle, the way the code reads most naturally:
// `Particle p = in[i]` ... `out[i] = p`. But a struct of 24 bytes with
// 4-byte alignment is loaded as six separate 4-byte loads, and in each of
// them the warp's 32 threads read addresses 24 bytes apart:
//
//   load of x:  |x.....x.....x.....x.....| ...   768 bytes, 24 sectors
//   load of y:  |.x.....x.....x.....x....| ...   the same 24 sectors again
//
// 6 loads x 24 sectors = 144 sector requests per warp for 24 sectors of
// data (6x {n:144/24|.0f}), and the same for the stores. L1 keeps the 24 sectors between
// the six loads, so DRAM still moves each byte about once; the price is
// paid in L1 and L2 transactions: 2928 GB/s {n:02:aos:gbps} against
// 3426 GB/s {n:02:soa:gbps} for version 6 on the H200.
#pragma once

#include "block_size.cuh" // kThreads
#include "particles.cuh"

#include "steps/error.hpp"

namespace ch02::v5 {

using steps::global_index;
using steps::grid_size;

__global__ void step_particles_aos(const Particle* __restrict__ in, Particle* __restrict__ out, std::size_t n,
                                   float3 a, float dt) {
  for (std::size_t i = global_index(); i < n; i += grid_size()) {
    Particle p = in[i]; // six 4-byte loads, 24 bytes apart across the warp
    p.vx += a.x * dt;
    p.vy += a.y * dt;
    p.vz += a.z * dt;
    p.x += p.vx * dt;
    p.y += p.vy * dt;
    p.z += p.vz * dt;
    out[i] = p;         // six 4-byte stores, the same pattern
  }
}

inline void launch(const Particle* in, Particle* out, std::size_t n, float3 a, float dt, const steps::DeviceInfo& dev,
                   cudaStream_t s) {
  if (n == 0) return;
  step_particles_aos<<<steps::full_wave_blocks(dev, n, kThreads), kThreads, 0, s>>>(in, out, n, a, dt);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch02::v5
