#include "steps/catch.hpp"
#include "steps/device.hpp"
#include "steps/math.hpp"
#include "steps/memory.hpp"

#include <cstdint>
#include <limits>

TEST_CASE("theoretical bandwidth: double data rate times bus width", "[device]") {
  // H200: HBM3e at 3201 MHz on a 6016-bit bus.
  CHECK(steps::theoretical_bandwidth_gbs(3201000, 6016) == Approx(4814.3).epsilon(1e-4));
  // A100 40GB: 1215 MHz, 5120-bit.
  CHECK(steps::theoretical_bandwidth_gbs(1215000, 5120) == Approx(1555.2).epsilon(1e-4));
  CHECK(steps::theoretical_bandwidth_gbs(0, 6016) == 0.0);
}

TEST_CASE("device slug is safe for file names", "[device]") {
  CHECK(steps::device_slug("NVIDIA H200") == "H200");
  CHECK(steps::device_slug("NVIDIA GeForce RTX 4090") == "GeForce_RTX_4090");
  CHECK(steps::device_slug("NVIDIA H100 80GB HBM3") == "H100_80GB_HBM3");
  CHECK(steps::device_slug("A/B:c") == "A_B_c");
  CHECK(steps::device_slug("") == "unknown_gpu");
}

TEST_CASE("ceil_div covers the tail that plain division drops", "[math]") {
  CHECK(steps::ceil_div(0, 256) == 0);
  CHECK(steps::ceil_div(1, 256) == 1);
  CHECK(steps::ceil_div(256, 256) == 1);
  CHECK(steps::ceil_div(257, 256) == 2);
  CHECK(steps::ceil_div<std::size_t>(std::size_t{1} << 40, 3) == 366503875926);
  static_assert(steps::ceil_div(1025, 32) == 33, "ceil_div must be constexpr");
  CHECK(steps::round_up(1025, 32) == 1056);
}

TEST_CASE("is_aligned", "[math]") {
  alignas(16) float buf[8] = {};
  CHECK(steps::is_aligned(buf, 16));
  CHECK_FALSE(steps::is_aligned(buf + 1, 16));
  CHECK(steps::is_aligned(buf + 4, 16));
}

TEST_CASE("byte counts: overflow is caught, sizes are readable", "[memory]") {
  CHECK(steps::checked_bytes(10, 4) == 40);
  CHECK_THROWS_AS(steps::checked_bytes(std::numeric_limits<std::size_t>::max() / 2, 4), steps::OutOfMemory);
  CHECK(steps::format_bytes(512) == "512 B");
  CHECK(steps::format_bytes(1536) == "1.50 KiB");
  CHECK(steps::format_bytes(3.0 * (1 << 30)) == "3.00 GiB");
}
