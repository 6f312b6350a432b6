// Exercise 08, solution: the chunks spread over the streams round-robin,
// each chunk's three operations in one stream (stream order alone makes its
// kernel wait for its input and its output copy for its kernel), each stream
// with its own device buffers, forked from `origin` and joined back.
#include "given.cuh"
#include "pipeline.hpp"

#include "steps/error.hpp"
#include "steps/handle.hpp"
#include "steps/memory.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace ex08 {

// Pinned (page-locked) memory: the copy engines read and write it directly,
// so a copy from it is truly asynchronous and can overlap other work.
using HostBuffer = steps::PinnedBuffer<float>;

struct Pipeline::State {
  HostBuffer input, output;
  std::vector<steps::Stream> lanes; // non-blocking: never wait for the legacy default stream
  steps::RawEvent fork;             // recorded in origin: where the lanes start
  std::vector<steps::RawEvent> done; // one per lane: where origin waits for it
};

Pipeline::Pipeline(std::size_t capacity, int streams)
    : state_(std::make_unique<State>()), capacity_(capacity), streams_(streams) {
  if (streams < 1) throw std::invalid_argument("Pipeline: streams must be >= 1");
  state_->input = HostBuffer(capacity);
  state_->output = HostBuffer(capacity);
  for (int l = 0; l < streams; ++l) state_->lanes.emplace_back(cudaStreamNonBlocking);
  CUDA_CHECK(cudaEventCreateWithFlags(state_->fork.out(), cudaEventDisableTiming));
  state_->done.resize(static_cast<std::size_t>(streams));
  for (auto& e : state_->done) CUDA_CHECK(cudaEventCreateWithFlags(e.out(), cudaEventDisableTiming));
}

Pipeline::~Pipeline() = default;

float* Pipeline::input() { return state_->input.data(); }
float* Pipeline::output() { return state_->output.data(); }

void Pipeline::run(std::size_t n, int chunks, cudaStream_t origin) {
  if (!has_work("Pipeline::run", n, capacity_, chunks)) return; // checks the arguments; n == 0: nothing to do
  const std::size_t len = (n + static_cast<std::size_t>(chunks) - 1) / static_cast<std::size_t>(chunks);
  const int used = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(streams_), (n + len - 1) / len));
  auto& lanes = state_->lanes;

  // Two device buffers (in, out) of one chunk per stream, stream-ordered in
  // origin: they exist from here on in origin's order, and every lane forks
  // after this point.
  float* staging = nullptr;
  CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&staging), 2 * static_cast<std::size_t>(used) * len * sizeof(float),
                             origin));

  // Fork: every lane starts after what origin holds so far.
  CUDA_CHECK(cudaEventRecord(state_->fork, origin));
  for (int l = 0; l < used; ++l) CUDA_CHECK(cudaStreamWaitEvent(lanes[static_cast<std::size_t>(l)], state_->fork, 0));

  for (int c = 0; c < chunks; ++c) {
    const std::size_t begin = static_cast<std::size_t>(c) * len;
    if (begin >= n) break;
    const std::size_t count = std::min(len, n - begin);
    const int l = c % used;
    // Lane l reuses its own buffers for chunks l, l + used, ...: stream
    // order makes each chunk wait until the previous one in the lane is done.
    const std::size_t slot = static_cast<std::size_t>(l);
    float* dev_in = staging + 2 * slot * len;
    float* dev_out = dev_in + len;
    const std::size_t bytes = count * sizeof(float);
    CUDA_CHECK(cudaMemcpyAsync(dev_in, input() + begin, bytes, cudaMemcpyHostToDevice, lanes[static_cast<std::size_t>(l)]));
    process(dev_in, dev_out, count, lanes[static_cast<std::size_t>(l)]);
    CUDA_CHECK(cudaMemcpyAsync(output() + begin, dev_out, bytes, cudaMemcpyDeviceToHost, lanes[static_cast<std::size_t>(l)]));
  }

  // Join: origin waits for every lane; then the buffers go back, in origin's order.
  for (int l = 0; l < used; ++l) {
    CUDA_CHECK(cudaEventRecord(state_->done[static_cast<std::size_t>(l)], lanes[static_cast<std::size_t>(l)]));
    CUDA_CHECK(cudaStreamWaitEvent(origin, state_->done[static_cast<std::size_t>(l)], 0));
  }
  CUDA_CHECK(cudaFreeAsync(staging, origin));
}

} // namespace ex08
