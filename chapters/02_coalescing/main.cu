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
// against a CPU reference in double precision (particle_problems.cuh).
//
// Three groups of rows, each with its own buffers: the copies (ranked: the
// full copies; shown but not ranked: the strided gathers), the AoS particle
// step and the SoA particle step (shown, not ranked: another problem). The
// exercise's row, yours.cuh, is a fourth group on the AoS particles.
//
// Run: ./tutorial run 02    (or build/bin/ch02_coalescing --help)
#include "check.cuh"
#include "mistakes.cuh"
#include "offset_both.cuh"
#include "particle_problems.cuh"
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
#include "yours.cuh"
#endif

#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ch02 {

/// The input and output array of the copies (no host copy of either: the
/// copies are checked on the GPU, check.cuh).
class Copies {
public:
  Copies(const steps::Options& opts, steps::Run& run)
      : dev_(run.device()), n_(static_cast<std::size_t>(opts.size)),
        offset_(static_cast<std::size_t>(opts.get("--offset"))), in_(n_), out_(n_) {
    steps::fill_uniform_device(in_.data(), n_, opts.seed, -1.0f, 1.0f);
  }

  std::string describe() const {
    std::size_t fetch = 0;
    CUDA_CHECK(cudaDeviceGetLimit(&fetch, cudaLimitMaxL2FetchGranularity));
    char buf[224];
    std::snprintf(buf, sizeof buf,
                  "copies of n = %zu floats (%s per array), offset copy from in + %zu; L2 fetch granularity "
                  "limit %zu bytes",
                  n_, steps::format_bytes(4.0 * static_cast<double>(n_)).c_str(), offset_, fetch);
    return buf;
  }

  /// NaN everywhere in out: an element no thread wrote cannot pass.
  void poison() { out_.poison(); }

  /// out[i] == in[first + i * stride] for i < count, bit for bit (a copy
  /// moves bits), checked on the GPU.
  steps::Comparison check(std::size_t first, std::size_t count, std::size_t stride) const {
    const steps::Comparison guards = out_.check_guards();
    if (!guards.ok) return guards;
    return check_copy(out_.data(), in_.data(), count, first, stride, dev_);
  }

  /// out[first + i] == in[first + i] for i < count (the copy that shifts
  /// both arrays), bit for bit; out[0 .. first) is never written.
  steps::Comparison check_shifted(std::size_t first, std::size_t count) const {
    const steps::Comparison guards = out_.check_guards();
    if (!guards.ok) return guards;
    return check_copy(out_.data() + first, in_.data(), count, first, 1, dev_);
  }

  const float* in() const { return in_.data(); }
  float* out() { return out_.data(); }
  std::size_t n() const { return n_; }
  std::size_t offset() const { return offset_; }
  const steps::DeviceInfo& dev() const { return dev_; }

private:
  steps::DeviceInfo dev_;
  std::size_t n_, offset_;
  steps::DeviceBuffer<float> in_;
  steps::GuardedBuffer<float> out_;
};

/// What a copy row reads: in[first + i * stride] into out[i], for i < count.
struct Gather {
  std::size_t first = 0, count = 0, stride = 1;
};

using CopyRow = steps::Row<Copies>;

/// Sets a copy row's work and check from what it copies (`gather`). Useful
/// bytes: each copied float read once and written once (8 bytes); hw_bytes:
/// the whole sectors that the reads and the (contiguous) writes touch
/// (sectors.hpp).
CopyRow copying(CopyRow r, std::function<Gather(const Copies&)> gather) {
  r.work = [gather](const Copies& p) {
    const Gather g = gather(p);
    return steps::Work{8.0 * static_cast<double>(g.count), 0,
                       sector_bytes(g.first, g.count, g.stride) + sector_bytes(0, g.count)};
  };
  r.reset = [](Copies& p) { p.poison(); };
  r.check = [gather](Copies& p) {
    const Gather g = gather(p);
    return p.check(g.first, g.count, g.stride);
  };
  return r;
}

/// A copy row launching `launch`; `gather` says which input floats it copies.
CopyRow copy_row(std::string name, std::string what, steps::Role role, std::function<Gather(const Copies&)> gather,
                 std::function<void(Copies&, cudaStream_t)> launch) {
  CopyRow r;
  r.name = std::move(name);
  r.what = std::move(what);
  r.role = role;
  r.launch = [launch](Copies& p, steps::Run& run) { launch(p, run.stream()); };
  return copying(std::move(r), std::move(gather));
}

/// The whole array: out[i] = in[i] for i < size.
Gather whole_array(const Copies& p) { return {0, p.n(), 1}; }

/// The baseline: the vendor's copy of the whole array, with the copies' work
/// (moved bytes too) and check.
CopyRow memcpy_row() {
  return copying(steps::memcpy_row<Copies>(
                     "cudaMemcpy device-to-device of the whole array (the vendor's copy)",
                     [](Copies& p) { return p.out(); }, [](Copies& p) { return p.in(); },
                     [](const Copies& p) { return p.n() * sizeof(float); }, {}),
                 whole_array);
}

/// Version 1 at stride S: out[i] = in[i * S] for i < ceil(size / S).
CopyRow stride_row(int s, steps::Role role, std::string what) {
  return copy_row(
      "stride_" + std::to_string(s), std::move(what), role,
      [s](const Copies& p) { return Gather{0, v1::strided_count(p.n(), s), static_cast<std::size_t>(s)}; },
      [s](Copies& p, cudaStream_t st) { v1::launch(s, p.in(), p.out(), p.n(), p.dev(), st); });
}

/// Version 2 with the stores shifted too: out[i + K] = in[i + K]. Shown
/// beside v2, not ranked (its misaligned stores are the experiment).
CopyRow offset_both_row() {
  CopyRow r;
  r.name = "offset_loads_and_stores";
  r.what = "out[i + K] = in[i + K]: v2 with the stores misaligned too (as chapter 01's --offset)";
  r.role = steps::Role::reference;
  r.launch = [](Copies& p, steps::Run& run) {
    offset_both::launch(p.in(), p.out(), p.n(), p.offset(), p.dev(), run.stream());
  };
  r.work = [](const Copies& p) {
    const std::size_t k = p.offset(), count = k < p.n() ? p.n() - k : 0;
    return steps::Work{8.0 * static_cast<double>(count), 0, 2 * sector_bytes(k, count)};
  };
  r.reset = [](Copies& p) { p.poison(); };
  r.check = [](Copies& p) {
    const std::size_t k = p.offset();
    return p.check_shifted(k, k < p.n() ? p.n() - k : 0);
  };
  return r;
}

steps::GroupPtr copies_group() {
  using steps::Role;
  return steps::group<Copies>({
      memcpy_row(),
      stride_row(1, Role::version, "v1: out[i] = in[i]: a warp reads 128 contiguous bytes, 4 sectors"),
      // Strides above 1 copy a fraction of the array (a gather): a sweep of
      // the sector model, shown beside the copies but not ranked with them.
      stride_row(2, Role::reference, "v1: out[i] = in[2i]: 8 sectors per warp load, half of each used"),
      stride_row(4, Role::reference, "v1: out[i] = in[4i]: 16 sectors per warp load, a quarter of each used"),
      stride_row(8, Role::reference, "v1: out[i] = in[8i]: 32 sectors per warp load, 4 of 32 bytes used"),
      stride_row(16, Role::reference, "v1: out[i] = in[16i]: 32 sectors per warp load, 4 of 32 bytes used"),
      stride_row(32, Role::reference, "v1: out[i] = in[32i]: 32 sectors per warp load, 4 of 32 bytes used"),
      copy_row("offset", "v2: out[i] = in[i + K] (--offset K): 5 sectors per warp load instead of 4", Role::version,
               [](const Copies& p) {
                 const std::size_t k = p.offset();
                 return Gather{k, k < p.n() ? p.n() - k : 0, 1};
               },
               [](Copies& p, cudaStream_t s) { v2::launch(p.in(), p.out(), p.n(), p.offset(), p.dev(), s); }),
      offset_both_row(),
      copy_row("float2", "v3: 8-byte float2 loads and stores, scalar tail", Role::version, whole_array,
               [](Copies& p, cudaStream_t s) { v3::launch_float2(p.in(), p.out(), p.n(), p.dev(), s); }),
      copy_row("float4", "v3: 16-byte float4 loads and stores, scalar tail", Role::version, whole_array,
               [](Copies& p, cudaStream_t s) { v3::launch_float4(p.in(), p.out(), p.n(), p.dev(), s); }),
      copy_row("float4_one_per_thread", "v4: one float4 per thread, a grid that covers the array, no loop",
               Role::version, whole_array,
               [](Copies& p, cudaStream_t s) { v4::launch(p.in(), p.out(), p.n(), p.dev(), s); }),
      copy_row("mistake_float4_no_tail", "float4 copy without a tail: the last size % 4 floats are never copied",
               Role::mistake, whole_array,
               [](Copies& p, cudaStream_t s) { mistakes::float4_no_tail(p.in(), p.out(), p.n(), p.dev(), s); }),
  });
}

// The particle step solves another problem than the copies (arithmetic on
// six fields): its rows are shown for the AoS/SoA comparison, not ranked
// against the copies.
steps::GroupPtr aos_group() {
  return steps::group<AosParticles>({aos_row(
      "aos", "v5: particle step on an array of structs: loads 24 bytes apart", steps::Role::reference,
      [](AosParticles& p, cudaStream_t s) {
        v5::launch(p.in(), p.out(), p.particles(), kAccel, kDt, p.dev(), s);
      })});
}

steps::GroupPtr soa_group() {
  steps::Row<SoaParticles> r;
  r.name = "soa";
  r.what = "v6: particle step on a struct of arrays: every access coalesced";
  r.role = steps::Role::reference;
  r.launch = [](SoaParticles& p, steps::Run& run) {
    v6::launch(p.in(), p.out(), p.particles(), kAccel, kDt, p.dev(), run.stream());
  };
  r.work = [](const SoaParticles& p) { return p.work(); };
  r.reset = [](SoaParticles& p) { p.poison(); };
  r.check = [](SoaParticles& p) { return p.check(); };
  return steps::group<SoaParticles>({r});
}

/// Sets cudaLimitMaxL2FetchGranularity (--l2-fetch BYTES; 0 leaves the
/// driver's setting) for the whole run, before the first group. The limit
/// is a hint the driver may clamp or ignore: the copies' problem line
/// reports the value read back, and the DRAM counters (profile tests
/// l2_fetch_*) show what the hardware did.
void set_l2_fetch(const steps::Options& opts, steps::Run&) {
  const std::int64_t bytes = opts.get("--l2-fetch");
  if (bytes != 0) CUDA_CHECK(cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, static_cast<std::size_t>(bytes)));
}

// The registry: the CLI, the table and the JSON all come from these groups.
std::vector<steps::GroupPtr> registry() {
  std::vector<steps::GroupPtr> groups{copies_group(), aos_group(), soa_group()};
#if STEPS_WITH_EXERCISE
  groups.push_back(yours_group());
#endif
  return groups;
}

steps::ChapterInfo info() {
  steps::ChapterInfo i;
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
      "The sector model behind moved GB/s (sectors.hpp) counts each distinct sector once, so moved exceeds GB/s "
      "where a sector comes for part of its bytes (stride 2: half, stride >= 8: 4 of 32 bytes); sectors requested "
      "again but served from L1 (offset, aos) are not counted. Where the L2 moves 64-byte pairs of sectors between "
      "DRAM and L2 (the H200 measured here does by default), DRAM moves twice what the model counts at strides 16 and "
      "32 (README: Profile it; --l2-fetch sets the L2's fetch granularity limit).";
  i.baseline = "memcpy";
  i.goals = {{"best", "memcpy", 0.95, ">= 0.95x memcpy"}};
  i.int_options.push_back(
      {"--offset", "K", "the offset copy reads from in + K floats (K = 8: sector-aligned again)", 1, 0, 64});
  i.int_options.push_back({"--l2-fetch", "BYTES",
                           "set cudaLimitMaxL2FetchGranularity to 32, 64 or 128 bytes first (0: leave it)", 0, 0,
                           128});
  i.before = set_l2_fetch;
  i.validate = [](const steps::Options& o) {
    const std::int64_t b = o.get("--l2-fetch");
    if (b != 0 && b != 32 && b != 64 && b != 128)
      throw steps::UsageError("--l2-fetch must be 0, 32, 64 or 128 (bytes), not " + std::to_string(b));
  };
  return i;
}

} // namespace ch02

int main(int argc, char** argv) { return steps::run_chapter(argc, argv, ch02::info(), ch02::registry()); }
