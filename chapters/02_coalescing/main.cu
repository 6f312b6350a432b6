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
#include "copies_problem.cuh"
#include "particle_problems.cuh"
#include "particles.cuh"
#include "v5_aos.cuh"
#include "v6_soa.cuh"

#include "steps/chapter.hpp"

#if STEPS_WITH_EXERCISE
#include "yours.cuh"
#endif

#include <cstdint>
#include <string>
#include <vector>

namespace ch02 {

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
