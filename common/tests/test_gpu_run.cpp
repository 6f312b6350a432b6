// GPU tests of the run model: fork/join, the device scope, untimed work
// before each timed run, asynchronous pinned copies.
#include "steps/catch.hpp"
#include "steps/memory.hpp"
#include "steps/run.hpp"
#include "steps/timing.hpp"

#include <cuda_runtime.h>

namespace steps_test {
void launch_late_write(int* out, int value, unsigned int ns, cudaStream_t s);
void launch_sum_ints(const int* in, int n, int* sum, cudaStream_t s);
} // namespace steps_test

TEST_CASE("run: work in forked streams is finished when the primary stream goes on after join", "[gpu][run]") {
  steps::Run run({steps::query_device(0)});
  constexpr int k = 4;
  steps::DeviceBuffer<int> parts(k), sum(1);
  CUDA_CHECK(cudaMemset(parts.data(), 0, parts.bytes()));
  auto side = run.fork(k);
  REQUIRE(side.size() == k);
  CHECK(run.forked());
  // Each side stream writes late (after ~2 ms): without the join, the sum
  // in the primary stream would run first and see zeros.
  for (int i = 0; i < k; ++i) steps_test::launch_late_write(parts.data() + i, i + 1, 2000000, side[i]);
  run.join();
  CHECK_FALSE(run.forked());
  steps_test::launch_sum_ints(parts.data(), k, sum.data(), run.stream());
  CUDA_CHECK(cudaStreamSynchronize(run.stream()));
  CHECK(sum.to_host()[0] == 1 + 2 + 3 + 4);
}

TEST_CASE("run: side streams wait for the primary stream's earlier work", "[gpu][run]") {
  steps::Run run({steps::query_device(0)});
  steps::DeviceBuffer<int> flag(1), copy(1);
  CUDA_CHECK(cudaMemset(flag.data(), 0, flag.bytes()));
  CUDA_CHECK(cudaDeviceSynchronize());
  steps_test::launch_late_write(flag.data(), 42, 2000000, run.stream());
  auto side = run.fork(1);
  steps_test::launch_sum_ints(flag.data(), 1, copy.data(), side[0]); // must see 42
  run.join();
  CUDA_CHECK(cudaStreamSynchronize(run.stream()));
  CHECK(copy.to_host()[0] == 42);
}

TEST_CASE("device scope: sets and restores the current device", "[gpu][run]") {
  int before = -1, inside = -1, after = -1;
  CUDA_CHECK(cudaGetDevice(&before));
  {
    steps::DeviceScope scope(0);
    CUDA_CHECK(cudaGetDevice(&inside));
  }
  CUDA_CHECK(cudaGetDevice(&after));
  CHECK(inside == 0);
  CHECK(after == before);
}

TEST_CASE("timing: before_each runs before every run and is not timed", "[gpu][timing]") {
  steps::Stream stream;
  steps::DeviceBuffer<int> out(1);
  int calls = 0;
  steps::TimingOptions t;
  t.warmup = 2;
  t.iters = 5;
  // The untimed work sleeps ~5 ms per run, the timed work ~0.
  t.before_each = [&](cudaStream_t s) {
    ++calls;
    steps_test::launch_late_write(out.data(), 1, 5000000, s);
  };
  const auto ms = steps::time_gpu([&](cudaStream_t s) { steps_test::launch_sum_ints(out.data(), 1, out.data(), s); }, t,
                                  stream);
  CHECK(calls == 7);
  CHECK(ms.median < 2.0); // the 5 ms sleeps are outside the events
}

TEST_CASE("copy_async: pinned to device and back, in a stream, with range checks", "[gpu][memory]") {
  steps::Stream stream;
  steps::PinnedBuffer<int> host(1000), back(1000);
  for (int i = 0; i < 1000; ++i) host[i] = 3 * i + 1, back[i] = -1;
  steps::DeviceBuffer<int> dev(1000);
  steps::copy_async(dev, 0, host, 0, 500, stream);
  steps::copy_async(dev, 500, host, 500, 500, stream);
  steps::copy_async(back, dev, stream);
  stream.synchronize();
  for (int i = 0; i < 1000; ++i) REQUIRE(back[i] == 3 * i + 1);
  CHECK_THROWS_AS(steps::copy_async(dev, 600, host, 0, 500, stream), std::out_of_range);
}
