/// @file pipeline.hpp
/// @brief Exercise 08: the pipeline you complete in pipeline.cu.
///
/// host output[i] = process(host input[i]) for i < n, in chunks: each chunk
/// is copied to the GPU, processed by a given kernel and copied back. Your
/// job is to run the chunks in several streams, with exactly the waits the
/// data needs and no more, so that copies in both directions and kernels of
/// different chunks overlap.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

namespace ex08 {

/// Elements [begin, begin + count) of chunk c (0 <= c < chunks) of n
/// elements: chunks of len = ceil(n / chunks), the last one shorter; when n
/// < chunks, the chunks from n on are empty (count 0: nothing to do).
struct ChunkRange {
  std::size_t begin = 0; ///< first element
  std::size_t count = 0; ///< elements (0: an empty chunk)
};

/// The chunk split the grader checks against (use it, or compute the same).
inline ChunkRange chunk_range(std::size_t n, int chunks, int c) {
  const std::size_t k = static_cast<std::size_t>(chunks);
  const std::size_t len = (n + k - 1) / k;
  const std::size_t begin = std::min(n, len * static_cast<std::size_t>(c));
  return {begin, std::min(len, n - begin)};
}

/// GIVEN: run()'s argument checks, for `who` ("Pipeline::run"): throws
/// std::invalid_argument when n > capacity or chunks < 1; returns whether
/// there is anything to do (n > 0).
inline bool has_work(const char* who, std::size_t n, std::size_t capacity, int chunks) {
  if (n > capacity) throw std::invalid_argument(std::string(who) + ": n is larger than the capacity");
  if (chunks < 1) throw std::invalid_argument(std::string(who) + ": chunks must be >= 1");
  return n > 0;
}

/// GIVEN (given.cuh): out[i] = 2 in[i] + 1 for i < count (device memory),
/// enqueued in `stream`; count 0 enqueues nothing. Launch the pipeline's
/// kernels only through this function: the grader recognises its kernel.
void process(const float* in, float* out, std::size_t count, cudaStream_t stream);

/// GIVEN: the address of the kernel process() launches (for the grader).
const void* process_kernel();

/// The CPU version of one element of process().
inline float process_reference(float x) { return std::fmaf(x, 2.0f, 1.0f); }

/// A pipeline over up to `capacity` floats in `streams` streams.
class Pipeline {
public:
  /// Allocates what does not change from run to run: the host input and
  /// output (capacity floats each), the streams, the events.
  Pipeline(std::size_t capacity, int streams);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  /// Host memory the caller writes the input into (capacity floats).
  float* input();
  /// Host memory where run() leaves the output (capacity floats).
  float* output();

  /// output()[i] = process(input()[i]) for i < n (n <= capacity), in
  /// `chunks` chunks (chunk_range), each chunk one host-to-device copy, one
  /// process() and one device-to-host copy.
  ///
  /// Enqueues everything after the work already in `origin` and returns at
  /// once, without waiting for the GPU: the caller waits for `origin`, and
  /// that must be enough for the whole output to be there (every stream you
  /// use joins back into `origin`). Device memory for the chunks is
  /// allocated and freed in stream order (cudaMallocAsync / cudaFreeAsync in
  /// `origin`), so nothing in run() waits for the GPU.
  void run(std::size_t n, int chunks, cudaStream_t origin);

private:
  struct State; // defined in pipeline.cu: whatever your pipeline keeps
  std::unique_ptr<State> state_;
  std::size_t capacity_;
  int streams_;
};

} // namespace ex08
