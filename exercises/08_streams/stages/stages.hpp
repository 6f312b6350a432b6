/// @file stages.hpp
/// @brief Exercise 08, stretch: the pipeline with one stream per stage, which
///        you complete in stages.cu.
///
/// The same job as the first exercise (host output[i] = 2 input[i] + 1, in
/// chunks), cut the other way: every input copy in one stream, every kernel
/// in a second, every output copy in a third, and one event per dependency
/// between them, so each engine gets its own queue in chunk order.
#pragma once

#include "../pipeline.hpp" // ex08::ChunkRange, ex08::chunk_range, ex08::has_work, ex08::process_reference

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>

namespace ex08::stages {

/// GIVEN (given.cuh): out[i] = 2 in[i] + 1 for i < count (device memory),
/// enqueued in `stream`; count 0 enqueues nothing. Launch the kernels only
/// through this function: the grader recognises its kernel.
void process(const float* in, float* out, std::size_t count, cudaStream_t stream);

/// GIVEN: the address of the kernel process() launches (for the grader).
const void* process_kernel();

/// A pipeline over up to `capacity` floats with one stream per stage.
class StagePipeline {
public:
  /// Allocates what does not change from run to run: the host input and
  /// output (capacity floats each), the three streams, the events.
  explicit StagePipeline(std::size_t capacity);
  ~StagePipeline();
  StagePipeline(const StagePipeline&) = delete;
  StagePipeline& operator=(const StagePipeline&) = delete;

  /// Host memory the caller writes the input into (capacity floats).
  float* input();
  /// Host memory where run() leaves the output (capacity floats).
  float* output();

  /// output()[i] = process(input()[i]) for i < n (n <= capacity), in
  /// `chunks` chunks (ex08::chunk_range): all input copies in one stream,
  /// all kernels in a second, all output copies in a third; kernel c waits
  /// for an event recorded after input copy c, output copy c for one
  /// recorded after kernel c. Enqueues everything after the work already in
  /// `origin` and returns at once; when the caller has waited for `origin`,
  /// the whole output is there. Device memory (n floats in, n floats out) is
  /// allocated and freed in stream order in `origin`.
  void run(std::size_t n, int chunks, cudaStream_t origin);

private:
  struct State; // defined in stages.cu
  std::unique_ptr<State> state_;
  std::size_t capacity_;
};

} // namespace ex08::stages
