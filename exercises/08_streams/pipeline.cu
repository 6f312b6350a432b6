// Exercise 08: turn this serial copy-compute-copy loop into a pipeline over
// several streams. It computes the right output, but one operation at a
// time, and from pageable memory. See README.md (task and hints); the grader
// is grade_pipeline.cpp.
#include "given.cuh"
#include "pipeline.hpp"

#include "steps/error.hpp"
#include "steps/handle.hpp"
#include "steps/memory.hpp"

#include <stdexcept>
#include <vector>

namespace ex08 {

// TODO(1): std::vector is pageable memory: a copy from it is staged by the
// driver and cannot overlap anything. Use memory the GPU can copy
// asynchronously.
using HostBuffer = std::vector<float>;

struct Pipeline::State {
  HostBuffer input, output;
  // TODO(2): what a pipeline over several streams needs: the streams
  // (steps::Stream), and events to fork them from `origin` and join them
  // back (steps::RawEvent, created with cudaEventCreateWithFlags(...,
  // cudaEventDisableTiming)).
};

Pipeline::Pipeline(std::size_t capacity, int streams)
    : state_(std::make_unique<State>()), capacity_(capacity), streams_(streams) {
  if (streams < 1) throw std::invalid_argument("Pipeline: streams must be >= 1");
  state_->input = HostBuffer(capacity);
  state_->output = HostBuffer(capacity);
}

Pipeline::~Pipeline() = default;

float* Pipeline::input() { return state_->input.data(); }
float* Pipeline::output() { return state_->output.data(); }

void Pipeline::run(std::size_t n, int chunks, cudaStream_t origin) {
  if (!has_work("Pipeline::run", n, capacity_, chunks)) return; // checks the arguments; n == 0: nothing to do
  const std::size_t len = chunk_range(n, chunks, 0).count; // the longest chunk
  // TODO(3): one pair of device buffers serves every chunk here, so every
  // chunk must wait for the one before. Give each stream its own pair.
  float* staging = nullptr;
  CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&staging), 2 * len * sizeof(float), origin));
  float* dev_in = staging;
  float* dev_out = staging + len;
  // TODO(4): fork, spread the chunks over the streams, join.
  for (int c = 0; c < chunks; ++c) {
    const ChunkRange r = chunk_range(n, chunks, c);
    if (r.count == 0) break;
    const std::size_t bytes = r.count * sizeof(float);
    CUDA_CHECK(cudaMemcpyAsync(dev_in, state_->input.data() + r.begin, bytes, cudaMemcpyHostToDevice, origin));
    process(dev_in, dev_out, r.count, origin);
    CUDA_CHECK(cudaMemcpyAsync(state_->output.data() + r.begin, dev_out, bytes, cudaMemcpyDeviceToHost, origin));
  }
  CUDA_CHECK(cudaFreeAsync(staging, origin));
}

} // namespace ex08
