/// @file step_particles.hpp
/// @brief Exercise 02: the function you implement in step_particles.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace ex02 {

/// One particle: position, then velocity; six packed floats, 24 bytes.
/// The layout is fixed: the particles come as an array of these structs
/// (from a file format, say, or another library), and must stay that way.
struct Particle {
  float x, y, z;    ///< position
  float vx, vy, vz; ///< velocity
};

/// One time step of semi-implicit Euler for particles in[0 .. n), written to
/// out[0 .. n) (a second buffer; in is not changed):
///
///     out[i].vx = in[i].vx + accel.x * dt           (and vy, vz)
///     out[i].x  = in[i].x  + out[i].vx * dt         (and y, z: the NEW velocity)
///
/// Must be correct for every n (0 included, and past 2^31 floats per array:
/// compute float offsets in 64 bits), for arrays that start at any
/// particle (24-byte) boundary, so only 8-byte alignment is promised, and
/// must be coalesced: consecutive threads of a warp touch consecutive floats
/// in every load and store. Returns without waiting for the GPU; reports a
/// bad launch by throwing (CUDA_CHECK_LAUNCH).
void step_particles(const Particle* in, Particle* out, std::size_t n, float3 accel, float dt, cudaStream_t stream);

} // namespace ex02
