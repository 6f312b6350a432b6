// The grader harness's GPU side: the gate that holds a stream back, the busy
// stream every graded call runs on, and the scans that check huge arrays on
// the GPU (grade_support.hpp documents them).
#include "steps/grade_support.hpp"

#include "steps/error.hpp"
#include "steps/launch.cuh"
#include "steps/random.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace steps::grade {
namespace {

// --- Kernels ---------------------------------------------------------------

__device__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Waits until the host writes a generation >= `generation` into `released`
/// (pinned, mapped host memory), or `timeout_ns` after it started.
__global__ void gate_kernel(const volatile unsigned long long* released, unsigned long long generation,
                            unsigned long long timeout_ns) {
  const unsigned long long start = now_ns();
  while (*released < generation) {
    if (now_ns() - start > timeout_ns) return;
    __nanosleep(1000);
  }
}

__global__ void xor_kernel(std::uint32_t* words, std::size_t count, std::uint32_t mask) {
  for (std::size_t i = steps::global_index(); i < count; i += steps::grid_size()) words[i] ^= mask;
}

/// result = the smallest row * width + column whose word matches.
__global__ void find_word_kernel(const std::uint32_t* p, std::size_t width, std::size_t rows, std::size_t pitch,
                                 std::uint32_t bits, bool equal, unsigned long long* result) {
  // Indices grow along each thread's loop: once one at or past the best
  // match so far comes up, the rest of the loop cannot do better (and a
  // buffer where every word matches costs one atomic per thread, not per word).
  const volatile unsigned long long* best = result;
  if (rows == 1) {
    for (std::size_t i = steps::global_index(); i < width && i < *best; i += steps::grid_size())
      if ((p[i] == bits) == equal) atomicMin(result, static_cast<unsigned long long>(i));
    return;
  }
  for (std::size_t r = blockIdx.x; r < rows && r * width < *best; r += gridDim.x)
    for (std::size_t c = threadIdx.x; c < width; c += blockDim.x)
      if ((p[r * pitch + c] == bits) == equal) {
        atomicMin(result, static_cast<unsigned long long>(r * width + c));
        break;
      }
}

__global__ void find_difference_kernel(const std::uint32_t* a, const std::uint32_t* b, std::size_t count,
                                       unsigned long long* result) {
  const volatile unsigned long long* best = result;
  for (std::size_t i = steps::global_index(); i < count && i < *best; i += steps::grid_size())
    if (a[i] != b[i]) atomicMin(result, static_cast<unsigned long long>(i));
}

// --- The gate's flag: one word of pinned host memory the GPU can read ------

volatile unsigned long long* released_word() {
  static volatile unsigned long long* word = [] {
    void* p = nullptr;
    CUDA_CHECK(cudaHostAlloc(&p, sizeof(unsigned long long), cudaHostAllocMapped | cudaHostAllocPortable));
    std::memset(p, 0, sizeof(unsigned long long));
    return static_cast<volatile unsigned long long*>(p);
  }();
  return word;
}

std::atomic<std::uint64_t> g_generation{0};

/// XOR mask of a scrambled input: flips every exponent bit of a float.
constexpr std::uint32_t kScramble = 0x7F800000u;

/// The mask of the i-th restored region: kScramble, and from the second
/// region on also some sign and mantissa bits, different for each. With one
/// mask for all, a kernel that only moves words (a transpose, a copy) from a
/// scrambled input into a scrambled output, too early, would have its output
/// unscrambled by the restore and look right.
std::uint32_t scramble_mask(std::size_t i) {
  return i == 0 ? kScramble : kScramble ^ ((static_cast<std::uint32_t>(steps::splitmix64(i)) & 0x007FFFFFu) | 0x80000000u);
}

unsigned int blocks_for(std::size_t items) {
  return static_cast<unsigned int>(std::max<std::size_t>(1, std::min<std::size_t>((items + 255) / 256, 8192)));
}

std::size_t run_find(unsigned long long* result_device) {
  unsigned long long result = 0;
  CUDA_CHECK(cudaMemcpy(&result, result_device, sizeof result, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(result_device));
  return static_cast<std::size_t>(result);
}

unsigned long long* new_result() {
  unsigned long long* r = nullptr;
  CUDA_CHECK(cudaMalloc(&r, sizeof *r));
  CUDA_CHECK(cudaMemset(r, 0xFF, sizeof *r));
  return r;
}

} // namespace

// --- Gate ------------------------------------------------------------------

Gate::Gate() : generation_(++g_generation) {
  (void)released_word();
  // Load the kernel now: a kernel loaded on first use may need the GPU idle,
  // which a held gate would delay.
  cudaFuncAttributes attributes{};
  CUDA_CHECK(cudaFuncGetAttributes(&attributes, gate_kernel));
}

Gate::~Gate() { release(); }

void Gate::hold(cudaStream_t stream) {
  if (released_) throw std::logic_error("grade::Gate: hold() after release()");
  unsigned long long* device = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device),
                                      const_cast<unsigned long long*>(released_word()), 0));
  const auto timeout_ns = static_cast<unsigned long long>(kGateTimeoutMs * 1e6);
  gate_kernel<<<1, 1, 0, stream>>>(device, generation_, timeout_ns);
  CUDA_CHECK_LAUNCH();
}

void Gate::release() {
  if (released_) return;
  released_ = true;
  volatile unsigned long long* word = released_word();
  if (*word < generation_) *word = generation_;
}

// --- BusyStream ------------------------------------------------------------

BusyStream::BusyStream() {
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  cudaFuncAttributes attributes{};
  CUDA_CHECK(cudaFuncGetAttributes(&attributes, xor_kernel));
}

BusyStream::~BusyStream() {
  gate_.release();
  if (stream_) {
    (void)cudaStreamSynchronize(stream_);
    (void)cudaStreamDestroy(stream_);
  }
}

void BusyStream::restores(void* data, std::size_t bytes) {
  if (started_) throw std::logic_error("grade::BusyStream: restores() after start()");
  if (bytes == 0 || under_sanitizer()) return;
  // Whole 32-bit words are scrambled; a tail shorter than a word (the last
  // element of an odd-length array of 16-bit values) stays as it is.
  if (reinterpret_cast<std::uintptr_t>(data) % 4 != 0)
    throw std::logic_error("grade::BusyStream::restores: the data must start 4-byte aligned");
  if (bytes < 4) return;
  cudaPointerAttributes a{};
  CUDA_CHECK(cudaPointerGetAttributes(&a, data));
  const std::size_t words = bytes / 4;
  std::size_t restored = 0;
  for (const Region& r : regions_) restored += r.byte < 0;
  const std::uint32_t mask = scramble_mask(restored);
  if (a.type == cudaMemoryTypeHost) {
    if (!a.devicePointer) return; // pinned, but not mapped: the GPU cannot restore it, so it stays as it is
    auto* w = static_cast<std::uint32_t*>(data);
    for (std::size_t i = 0; i < words; ++i) w[i] ^= mask;
    regions_.push_back({a.devicePointer, bytes, -1, mask});
    return;
  }
  if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged)
    throw std::logic_error("grade::BusyStream::restores: neither device nor pinned host memory");
  xor_kernel<<<blocks_for(words), 256, 0, stream_>>>(static_cast<std::uint32_t*>(data), words, mask);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  regions_.push_back({data, bytes, -1, mask});
}

void BusyStream::fills(void* data, std::size_t bytes, int byte) {
  if (started_) throw std::logic_error("grade::BusyStream: fills() after start()");
  if (bytes) regions_.push_back({data, bytes, byte, 0});
}

void BusyStream::start() {
  if (started_) throw std::logic_error("grade::BusyStream: start() twice");
  started_ = true;
  if (!under_sanitizer()) gate_.hold(stream_);
  for (const Region& r : regions_) {
    if (r.byte >= 0) {
      CUDA_CHECK(cudaMemsetAsync(r.data, r.byte, r.bytes, stream_));
    } else {
      const std::size_t words = r.bytes / 4;
      xor_kernel<<<blocks_for(words), 256, 0, stream_>>>(static_cast<std::uint32_t*>(r.data), words, r.mask);
      CUDA_CHECK_LAUNCH();
    }
  }
}

void BusyStream::finish() {
  gate_.release();
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

// --- Scans -----------------------------------------------------------------

std::size_t find_word(const void* device, std::size_t width, std::size_t rows, std::size_t pitch, std::uint32_t bits,
                      bool equal) {
  if (width == 0 || rows == 0) return 0;
  unsigned long long* r = new_result();
  const unsigned int blocks = rows == 1 ? blocks_for(width) : static_cast<unsigned int>(std::min<std::size_t>(rows, 65535));
  find_word_kernel<<<blocks, 256>>>(static_cast<const std::uint32_t*>(device), width, rows, pitch, bits, equal, r);
  CUDA_CHECK_LAUNCH();
  const std::size_t found = run_find(r);
  return found == std::numeric_limits<std::size_t>::max() ? width * rows : found;
}

std::size_t find_difference(const void* a, const void* b, std::size_t words) {
  if (words == 0) return 0;
  unsigned long long* r = new_result();
  find_difference_kernel<<<blocks_for(words), 256>>>(static_cast<const std::uint32_t*>(a),
                                                     static_cast<const std::uint32_t*>(b), words, r);
  CUDA_CHECK_LAUNCH();
  const std::size_t found = run_find(r);
  return found == std::numeric_limits<std::size_t>::max() ? words : found;
}

} // namespace steps::grade
