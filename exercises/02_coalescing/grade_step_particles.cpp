// Grader for exercise 02 (a coalesced particle step on an array of structs).
// Built twice: against your exercises/ code (./tutorial grade 02) and
// against the solution (part of ./tutorial test).
//
// Every shape runs on fresh random particles in guarded device arrays
// (writes outside the array are caught). The output starts as NaN, so a
// float your code never writes cannot pass, and the grader tells you so.
#include "step_particles.hpp"

#include "steps/catch.hpp"
#include "steps/error.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"
#include "steps/report.hpp"
#include "steps/timing.hpp"

#include <cmath>
#include <iostream>
#include <sstream>
#include <string>
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
  os << "n = " << s.n << " particles, in starts " << s.in_offset << " particle(s) and out " << s.out_offset
     << " particle(s) past a 16-byte boundary";
  return os.str();
}

struct Step {
  float3 accel;
  float dt;
};

// Turns a failed comparison into a message that says what went wrong and
// where to look. `in` holds the input floats, 6 per particle.
std::string explain(const steps::Comparison& c, const std::vector<float>& in, const Step& st) {
  if (c.out_of_bounds)
    return c.describe() + "\n  Hint: no thread may write past out[n - 1].vz (float 6 n - 1) or before out[0]. "
                          "The last block usually has fewer than a full block of particles: bound every "
                          "load and store by what is left.";
  if (c.bad_count == 0) return c.describe();
  const std::size_t j = c.first_bad;
  const std::size_t particle = j / kFields, field = j % kFields;
  const std::string where = "out[" + std::to_string(particle) + "]." + kFieldNames[field] + " (float " +
                            std::to_string(j) + " of the array)";
  const double got = c.got_at_first_bad;
  const float a[3] = {st.accel.x, st.accel.y, st.accel.z};
  const std::size_t axis = field % 3;
  std::string hint;
  if (std::isnan(got)) {
    hint = where + " was never written. Does your grid cover all n particles, the last, partial block "
           "included (ceil_div, not n / threads)? Remember that a particle is 6 floats: particle i starts at "
           "float 6 i.";
  } else if (field < 3) {
    const double p = in[j], v_old = in[j + 3];
    const double explicit_euler = p + v_old * st.dt;
    if (std::fabs(got - explicit_euler) <= 1e-6 + 1e-5 * std::fabs(explicit_euler))
      hint = where + " was moved with the OLD velocity. Semi-implicit Euler updates the velocity first "
             "(v + a * dt) and moves the position with the new one.";
    else
      hint = where + " is a position: p + (v + a * dt) * dt, with p = in[" + std::to_string(particle) + "]." +
             kFieldNames[field] + " and v = in[" + std::to_string(particle) + "]." + kFieldNames[field + 3] +
             " (3 floats after p). Check which input floats you read and which acceleration component.";
  } else {
    const double v = in[j];
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
  const auto in = steps::random_vector(floats, seed + 1, -1.0f, 1.0f);

  steps::GuardedBuffer<float> din(floats, kFields * s.in_offset), dout(floats, kFields * s.out_offset);
  din.upload(in.data());
  dout.poison();
  CUDA_CHECK(cudaDeviceSynchronize());
  steps::Stream stream;
  ex02::step_particles(reinterpret_cast<const ex02::Particle*>(din.data()),
                       reinterpret_cast<ex02::Particle*>(dout.data()), s.n, st.accel, st.dt, stream);
  stream.synchronize();

  // The reference, in double.
  std::vector<double> want(floats);
  const double a[3] = {st.accel.x, st.accel.y, st.accel.z};
  for (std::size_t i = 0; i < s.n; ++i)
    for (std::size_t d = 0; d < 3; ++d) {
      const double v = static_cast<double>(in[kFields * i + 3 + d]) + a[d] * st.dt;
      want[kFields * i + 3 + d] = v;
      want[kFields * i + d] = static_cast<double>(in[kFields * i + d]) + v * st.dt;
    }
  const auto got = dout.download();
  auto c = dout.check_guards();
  if (c.ok) c = steps::compare(got.data(), want.data(), floats, steps::Tolerance::fp32());
  if (!c.ok) return "out is wrong: " + explain(c, in, st);

  if (const auto ic = din.check_guards(); !ic.ok) return "in's guard zone changed: " + ic.describe();
  if (const auto ic = steps::compare(din.download(), in, steps::Tolerance::exact()); !ic.ok)
    return "in changed, but it is an input: " + ic.describe() + "\n  Hint: write the new state to out only.";
  return "";
}

void grade(const std::vector<Shape>& shapes) {
  std::uint64_t seed = 1;
  for (const auto& s : shapes) {
    INFO("step_particles(" << name_of(s) << ")");
    std::string problem;
    try {
      problem = run_shape(s, seed += 10);
    } catch (const steps::Error& e) {
      problem = std::string("a CUDA error: ") + e.what();
      if (e.code_name() == "cudaErrorMisalignedAddress")
        problem += "\n  Hint: a float2 access needs an 8-byte and a float4 access a 16-byte aligned address. "
                   "The particles may start at any particle (24-byte) boundary: only 8 bytes are promised.";
      if (e.code_name() == "cudaErrorIllegalAddress")
        problem += "\n  Hint: a load or store far outside the arrays. Does the last block, which usually has "
                   "fewer particles than threads, stay inside them?";
      if (e.code_name() == "cudaErrorInvalidConfiguration" || e.code_name() == "cudaErrorInvalidValue")
        problem += "\n  Hint: a launch with 0 blocks (n = 0? fewer floats than threads per block, rounded "
                   "down?) or more than 1024 threads per block is invalid.";
    }
    if (!problem.empty()) FAIL(problem);
  }
}

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
  std::cout << "speed: step_particles on " << n << " particles: median " << steps::fixed(ms.median, 4) << " ms, "
            << steps::fixed(steps::gbps(48.0 * static_cast<double>(n), ms.median), 0) << " GB/s\n";
}
