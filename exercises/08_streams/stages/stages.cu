// Exercise 08, stretch: give each stage its own stream. This version is
// correct but serial: every operation of every chunk goes into `origin`, so
// chunk c + 1's input copy waits for chunk c's output copy. See README.md
// (task and hints); the grader is grade_stages.cpp.
#include "given.cuh"
#include "stages.hpp"

#include "steps/error.hpp"
#include "steps/handle.hpp"
#include "steps/memory.hpp"

#include <vector>

namespace ex08::stages {

struct StagePipeline::State {
  steps::PinnedBuffer<float> input, output;
  // TODO(1): three streams (steps::Stream, cudaStreamNonBlocking): one for
  // the input copies, one for the kernels, one for the output copies; an
  // event to fork them from `origin` and one per stream to join them back;
  // and two events per chunk (copied, computed). Create ordering-only events
  // with cudaEventCreateWithFlags(..., cudaEventDisableTiming).
};

StagePipeline::StagePipeline(std::size_t capacity) : state_(std::make_unique<State>()), capacity_(capacity) {
  state_->input = steps::PinnedBuffer<float>(capacity);
  state_->output = steps::PinnedBuffer<float>(capacity);
}

StagePipeline::~StagePipeline() = default;

float* StagePipeline::input() { return state_->input.data(); }
float* StagePipeline::output() { return state_->output.data(); }

void StagePipeline::run(std::size_t n, int chunks, cudaStream_t origin) {
  if (!has_work("StagePipeline::run", n, capacity_, chunks)) return; // checks the arguments; n == 0: nothing to do

  float* dev = nullptr;
  CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&dev), 2 * n * sizeof(float), origin));
  float* dev_in = dev;
  float* dev_out = dev + n;

  // TODO(2): fork: record an event in origin; each of your three streams waits for it.

  for (int c = 0; c < chunks; ++c) {
    const ChunkRange r = chunk_range(n, chunks, c);
    if (r.count == 0) break;
    const std::size_t bytes = r.count * sizeof(float);
    // TODO(3): each operation into its stage's stream, with the events that
    // carry chunk c's data from one stage to the next.
    CUDA_CHECK(cudaMemcpyAsync(dev_in + r.begin, input() + r.begin, bytes, cudaMemcpyHostToDevice, origin));
    process(dev_in + r.begin, dev_out + r.begin, r.count, origin);
    CUDA_CHECK(cudaMemcpyAsync(output() + r.begin, dev_out + r.begin, bytes, cudaMemcpyDeviceToHost, origin));
  }

  // TODO(4): join: origin waits for an event recorded at the end of each stream, before the free.
  CUDA_CHECK(cudaFreeAsync(dev, origin));
}

} // namespace ex08::stages
