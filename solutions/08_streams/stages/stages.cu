// Exercise 08, stretch, solution: one stream per stage. Every input copy in
// `in`, every kernel in `compute`, every output copy in `out`; per chunk, two
// events carry the only real dependencies (copied[c]: kernel c may read;
// computed[c]: output copy c may read). Each engine's queue runs in chunk
// order, and no stage waits for a later stage of an earlier chunk.
#include "given.cuh"
#include "stages.hpp"

#include "steps/error.hpp"
#include "steps/handle.hpp"
#include "steps/memory.hpp"

#include <vector>

namespace ex08::stages {

struct StagePipeline::State {
  steps::PinnedBuffer<float> input, output;
  steps::Stream in{cudaStreamNonBlocking}, compute{cudaStreamNonBlocking}, out{cudaStreamNonBlocking};
  steps::RawEvent fork;                      // recorded in origin: where the three streams start
  steps::RawEvent done[3];                   // one per stream: where origin waits for it
  std::vector<steps::RawEvent> copied, computed; // one per chunk, created as more chunks are asked for
};

namespace {
steps::RawEvent ordering_event() {
  steps::RawEvent e;
  CUDA_CHECK(cudaEventCreateWithFlags(e.out(), cudaEventDisableTiming));
  return e;
}
} // namespace

StagePipeline::StagePipeline(std::size_t capacity) : state_(std::make_unique<State>()), capacity_(capacity) {
  state_->input = steps::PinnedBuffer<float>(capacity);
  state_->output = steps::PinnedBuffer<float>(capacity);
  state_->fork = ordering_event();
  for (auto& e : state_->done) e = ordering_event();
}

StagePipeline::~StagePipeline() = default;

float* StagePipeline::input() { return state_->input.data(); }
float* StagePipeline::output() { return state_->output.data(); }

void StagePipeline::run(std::size_t n, int chunks, cudaStream_t origin) {
  if (!has_work("StagePipeline::run", n, capacity_, chunks)) return; // checks the arguments; n == 0: nothing to do
  State& s = *state_;
  while (s.copied.size() < static_cast<std::size_t>(chunks)) { // creating an event waits for nothing
    s.copied.push_back(ordering_event());
    s.computed.push_back(ordering_event());
  }

  // Device memory for the whole input and output: chunk c lives at its own
  // offset, so no chunk waits for another to free a buffer.
  float* dev = nullptr;
  CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&dev), 2 * n * sizeof(float), origin));
  float* dev_in = dev;
  float* dev_out = dev + n;

  // Fork: the three streams start after what origin holds so far.
  CUDA_CHECK(cudaEventRecord(s.fork, origin));
  for (cudaStream_t st : {s.in.get(), s.compute.get(), s.out.get()}) CUDA_CHECK(cudaStreamWaitEvent(st, s.fork, 0));

  for (int c = 0; c < chunks; ++c) {
    const ChunkRange r = chunk_range(n, chunks, c);
    if (r.count == 0) break;
    const std::size_t i = static_cast<std::size_t>(c);
    const std::size_t bytes = r.count * sizeof(float);
    CUDA_CHECK(cudaMemcpyAsync(dev_in + r.begin, input() + r.begin, bytes, cudaMemcpyHostToDevice, s.in));
    CUDA_CHECK(cudaEventRecord(s.copied[i], s.in));
    CUDA_CHECK(cudaStreamWaitEvent(s.compute, s.copied[i], 0));
    process(dev_in + r.begin, dev_out + r.begin, r.count, s.compute);
    CUDA_CHECK(cudaEventRecord(s.computed[i], s.compute));
    CUDA_CHECK(cudaStreamWaitEvent(s.out, s.computed[i], 0));
    CUDA_CHECK(cudaMemcpyAsync(output() + r.begin, dev_out + r.begin, bytes, cudaMemcpyDeviceToHost, s.out));
  }

  // Join: origin waits for all three streams; then the memory goes back, in origin's order.
  CUDA_CHECK(cudaEventRecord(s.done[0], s.in));
  CUDA_CHECK(cudaStreamWaitEvent(origin, s.done[0], 0));
  CUDA_CHECK(cudaEventRecord(s.done[1], s.compute));
  CUDA_CHECK(cudaStreamWaitEvent(origin, s.done[1], 0));
  CUDA_CHECK(cudaEventRecord(s.done[2], s.out));
  CUDA_CHECK(cudaStreamWaitEvent(origin, s.done[2], 0));
  CUDA_CHECK(cudaFreeAsync(dev, origin));
}

} // namespace ex08::stages
