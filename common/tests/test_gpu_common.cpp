// Tests of the common library that need a GPU (label gpu).
#include "steps/arch.hpp"
#include "steps/catch.hpp"
#include "steps/device.hpp"
#include "steps/cublas.hpp"
#include "steps/error.hpp"
#include "steps/fp8.hpp"
#include "steps/guarded.hpp"
#include "steps/memory.hpp"
#include "steps/random.hpp"
#include "steps/timing.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace steps_test {
void launch_add_one(float* x, int n, int threads);
}

TEST_CASE("device facts are read from attributes", "[gpu]") {
  const auto d = steps::query_device(0);
  CHECK(!d.name.empty());
  CHECK(d.cc_major >= 7);
  CHECK(d.sm_count > 0);
  CHECK(d.l2_bytes > 0);
  CHECK(d.mem_clock_khz > 0);
  CHECK(d.mem_bus_bits > 0);
  CHECK(d.peak_bandwidth_gbs > 100);
}

TEST_CASE("this build has code for the GPU it runs on", "[gpu]") {
  // The probe every program and grader asks before it runs (exit 77 with this
  // reason when it fails); this test runs on the build's own GPU.
  CHECK(steps::build_code_missing(steps::query_device(0)) == "");
}

TEST_CASE("buffers round-trip and the GPU fill matches the CPU fill", "[gpu]") {
  const std::size_t n = 1000003;
  steps::DeviceBuffer<float> d(n);
  steps::fill_uniform_device(d.data(), n, 11, -3.0f, 3.0f);
  CHECK(d.to_host() == steps::random_vector(n, 11, -3.0f, 3.0f));

  const auto h = steps::random_vector(n, 12);
  d.copy_from_host(h);
  CHECK(d.to_host() == h);

  steps::DeviceBuffer<float> moved = std::move(d);
  CHECK(d.data() == nullptr);
  CHECK(moved.size() == n);
}

TEST_CASE("the GPU's BF16 fill is the CPU's uniform values rounded to BF16", "[gpu]") {
  const std::size_t n = 100003;
  steps::DeviceBuffer<std::uint16_t> d(n);
  steps::fill_uniform_bf16_device(d.data(), n, 13, -2.0f, 2.0f);
  const std::vector<std::uint16_t> got = d.to_host();
  const std::vector<float> want = steps::random_vector(n, 13, -2.0f, 2.0f);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += got[i] != steps::float_to_bf16(want[i]);
  CHECK(wrong == 0);
}

TEST_CASE("CUDA_CHECK throws with the error name, file and expression", "[gpu]") {
  try {
    CUDA_CHECK(cudaSetDevice(9999));
    FAIL("no exception");
  } catch (const steps::Error& e) {
    CHECK(e.code_name() == "cudaErrorInvalidDevice");
    CHECK(e.expression() == "cudaSetDevice(9999)");
    CHECK(std::string(e.what()).find("test_gpu_common.cpp") != std::string::npos);
  }
  // The error was cleared: the next call works.
  CUDA_CHECK(cudaSetDevice(0));
}

TEST_CASE("CUDA_CHECK_LAUNCH reports a bad launch configuration", "[gpu]") {
  steps::DeviceBuffer<float> x(100);
  x.fill_bytes(0);
  CHECK_NOTHROW(steps_test::launch_add_one(x.data(), 100, 128));
  try {
    steps_test::launch_add_one(x.data(), 100, 2048); // more than 1024 threads per block
    FAIL("no exception");
  } catch (const steps::Error& e) {
    // CUDA 13 reports cudaErrorInvalidValue here; older releases said
    // cudaErrorInvalidConfiguration. Either way the launch check caught it.
    CHECK((e.code_name() == "cudaErrorInvalidValue" || e.code_name() == "cudaErrorInvalidConfiguration"));
  }
  CHECK(x.to_host()[99] == 1.0f); // only the good launch ran
}

TEST_CASE("an allocation larger than the GPU is a clear OutOfMemory", "[gpu]") {
  try {
    steps::DeviceBuffer<float> huge(std::size_t{1} << 42); // 16 TiB
    FAIL("no exception");
  } catch (const steps::OutOfMemory& e) {
    CHECK(std::string(e.what()).find("does not fit") != std::string::npos);
  }
  steps::DeviceBuffer<float> fine(16); // still usable afterwards
  CHECK(fine.size() == 16);
}

TEST_CASE("event timing gives positive, ordered statistics", "[gpu]") {
  steps::DeviceBuffer<float> x(1 << 24);
  x.fill_bytes(0);
  steps::TimingOptions opts;
  opts.iters = 10;
  opts.flush_l2 = true;
  const auto s = steps::time_gpu([&](cudaStream_t) { steps_test::launch_add_one(x.data(), 1 << 24, 256); }, opts);
  CHECK(s.count == 10);
  CHECK(s.min > 0);
  CHECK(s.min <= s.median);
  CHECK(s.median <= s.max);
  // 3 warm-ups + 10 timed runs, each adding one.
  CHECK(x.to_host()[12345] == 13.0f);
}

TEST_CASE("measured copy bandwidth is positive and below the theoretical peak", "[gpu]") {
  const double bw = steps::measure_copy_bandwidth_gbs(std::size_t{256} << 20, 5);
  const double peak = steps::query_device(0).peak_bandwidth_gbs;
  CHECK(bw > 0.1 * peak);
  CHECK(bw < 1.05 * peak);
}

TEST_CASE("CUBLAS_CHECK throws with the status name", "[gpu]") {
  steps::CublasHandle handle;
  float x = 1.0f, result = 0.0f;
  try {
    CUBLAS_CHECK(cublasSnrm2(handle, -1, &x, 0, &result)); // incx = 0 is fine, n < 0 returns 0; use a null handle
    CUBLAS_CHECK(cublasSnrm2(nullptr, 1, &x, 1, &result));
    FAIL("no exception");
  } catch (const steps::Error& e) {
    CHECK(e.library() == "cuBLAS");
    CHECK(e.code_name() == "CUBLAS_STATUS_NOT_INITIALIZED");
  }
}

TEST_CASE("guarded buffers of a struct: guards checked byte for byte", "[gpu]") {
  struct Pair {
    float value;
    std::uint32_t index;
  };
  steps::GuardedBuffer<Pair> g(3, 0, 4);
  REQUIRE(g.check_guards().ok);
  // One byte written just past the end: the back guard changed.
  CUDA_CHECK(cudaMemset(reinterpret_cast<unsigned char*>(g.data() + 3), 0, 1));
  CUDA_CHECK(cudaDeviceSynchronize());
  const steps::Comparison c = g.check_guards();
  CHECK_FALSE(c.ok);
  CHECK(c.out_of_bounds);
  CHECK(c.outside_index == 3);
}

TEST_CASE("current clocks: read through NVML, which comes with the driver", "[gpu]") {
  const steps::Clocks c = steps::current_clocks(0);
  const steps::DeviceInfo d = steps::query_device(0);
  // Linux drivers install libnvidia-ml.so.1 beside libcuda: with a GPU the
  // clocks must be known, and not above the boost clock (plus rounding).
  REQUIRE(c.sm_mhz > 0);
  CHECK(c.mem_mhz > 0);
  CHECK(c.sm_mhz <= d.sm_clock_khz / 1000 + 50);
  CHECK(steps::current_clocks(-1).sm_mhz == 0); // no such device: unknown, not an error
}
