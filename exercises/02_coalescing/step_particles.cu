// Exercise 02: a coalesced particle step on an array of structs.
//
// Read chapters/02_coalescing first (versions 5 and 6), then
// exercises/02_coalescing/README.md.
// Grade with: ./tutorial grade 02        Hints: ./tutorial hint 02
//
// Fill in every TODO. Keep the signature of ex02::step_particles
// (step_particles.hpp) and the layout of ex02::Particle.
#include "step_particles.hpp"

#include "steps/error.hpp"
#include "steps/math.hpp"

namespace ex02 {

// TODO: write the kernel. The chapter's version 5 gives each thread one
// particle, and each of its six loads then touches addresses 24 bytes apart
// across the warp. Find a way for every global load and store of a warp to
// cover consecutive floats, while the data stays an array of Particle
// structs (./tutorial hint 02 when stuck).
__global__ void step_particles_kernel(const float* in, float* out, std::size_t n, float3 accel, float dt) {
  // TODO: compute the new state of the particles this thread is responsible for.
}

void step_particles(const Particle* in, Particle* out, std::size_t n, float3 accel, float dt, cudaStream_t stream) {
  // TODO: choose the number of blocks and threads, launch your kernel in
  // `stream`, and check the launch with CUDA_CHECK_LAUNCH().
  (void)in, (void)out, (void)n, (void)accel, (void)dt, (void)stream;
}

} // namespace ex02
