// Chapter 02: the particle update of versions 5 and 6, and its two layouts.
//
// Each particle has a position (x, y, z) and a velocity (vx, vy, vz). One
// time step of semi-implicit Euler under a constant acceleration a:
//     v' = v + a * dt        (velocity first)
//     p' = p + v' * dt       (then position, with the NEW velocity)
// Every float of a particle is read once and written once: 24 bytes in,
// 24 bytes out, the same as a copy. The new state goes to a second buffer
// (double buffering, as most simulations do), so the input stays intact.
//
// Array of structs (AoS): one struct per particle, particles side by side.
//   [x y z vx vy vz][x y z vx vy vz][x y z vx vy vz] ...
// Struct of arrays (SoA): one array per field.
//   x:  [x x x x ...]   y: [y y y y ...]   ...   vz: [vz vz vz vz ...]
#pragma once

#include "steps/error.hpp"
#include "steps/launch.cuh"
#include "steps/math.hpp"
#include "steps/random.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace ch02 {

/// One particle, 24 bytes, 4-byte aligned (no float2/float4 view of it).
struct Particle {
  float x, y, z;    ///< position
  float vx, vy, vz; ///< velocity
};
static_assert(sizeof(Particle) == 6 * sizeof(float), "Particle must be six packed floats");

/// Floats per particle.
constexpr std::size_t kFields = 6;

/// The six field arrays of the SoA layout, each `pitch` floats long and
/// starting `pitch` floats after the previous one in one allocation.
template <class T>
struct ParticleArrays {
  T *x, *y, *z, *vx, *vy, *vz;
};

/// The SoA view of a buffer of kFields * pitch floats.
template <class T>
ParticleArrays<T> arrays_at(T* base, std::size_t pitch) {
  return {base, base + pitch, base + 2 * pitch, base + 3 * pitch, base + 4 * pitch, base + 5 * pitch};
}

/// Array length of the SoA layout for n particles: n rounded up to 64
/// floats, so that every field array starts on a 256-byte boundary.
inline std::size_t soa_pitch(std::size_t n) { return steps::round_up<std::size_t>(n, 64); }

/// Fills the SoA buffer with the same particles that
/// steps::fill_uniform_device(aos, kFields * n, seed) puts in the AoS buffer:
/// field f of particle i is uniform_at(seed, kFields * i + f).
__global__ void fill_particles_soa(float* soa, std::size_t n, std::size_t pitch, std::uint64_t seed) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    for (std::size_t f = 0; f < kFields; ++f)
      soa[f * pitch + i] = steps::uniform_at(seed, kFields * i + f, -1.0f, 1.0f);
}

/// Launches fill_particles_soa in the default stream.
inline void fill_particles_soa_device(float* soa, std::size_t n, std::size_t pitch, std::uint64_t seed,
                                      const steps::DeviceInfo& dev) {
  constexpr int kFillThreads = 256;
  fill_particles_soa<<<steps::full_wave_blocks(dev, n, kFillThreads), kFillThreads>>>(soa, n, pitch, seed);
  CUDA_CHECK_LAUNCH();
}

} // namespace ch02
