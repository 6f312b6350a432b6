// Grader for exercise 02 (a coalesced particle step on an array of structs).
// Built twice: against your exercises/ code (./tutorial grade 02) and
// against the solution (part of ./tutorial test).
//
// Every shape runs on fresh random particles in guarded device arrays: the
// guard zones around them hold NaN, so a read outside `in` turns a result
// into NaN, and a write outside `out` is caught. The output starts as NaN
// too, so a float your code never writes cannot pass, and the grader tells
// you so. The reference is computed on the fly, in double, from the same
// seeded generator that filled the input on the GPU (no host copy of the
// input: the hidden [.huge] case has more than 2^31 floats per array).
#include "step_particles.hpp"

#include "steps/catch.hpp"
#include "steps/error.hpp"
#include "steps/grade.hpp"
#include "steps/guarded.hpp"
#include "steps/math.hpp"
#include "steps/random.hpp"
#include "steps/timing.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kFields = 6; // floats per particle
const char* const kFieldNames[kFields] = {"x", "y", "z", "vx", "vy", "vz"};

struct Shape {
  std::size_t n;          // particles
  std::size_t in_offset;  // particles between a 16-byte boundary and in[0]
  std::size_t out_offset; // the same for out[0]
};

std::string name_of(const Shape& s) {
  std::ostringstream os;
  os << "step_particles(n = " << s.n << " particles, in starts " << s.in_offset << " particle(s) and out "
     << s.out_offset << " particle(s) past a 16-byte boundary)";
  return os.str();
}

struct Step {
  float3 accel;
  float dt;
};

// The input of a shape: float j of `in` (6 per particle), the value the GPU
// filled it with.
struct Input {
  std::uint64_t seed;
  float operator()(std::size_t j) const { return steps::uniform_at(seed, j, -1.0f, 1.0f); }
};

// The reference of output float j, in double: velocity first (v + a dt),
// then the position with the new velocity (p + v' dt).
double expected_at(const Input& in, const Step& st, std::size_t j) {
  const std::size_t field = j % kFields;
  const double a[3] = {st.accel.x, st.accel.y, st.accel.z};
  if (field >= 3) return static_cast<double>(in(j)) + a[field - 3] * st.dt;
  const double v = static_cast<double>(in(j + 3)) + a[field] * st.dt;
  return static_cast<double>(in(j)) + v * st.dt;
}

// steps::compare_each over [0, n), spread over the CPU's cores in chunks and
// merged into one Comparison (the same result as one compare_each): one core
// would need most of the watchdog's time for the 2^31 floats of [.huge].
template <class Got, class Expected, class Bound>
steps::Comparison compare_in_parallel(std::size_t n, Got got, Expected expected, Bound bound, double rel_l2) {
  constexpr std::size_t kChunk = std::size_t{1} << 22;
  if (n <= kChunk) return steps::compare_each(n, got, expected, bound, rel_l2);
  struct Part {
    steps::Comparison c;
    double ref2 = 0; // sum of expected^2 over the chunk
  };
  const std::size_t chunks = steps::ceil_div(n, kChunk);
  std::vector<Part> parts(chunks);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t k = next++; k < chunks; k = next++) {
      const std::size_t lo = k * kChunk, len = std::min(kChunk, n - lo);
      Part& part = parts[k];
      part.c = steps::compare_each(
          len, [&](std::size_t i) { return got(lo + i); },
          [&](std::size_t i) {
            const double e = static_cast<double>(expected(lo + i));
            part.ref2 += e * e;
            return e;
          },
          [&](std::size_t i, double e) { return bound(lo + i, e); }, INFINITY);
    }
  };
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < std::min(cores, chunks); ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();

  steps::Comparison c;
  c.count = n;
  double err2 = 0, ref2 = 0;
  for (std::size_t k = 0; k < chunks; ++k) {
    const steps::Comparison& p = parts[k].c;
    if (p.bad_count > 0 && c.bad_count == 0) {
      c.first_bad = k * kChunk + p.first_bad;
      c.expected_at_first_bad = p.expected_at_first_bad;
      c.got_at_first_bad = p.got_at_first_bad;
    }
    c.bad_count += p.bad_count;
    c.non_finite = c.non_finite || p.non_finite;
    c.max_abs_error = std::fmax(c.max_abs_error, p.max_abs_error);
    // compare_each's rel_l2_error is sqrt(err2 / ref2), or sqrt(err2) when ref2 = 0.
    err2 += p.rel_l2_error * p.rel_l2_error * (parts[k].ref2 > 0 ? parts[k].ref2 : 1.0);
    ref2 += parts[k].ref2;
  }
  if (c.non_finite) c.max_abs_error = INFINITY;
  c.rel_l2_error = c.non_finite ? INFINITY : (ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2));
  c.ok = c.bad_count == 0 && !c.non_finite && !(c.rel_l2_error > rel_l2);
  return c;
}

// Bits of the NaN every float of out starts as (GuardedBuffer::poison).
bool is_poison(float v) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return bits == 0xFFFFFFFFu;
}

// Turns a failed comparison into a message that says what went wrong and
// where to look. `got` is the float your code left at the first wrong place.
std::string explain(const steps::Comparison& c, float got, const Input& in, const Step& st) {
  if (c.out_of_bounds)
    return c.describe() + "\n  Hint: no thread may write past out[n - 1].vz (float 6 n - 1) or before out[0]. "
                          "The last block usually has fewer than a full block of particles: bound every "
                          "load and store by what is left.";
  if (c.bad_count == 0) return c.describe();
  const std::size_t j = c.first_bad;
  const std::size_t particle = j / kFields, field = j % kFields;
  const std::string where = "out[" + std::to_string(particle) + "]." + kFieldNames[field] + " (float " +
                            std::to_string(j) + " of the array)";
  const float a[3] = {st.accel.x, st.accel.y, st.accel.z};
  const std::size_t axis = field % 3;
  std::string hint;
  if (std::isnan(got) && is_poison(got) && j >= (std::size_t{1} << 31)) {
    hint = where + " was never written, and it lies past float 2^31 of the array: is every float offset "
           "computed in 64 bits (std::size_t)? 6 * (first particle of a block) in an int overflows there.";
  } else if (std::isnan(got) && is_poison(got)) {
    hint = where + " was never written. Does your grid cover all n particles, the last, partial block "
           "included (ceil_div, not n / threads)? Remember that a particle is 6 floats: particle i starts at "
           "float 6 i.";
  } else if (std::isnan(got)) {
    hint = where + " was computed from a NaN. The floats around in[0 .. n) hold NaN: did your code read "
           "before in[0] or past in[n - 1].vz (float 6 n - 1), or a float of shared memory that no thread "
           "had stored yet?";
  } else if (std::fabs(got) > 3) {
    hint = where + " was computed from input that was not ready yet: the grader's stream has work pending "
           "ahead of your call (it finishes writing in), and your kernel did not wait for it. Launch in `stream` "
           "(not in the default stream 0), and never use cudaMemcpy / cudaMemset without Async.";
  } else if (field < 3) {
    const double p = in(j), v_old = in(j + 3);
    const double explicit_euler = p + v_old * st.dt;
    if (std::fabs(got - explicit_euler) <= 1e-6 + 1e-5 * std::fabs(explicit_euler))
      hint = where + " was moved with the OLD velocity. Semi-implicit Euler updates the velocity first "
             "(v + a * dt) and moves the position with the new one.";
    else
      hint = where + " is a position: p + (v + a * dt) * dt, with p = in[" + std::to_string(particle) + "]." +
             kFieldNames[field] + " and v = in[" + std::to_string(particle) + "]." + kFieldNames[field + 3] +
             " (3 floats after p). Check which input floats you read and which acceleration component.";
  } else {
    const double v = in(j);
    bool other_axis = false;
    for (std::size_t d = 0; d < 3; ++d)
      if (d != axis && std::fabs(got - (v + static_cast<double>(a[d]) * st.dt)) <= 1e-6 + 1e-5 * std::fabs(got))
        other_axis = true;
    if (other_axis)
      hint = where + " got the acceleration of another axis: vx takes accel.x, vy accel.y, vz accel.z.";
    else
      hint = where + " is a velocity: v + a * dt with v = in[" + std::to_string(particle) + "]." +
             kFieldNames[field] + ". Check which input floats you read for this particle (a particle is 6 "
             "floats: x y z vx vy vz, and particle i starts at float 6 i).";
  }
  return c.describe() + "\n  Hint: " + hint;
}

// Above this many floats only sampled windows are compared on the host
// (sample_windows: the ends, around every multiple of 2^31 floats, random
// places: where a 32-bit offset goes wrong); that every float was written is
// still checked for all of them, on the GPU.
constexpr std::size_t kCheckAll = std::size_t{1} << 26;

// Runs step_particles on one shape and checks everything. Returns "" when correct.
std::string run_shape(const Shape& s, std::uint64_t seed) {
  // A different step for every shape; every acceleration component differs
  // from the others, and a * dt * dt is far above float rounding.
  Step st;
  st.accel.x = steps::uniform_at(seed, 0, 0.5f, 2.0f);
  st.accel.y = steps::uniform_at(seed, 1, -12.0f, -8.0f);
  st.accel.z = steps::uniform_at(seed, 2, -3.0f, -2.5f);
  st.dt = steps::uniform_at(seed, 3, 0.02f, 0.05f);
  const std::size_t floats = kFields * s.n;
  const Input in{seed + 1};

  steps::GuardedBuffer<float> din(floats, kFields * s.in_offset), dout(floats, kFields * s.out_offset);
  steps::fill_uniform_device(din.data(), floats, in.seed, -1.0f, 1.0f);
  CUDA_CHECK(cudaDeviceSynchronize());
  // in is scrambled, and out not yet poisoned, until the work pending in the
  // stream has run.
  steps::grade::BusyStream stream;
  stream.restores(din.data(), floats * sizeof(float));
  stream.fills(dout.data(), floats * sizeof(float), 0xFF);
  stream.start();
  ex02::step_particles(reinterpret_cast<const ex02::Particle*>(din.data()),
                       reinterpret_cast<ex02::Particle*>(dout.data()), s.n, st.accel, st.dt, stream);
  stream.finish();

  if (auto c = dout.check_guards(); !c.ok) return "out is wrong: " + explain(c, 0.0f, in, st);
  if (const auto ic = din.check_guards(); !ic.ok) return "in's guard zone changed: " + ic.describe();
  const steps::Tolerance tol = steps::Tolerance::fp32();
  const bool all = floats <= kCheckAll;
  if (!all) { // every float written: on the GPU
    const std::size_t unwritten = steps::grade::find_word(dout.data(), floats, 1, floats, 0xFFFFFFFFu, true);
    if (unwritten < floats) {
      steps::Comparison c;
      c.ok = false;
      c.count = floats;
      c.bad_count = 1;
      c.first_bad = unwritten;
      c.expected_at_first_bad = expected_at(in, st, unwritten);
      c.got_at_first_bad = std::nan("");
      float poison;
      const std::uint32_t bits = 0xFFFFFFFFu;
      std::memcpy(&poison, &bits, sizeof poison);
      return "out is wrong: " + explain(c, poison, in, st);
    }
  }
  const auto windows = all ? std::vector<std::pair<std::size_t, std::size_t>>{{0, floats}}
                           : steps::grade::sample_windows(floats, seed);
  std::vector<float> got;
  for (const auto& [lo, hi] : windows) {
    got.resize(hi - lo);
    if (hi > lo)
      CUDA_CHECK(cudaMemcpy(got.data(), dout.data() + lo, (hi - lo) * sizeof(float), cudaMemcpyDeviceToHost));
    auto c = compare_in_parallel(
        hi - lo, [&](std::size_t j) { return got[j]; }, [&](std::size_t j) { return expected_at(in, st, lo + j); },
        [&](std::size_t, double e) { return tol.abs + tol.rel * std::fabs(e); }, all ? tol.rel_l2 : INFINITY);
    if (!c.ok) {
      const float g = got[c.first_bad];
      c.first_bad += lo;
      c.count = floats;
      return "out is wrong: " + explain(c, g, in, st);
    }
    if (hi > lo)
      CUDA_CHECK(cudaMemcpy(got.data(), din.data() + lo, (hi - lo) * sizeof(float), cudaMemcpyDeviceToHost));
    auto ic = compare_in_parallel(
        hi - lo, [&](std::size_t j) { return got[j]; }, [&](std::size_t j) { return in(lo + j); },
        [](std::size_t, double) { return 0.0; }, 0.0);
    if (!ic.ok) {
      ic.first_bad += lo;
      ic.count = floats;
      return "in changed, but it is an input: " + ic.describe() + "\n  Hint: write the new state to out only.";
    }
  }
  return "";
}

// Exercise-specific words for a CUDA error (the harness adds the general ones).
std::string particles_hint(const steps::Error& e) {
  const std::string& code = e.code_name();
  if (code == "cudaErrorMisalignedAddress")
    return "a float2 access needs an 8-byte and a float4 access a 16-byte aligned address. The particles may "
           "start at any particle (24-byte) boundary: only 8 bytes are promised.";
  if (code == "cudaErrorIllegalAddress")
    return "does the last block, which usually has fewer particles than threads, stay inside the arrays? Is "
           "every float offset computed in 64 bits (std::size_t)? 6 n passes 2^31 for n > 357,913,941.";
  if (code == "cudaErrorInvalidConfiguration" || code == "cudaErrorInvalidValue")
    return "n = 0 needs no launch at all; a block count rounded down (fewer floats than threads per block) "
           "can be 0 too.";
  return "";
}

void grade(const std::vector<Shape>& shapes) { steps::grade::shapes(shapes, name_of, run_shape, particles_hint); }

} // namespace

TEST_CASE("step_particles on small and odd counts", "[step_particles]") {
  grade({{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {5, 0, 0}, {7, 0, 0}, {31, 0, 0}, {32, 0, 0},
         {33, 0, 0}, {42, 0, 0}, {43, 0, 0}, {255, 0, 0}, {256, 0, 0}, {257, 0, 0}, {1000, 0, 0},
         {1023, 0, 0}, {4099, 0, 0}});
}

TEST_CASE("step_particles on arrays that start at odd particles (8-byte aligned only)", "[step_particles]") {
  grade({{1, 1, 0}, {2, 0, 1}, {5, 1, 3}, {33, 3, 1}, {257, 1, 1}, {1025, 3, 0}, {4099, 0, 1}, {100003, 1, 3}});
}

TEST_CASE("step_particles on large counts (more floats than threads)", "[step_particles][large]") {
  grade({{999983, 0, 0}, {999983, 1, 1}, {(1u << 22) + 1, 0, 0}, {(1u << 22) + 1, 3, 1}});
}

// Past 2^31 floats a float offset computed in int overflows (6 * first
// particle of a block, say), and past 2^32 one computed in unsigned int.
// 716,000,001 particles are 4,296,000,006 floats per array: the last 673
// blocks of 256 particles start past 2^32 floats, those from particle
// 357,913,942 on past 2^31. in and out take 34.4 GB of GPU memory, so this
// case is hidden ([.huge]): ./tutorial grade runs it after the others pass,
// alone, and where the GPU lacks the memory it says so and is not checked.
// The data is made on the GPU, every float is checked to be written on the
// GPU, and values are compared on sampled windows (the ends, around 2^31 and
// 2^32 floats, random places).
TEST_CASE("step_particles past 2^32 floats (64-bit offsets)", "[.huge]") {
  const std::size_t n = 716000001;
  const std::size_t need = 2 * kFields * n * sizeof(float) + (std::size_t{1} << 30); // in, out, 1 GiB spare
  std::size_t free_bytes = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < need) {
    std::cout << "SKIPPED: n = 716,000,001 particles (2^32 + 1,032,710 floats per array) needs " << (need >> 20)
              << " MiB of free GPU memory; this GPU has " << (free_bytes >> 20)
              << " MiB free: 64-bit offsets are not checked here.\n";
    std::exit(77);
  }
  steps::grade::shapes<Shape>({{n, 0, 0}}, name_of, run_shape, particles_hint, 120);
}

TEST_CASE("step_particles speed", "[.speed]") {
  const std::size_t n = std::size_t{1} << 23;
  REQUIRE(run_shape({n, 0, 0}, 99).empty());
  steps::DeviceBuffer<float> in(kFields * n), out(kFields * n);
  steps::fill_uniform_device(in.data(), kFields * n, 5);
  CUDA_CHECK(cudaDeviceSynchronize());
  const float3 accel{0.5f, -9.81f, 1.5f};
  steps::TimingOptions opts;
  opts.iters = 50;
  const auto ms = steps::time_gpu(
      [&](cudaStream_t s) {
        ex02::step_particles(reinterpret_cast<const ex02::Particle*>(in.data()),
                             reinterpret_cast<ex02::Particle*>(out.data()), n, accel, 0.01f, s);
      },
      opts);
  steps::grade::report_speed("step_particles on 2^23 particles", ms, 48.0 * static_cast<double>(n));
}
