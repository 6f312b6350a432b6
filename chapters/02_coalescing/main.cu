// Chapter 02: memory coalescing.
//
// How a warp's addresses decide how many bytes the memory system moves.
// Memory travels in 32-byte sectors; a warp's load instruction is served as
// the distinct sectors its 32 addresses touch. Neighbouring threads reading
// neighbouring floats share sectors (a "coalesced" access); threads reading
// far apart floats each pull a whole sector for 4 useful bytes. The chapter
// measures this on copies and on a small particle update:
//
//   v1 stride_S               out[i] = in[i * S] for S = 1, 2, 4, 8, 16, 32
//   v2 offset                 out[i] = in[i + K]: reads that straddle sector boundaries
//   v3 float2, float4         8- and 16-byte loads and stores instead of 4
//   v4 float4_one_per_thread  one float4 per thread, a grid that covers the array
//   v5 aos                    particle update on an array of structs
//   v6 soa                    the same update on a struct of arrays
//
// against cudaMemcpy device-to-device. The table shows two bandwidths: the
// useful bytes per second, and the bytes the hardware really moved (whole
// sectors, sectors.hpp), so that you can see where the difference goes.
// Copies are checked bit for bit on the GPU (check.cuh), the particle step
// against a CPU reference in double precision.
//
// Run: ./tutorial run 02    (or build/bin/ch02_coalescing --help)
#include "check.cuh"
#include "mistakes.cuh"
#include "particles.cuh"
#include "sectors.hpp"
#include "v1_strided.cuh"
#include "v2_offset.cuh"
#include "v3_vector_width.cuh"
#include "v4_float4_one_per_thread.cuh"
#include "v5_aos.cuh"
#include "v6_soa.cuh"

#include "steps/chapter.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#if STEPS_WITH_EXERCISE
#include "step_particles.hpp"
#endif

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace ch02 {

// The particle step: semi-implicit Euler under a constant acceleration
// (gravity along -y, plus a steady push along x and z), time step kDt.
constexpr float3 kAccel{0.5f, -9.81f, 1.5f};
constexpr float kDt = 0.01f;

/// Floats of --size per particle: the particle step gets size / 16 particles
/// (each of its four buffers holds 6 / 16 x size floats).
constexpr std::size_t kSizePerParticle = 16;

/// The stride of a "stride_S" row, or 0 for any other row.
int stride_of(const std::string& name) {
  const std::string prefix = "stride_";
  return name.compare(0, prefix.size(), prefix) == 0 ? std::stoi(name.substr(prefix.size())) : 0;
}

bool is_particle_row(const std::string& name) { return name == "aos" || name == "soa" || name == "yours"; }

/// Inputs, outputs and CPU references of one run of the chapter.
class Coalescing {
public:
  Coalescing(const steps::Options& opts, const steps::DeviceInfo& dev)
      : dev_(dev), n_(static_cast<std::size_t>(opts.size)), offset_(static_cast<std::size_t>(opts.get("--offset"))),
        particles_(std::max<std::size_t>(1, n_ / kSizePerParticle)), pitch_(soa_pitch(particles_)),
        // Device memory first: a size that does not fit fails here, before
        // any host memory is spent on it.
        in_(n_), out_(n_), aos_in_(kFields * particles_), aos_out_(kFields * particles_),
        soa_in_(kFields * pitch_), soa_out_(kFields * pitch_) {
    // Random inputs, generated on the GPU (all in the default stream, which
    // the copy back below waits for). The copies are checked on the GPU
    // against their input (check.cuh); the particle step on the CPU.
    steps::fill_uniform_device(in_.data(), n_, opts.seed, -1.0f, 1.0f);
    steps::fill_uniform_device(aos_in_.data(), kFields * particles_, opts.seed + 1, -1.0f, 1.0f);
    soa_in_.fill_bytes(0); // the padding after each field array: never read, but defined
    fill_particles_soa<<<full_wave_blocks(dev_, particles_), kThreads>>>(soa_in_.data(), particles_, pitch_,
                                                                         opts.seed + 1);
    CUDA_CHECK_LAUNCH();
    // CPU reference of one particle step, in double, rounded once to float.
    const std::vector<float> start = aos_in_.to_host();
    const double a[3] = {kAccel.x, kAccel.y, kAccel.z};
    particles_want_.resize(start.size());
    for (std::size_t i = 0; i < particles_; ++i) {
      const float* p = &start[kFields * i];    // x y z vx vy vz
      float* w = &particles_want_[kFields * i];
      for (int d = 0; d < 3; ++d) {
        const double v = static_cast<double>(p[3 + d]) + a[d] * kDt;
        w[3 + d] = static_cast<float>(v);
        w[d] = static_cast<float>(static_cast<double>(p[d]) + v * kDt);
      }
    }
  }

  std::string describe() const {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "copies of n = %zu floats (%s per array), offset copy from in + %zu; "
                  "particle update of %zu particles (%s per buffer, AoS and SoA)",
                  n_, steps::format_bytes(4.0 * static_cast<double>(n_)).c_str(), offset_, particles_,
                  steps::format_bytes(24.0 * static_cast<double>(particles_)).c_str());
    return buf;
  }

  // Useful bytes: each float the result needs, read once, and each output
  // float, written once. hw_bytes: whole sectors touched (sectors.hpp).
  steps::Work work(const std::string& name) const {
    if (is_particle_row(name)) {
      const std::size_t floats = kFields * particles_;
      const double useful = 2.0 * sizeof(float) * static_cast<double>(floats); // read + write every field
      const double flops = 12.0 * static_cast<double>(particles_);             // 6 multiply-adds
      // AoS: one contiguous array in, one out. SoA: 6 arrays in, 6 out, each
      // starting on a 256-byte boundary.
      const double moved = name == "soa" ? 2.0 * kFields * sector_bytes(0, particles_) : 2.0 * sector_bytes(0, floats);
      return {useful, flops, moved};
    }
    if (const int s = stride_of(name)) {
      const std::size_t m = v1::strided_count(n_, s);
      return {8.0 * static_cast<double>(m), 0, sector_bytes(0, m, s) + sector_bytes(0, m)};
    }
    if (name == "offset") {
      const std::size_t m = offset_ < n_ ? n_ - offset_ : 0;
      return {8.0 * static_cast<double>(m), 0, sector_bytes(offset_, m) + sector_bytes(0, m)};
    }
    // memcpy and the whole-array copies: read n floats, write n floats.
    return {8.0 * static_cast<double>(n_), 0, 2.0 * sector_bytes(0, n_)};
  }

  void reset(const std::string& name) {
    // NaN everywhere: an element no thread wrote cannot pass.
    if (name == "soa") soa_out_.poison();
    else if (is_particle_row(name)) aos_out_.poison();
    else out_.poison();
  }

  steps::Comparison check(const std::string& name) const {
    if (name == "soa") return check_particles(soa_out_, true);
    if (is_particle_row(name)) return check_particles(aos_out_, false);
    const steps::Comparison guards = out_.check_guards();
    if (!guards.ok) return guards;
    // Copies move bits: out[i] must equal its input float exactly.
    if (const int s = stride_of(name)) return check_copy(out_.data(), in_.data(), v1::strided_count(n_, s), 0, s, dev_);
    if (name == "offset")
      return offset_ < n_ ? check_copy(out_.data(), in_.data(), n_ - offset_, offset_, 1, dev_) : steps::Comparison{};
    return check_copy(out_.data(), in_.data(), n_, 0, 1, dev_);
  }

  const float* in() const { return in_.data(); }
  float* out() { return out_.data(); }
  std::size_t n() const { return n_; }
  std::size_t offset() const { return offset_; }
  const Particle* aos_in() const { return reinterpret_cast<const Particle*>(aos_in_.data()); }
  Particle* aos_out() { return reinterpret_cast<Particle*>(aos_out_.data()); }
  ParticleArrays<const float> soa_in() const { return arrays_at(soa_in_.data(), pitch_); }
  ParticleArrays<float> soa_out() { return arrays_at(soa_out_.data(), pitch_); }
  std::size_t particles() const { return particles_; }
  const steps::DeviceInfo& dev() const { return dev_; }

private:
  // Compares a particle result with the CPU reference, in AoS order (field
  // f of particle i is element 6 i + f).
  steps::Comparison check_particles(const steps::GuardedBuffer<float>& buf, bool soa) const {
    const steps::Comparison guards = buf.check_guards();
    if (!guards.ok) return guards;
    std::vector<float> got = buf.download();
    if (soa) {
      std::vector<float> aos(kFields * particles_);
      for (std::size_t f = 0; f < kFields; ++f)
        for (std::size_t i = 0; i < particles_; ++i) aos[kFields * i + f] = got[f * pitch_ + i];
      got.swap(aos);
    }
    return steps::compare(got, particles_want_, steps::Tolerance::fp32());
  }

  steps::DeviceInfo dev_;
  std::size_t n_, offset_, particles_, pitch_;
  steps::DeviceBuffer<float> in_;
  steps::GuardedBuffer<float> out_;
  steps::DeviceBuffer<float> aos_in_;
  steps::GuardedBuffer<float> aos_out_;
  steps::DeviceBuffer<float> soa_in_;
  steps::GuardedBuffer<float> soa_out_;
  std::vector<float> particles_want_; // CPU reference of the particle step, AoS order
};

using Version = steps::Version<Coalescing>;

/// A registry entry for the stride-S copy of version 1.
Version stride_row(int s, const char* what) {
  return {"stride_" + std::to_string(s), what, steps::Role::version,
          [s](Coalescing& p, cudaStream_t st) { v1::launch(s, p.in(), p.out(), p.n(), p.dev(), st); }};
}

// The registry: the CLI, the table and the JSON all come from this list.
const std::vector<Version> kVersions = {
    {"memcpy", "cudaMemcpy device-to-device of the whole array (speed of light)", steps::Role::baseline,
     [](Coalescing& p, cudaStream_t s) {
       CUDA_CHECK(cudaMemcpyAsync(p.out(), p.in(), p.n() * sizeof(float), cudaMemcpyDeviceToDevice, s));
     }},
    stride_row(1, "v1: out[i] = in[i]: a warp reads 128 contiguous bytes, 4 sectors"),
    stride_row(2, "v1: out[i] = in[2i]: 8 sectors per warp load, half of each used"),
    stride_row(4, "v1: out[i] = in[4i]: 16 sectors per warp load, a quarter of each used"),
    stride_row(8, "v1: out[i] = in[8i]: 32 sectors per warp load, 4 of 32 bytes used"),
    stride_row(16, "v1: out[i] = in[16i]: 32 sectors per warp load, 4 of 32 bytes used"),
    stride_row(32, "v1: out[i] = in[32i]: 32 sectors per warp load, 4 of 32 bytes used"),
    {"offset", "v2: out[i] = in[i + K] (--offset K): 5 sectors per warp load instead of 4", steps::Role::version,
     [](Coalescing& p, cudaStream_t s) { v2::launch(p.in(), p.out(), p.n(), p.offset(), p.dev(), s); }},
    {"float2", "v3: 8-byte float2 loads and stores, scalar tail", steps::Role::version,
     [](Coalescing& p, cudaStream_t s) { v3::launch_float2(p.in(), p.out(), p.n(), p.dev(), s); }},
    {"float4", "v3: 16-byte float4 loads and stores, scalar tail", steps::Role::version,
     [](Coalescing& p, cudaStream_t s) { v3::launch_float4(p.in(), p.out(), p.n(), p.dev(), s); }},
    {"float4_one_per_thread", "v4: one float4 per thread, a grid that covers the array, no loop",
     steps::Role::version, [](Coalescing& p, cudaStream_t s) { v4::launch(p.in(), p.out(), p.n(), p.dev(), s); }},
    {"aos", "v5: particle step on an array of structs: loads 24 bytes apart", steps::Role::version,
     [](Coalescing& p, cudaStream_t s) {
       v5::launch(p.aos_in(), p.aos_out(), p.particles(), kAccel, kDt, p.dev(), s);
     }},
    {"soa", "v6: particle step on a struct of arrays: every access coalesced", steps::Role::version,
     [](Coalescing& p, cudaStream_t s) {
       v6::launch(p.soa_in(), p.soa_out(), p.particles(), kAccel, kDt, p.dev(), s);
     }},
#if STEPS_WITH_EXERCISE
    {"yours", "exercise 02: your coalesced particle step on the AoS data", steps::Role::yours,
     [](Coalescing& p, cudaStream_t s) {
       static_assert(sizeof(ex02::Particle) == sizeof(Particle), "the exercise's Particle must match the chapter's");
       ex02::step_particles(reinterpret_cast<const ex02::Particle*>(p.aos_in()),
                            reinterpret_cast<ex02::Particle*>(p.aos_out()), p.particles(), kAccel, kDt, s);
     }},
#endif
    {"mistake_float4_no_tail", "float4 copy without a tail: the last size % 4 floats are never copied",
     steps::Role::mistake,
     [](Coalescing& p, cudaStream_t s) { mistakes::float4_no_tail(p.in(), p.out(), p.n(), p.dev(), s); }},
};

steps::ChapterInfo info() {
  steps::ChapterInfo i;
  i.number = "02";
  i.binary = "ch02_coalescing";
  i.title = "Memory coalescing";
  i.summary = "Copies with strides 1 to 32, a misaligned copy, 4-, 8- and 16-byte loads, and a particle update "
              "in array-of-structs and struct-of-arrays layouts, against cudaMemcpy device-to-device; shows "
              "useful and really moved bytes per second.";
  i.metric = steps::Metric::bandwidth;
  // 2^27 + 3 floats: 512 MiB per array (about 9x the H200's L2), and not a
  // multiple of 4 or of any stride, so every default run exercises the tails.
  i.default_size = (std::int64_t{1} << 27) + 3;
  i.size_help = "floats in the copy arrays (the particle step uses size/16 particles)";
  i.default_iters = 30;
  i.work_note =
      "GB/s: useful bytes per second (1 GB = 1e9 B): each input float the result needs, read once, plus each "
      "output float, written once. stride_S copies ceil(size / S) floats (in[0], in[S], in[2S], ... of the same "
      "input array) into a contiguous output, 8 bytes per copied float; the other copies move 8 bytes per float "
      "of size; the particle step reads and writes 24 bytes per particle.\n"
      "moved GB/s, the 32-byte-sector model: 32 bytes for every distinct 32-byte sector that the row's reads and "
      "writes touch, each counted once. Above GB/s where a sector comes for part of its bytes (stride 2: half, "
      "stride >= 8: 4 of 32 bytes). Sectors requested again but served from L1 (offset, aos) are not counted, and "
      "the H200's DRAM reads 64-byte pairs of sectors: at strides 16 and 32 it moves twice what this model "
      "counts (README: Profile it).";
  i.goal = 0.95;
  i.goal_text = ">= 0.95x memcpy";
  i.int_options.push_back(
      {"--offset", "K", "the offset copy reads from in + K floats (K = 8: sector-aligned again)", 1, 0, 64});
  return i;
}

} // namespace ch02

int main(int argc, char** argv) { return steps::run_chapter(argc, argv, ch02::info(), ch02::kVersions); }
