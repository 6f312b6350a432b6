// Chapter 02: the particle step as problems of the chapter's table.
//
// One time step of semi-implicit Euler (particles.cuh) on size / 16
// particles, in two layouts, each a problem of its own so that a run of one
// layout never allocates the other:
//   AosParticles  an array of structs, in and out (v5 `aos`, and the
//                 exercise's row `yours`, which runs on the same particles)
//   SoaParticles  a struct of arrays, in and out (v6 `soa`)
// Both start from the same particles (field f of particle i is
// uniform_at(seed + 1, 6 i + f)) and are checked against one CPU reference
// computed in double and rounded once to float.
#pragma once

#include "particles.cuh"
#include "sectors.hpp"

#include "steps/chapter.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ch02 {

/// The step's constant acceleration (gravity along -y, plus a steady push
/// along x and z) and its time step.
constexpr float3 kAccel{0.5f, -9.81f, 1.5f};
constexpr float kDt = 0.01f;

/// Floats of --size per particle: the particle step gets size / 16 particles
/// (each of its four buffers holds 6 / 16 x size floats).
constexpr std::size_t kSizePerParticle = 16;

/// Particles of the step for a --size (at least one).
inline std::size_t particles_for(const steps::Options& opts) {
  return std::max<std::size_t>(1, static_cast<std::size_t>(opts.size) / kSizePerParticle);
}

/// One particle step on the CPU, in double, rounded once to float. `start`
/// holds the particles in AoS order (x y z vx vy vz per particle).
inline std::vector<float> particle_step_reference(const std::vector<float>& start) {
  const double a[3] = {kAccel.x, kAccel.y, kAccel.z};
  std::vector<float> want(start.size());
  for (std::size_t i = 0; i + kFields <= start.size(); i += kFields) {
    for (std::size_t d = 0; d < 3; ++d) {
      const double v = static_cast<double>(start[i + 3 + d]) + a[d] * kDt;
      want[i + 3 + d] = static_cast<float>(v);
      want[i + d] = static_cast<float>(static_cast<double>(start[i + d]) + v * kDt);
    }
  }
  return want;
}

/// Useful work of one particle step: every field read once and written once
/// (48 bytes per particle), 6 multiply-adds. hw_bytes: the whole sectors
/// touched (sectors.hpp): AoS reads one contiguous array and writes one;
/// SoA reads 6 field arrays and writes 6, each starting on a 256-byte
/// boundary.
inline steps::Work particle_work(std::size_t particles, bool soa) {
  const std::size_t floats = kFields * particles;
  const double useful = 2.0 * sizeof(float) * static_cast<double>(floats);
  const double flops = 12.0 * static_cast<double>(particles);
  const double moved = soa ? 2.0 * kFields * sector_bytes(0, particles) : 2.0 * sector_bytes(0, floats);
  return {useful, flops, moved};
}

/// The particles as an array of structs: in, out, and the reference.
class AosParticles {
public:
  AosParticles(const steps::Options& opts, steps::Run& run)
      : dev_(run.device()), n_(particles_for(opts)),
        // Device memory first: a size that does not fit fails here, before
        // any host memory is spent on it.
        in_(kFields * n_), out_(kFields * n_) {
    steps::fill_uniform_device(in_.data(), kFields * n_, opts.seed + 1, -1.0f, 1.0f);
    want_ = particle_step_reference(in_.to_host());
  }

  std::string describe() const {
    char buf[160];
    std::snprintf(buf, sizeof buf, "particle update of %zu particles, array of structs (%s per buffer)", n_,
                  steps::format_bytes(24.0 * static_cast<double>(n_)).c_str());
    return buf;
  }

  /// NaN everywhere in out: a float no thread writes cannot pass.
  void poison() { out_.poison(); }

  /// out against the CPU reference, every float (FP32 tolerance: a few
  /// roundings per float).
  steps::Comparison check() const {
    const steps::Comparison guards = out_.check_guards();
    if (!guards.ok) return guards;
    return steps::compare(out_.download(), want_, steps::Tolerance::fp32());
  }

  steps::Work work() const { return particle_work(n_, false); }

  const Particle* in() const { return reinterpret_cast<const Particle*>(in_.data()); }
  Particle* out() { return reinterpret_cast<Particle*>(out_.data()); }
  std::size_t particles() const { return n_; }
  const steps::DeviceInfo& dev() const { return dev_; }

private:
  steps::DeviceInfo dev_;
  std::size_t n_;
  steps::DeviceBuffer<float> in_;
  steps::GuardedBuffer<float> out_;
  std::vector<float> want_; // AoS order
};

/// A row that runs one particle step on the AoS particles.
inline steps::Row<AosParticles> aos_row(std::string name, std::string what, steps::Role role,
                                        std::function<void(AosParticles&, cudaStream_t)> launch) {
  steps::Row<AosParticles> r;
  r.name = std::move(name);
  r.what = std::move(what);
  r.role = role;
  r.launch = [launch](AosParticles& p, steps::Run& run) { launch(p, run.stream()); };
  r.work = [](const AosParticles& p) { return p.work(); };
  r.reset = [](AosParticles& p) { p.poison(); };
  r.check = [](AosParticles& p) { return p.check(); };
  return r;
}

/// The same particles as a struct of arrays: six field arrays of `pitch`
/// floats each (n rounded up to 64), in and out, and the reference.
class SoaParticles {
public:
  SoaParticles(const steps::Options& opts, steps::Run& run)
      : dev_(run.device()), n_(particles_for(opts)), pitch_(soa_pitch(n_)), in_(kFields * pitch_),
        out_(kFields * pitch_) {
    // The padding after each field array is never read: NaN, so that a
    // stray read would show in the result.
    in_.fill_bytes(0xFF);
    fill_particles_soa_device(in_.data(), n_, pitch_, opts.seed + 1, dev_);
    want_ = particle_step_reference(to_aos(in_.to_host()));
  }

  std::string describe() const {
    char buf[160];
    std::snprintf(buf, sizeof buf, "particle update of %zu particles, struct of arrays (%s per buffer)", n_,
                  steps::format_bytes(4.0 * kFields * static_cast<double>(pitch_)).c_str());
    return buf;
  }

  /// NaN everywhere in out.
  void poison() { out_.poison(); }

  /// out against the CPU reference, compared in AoS order (field f of
  /// particle i is element 6 i + f).
  steps::Comparison check() const {
    const steps::Comparison guards = out_.check_guards();
    if (!guards.ok) return guards;
    return steps::compare(to_aos(out_.download()), want_, steps::Tolerance::fp32());
  }

  steps::Work work() const { return particle_work(n_, true); }

  ParticleArrays<const float> in() const { return arrays_at(in_.data(), pitch_); }
  ParticleArrays<float> out() { return arrays_at(out_.data(), pitch_); }
  std::size_t particles() const { return n_; }
  const steps::DeviceInfo& dev() const { return dev_; }

private:
  // The fields of an SoA buffer, in AoS order.
  std::vector<float> to_aos(const std::vector<float>& soa) const {
    std::vector<float> aos(kFields * n_);
    for (std::size_t f = 0; f < kFields; ++f)
      for (std::size_t i = 0; i < n_; ++i) aos[kFields * i + f] = soa[f * pitch_ + i];
    return aos;
  }

  steps::DeviceInfo dev_;
  std::size_t n_, pitch_;
  steps::DeviceBuffer<float> in_;
  steps::GuardedBuffer<float> out_;
  std::vector<float> want_; // AoS order
};

} // namespace ch02
