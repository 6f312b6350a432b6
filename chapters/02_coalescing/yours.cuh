// Chapter 02: your exercise as a row of the chapter's table ("yours"), built
// when exercises/02_coalescing compiles. Its own group on the AoS particles
// of v5 (the same data, the same CPU reference, the same work), so that your
// coalesced step stands beside `aos` and `soa`.
#pragma once

#include "particle_problems.cuh"
#include "step_particles.hpp"

#include "steps/chapter.hpp"

namespace ch02 {

static_assert(sizeof(ex02::Particle) == sizeof(Particle), "the exercise's Particle must match the chapter's");

inline steps::GroupPtr yours_group() {
  return steps::group<AosParticles>({aos_row(
      "yours", "exercise 02: your coalesced particle step on the AoS data", steps::Role::yours,
      [](AosParticles& p, cudaStream_t s) {
        ex02::step_particles(reinterpret_cast<const ex02::Particle*>(p.in()),
                             reinterpret_cast<ex02::Particle*>(p.out()), p.particles(), kAccel, kDt, s);
      })});
}

} // namespace ch02
