#include "steps/memory.hpp"

#include <cstdio>
#include <limits>

namespace steps {

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 5) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", bytes, units[u]);
  return buf;
}

std::size_t checked_bytes(std::size_t count, std::size_t size) {
  if (size != 0 && count > std::numeric_limits<std::size_t>::max() / size)
    throw OutOfMemory(std::to_string(count) + " elements of " + std::to_string(size) +
                      " bytes does not fit in memory (the byte count overflows)");
  return count * size;
}

void* device_allocate(std::size_t bytes) {
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, bytes);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    std::size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    throw OutOfMemory(format_bytes(static_cast<double>(bytes)) +
                      " of device memory does not fit: the GPU has " +
                      format_bytes(static_cast<double>(free_b)) + " free of " +
                      format_bytes(static_cast<double>(total_b)) + " (use a smaller --size)");
  }
  CUDA_CHECK(err);
  return p;
}

void* pinned_allocate(std::size_t bytes) {
  void* p = nullptr;
  const cudaError_t err = cudaMallocHost(&p, bytes);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    throw OutOfMemory(format_bytes(static_cast<double>(bytes)) +
                      " of pinned host memory does not fit (use a smaller --size)");
  }
  CUDA_CHECK(err);
  return p;
}

void device_release(void* p) noexcept { CUDA_CHECK_NOTHROW(cudaFree(p)); }
void pinned_release(void* p) noexcept { CUDA_CHECK_NOTHROW(cudaFreeHost(p)); }

Stream::Stream(unsigned int flags) { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, flags)); }
Stream::~Stream() {
  if (s_) CUDA_CHECK_NOTHROW(cudaStreamDestroy(s_));
}
Stream& Stream::operator=(Stream&& o) noexcept {
  if (this != &o) {
    if (s_) CUDA_CHECK_NOTHROW(cudaStreamDestroy(s_));
    s_ = std::exchange(o.s_, nullptr);
  }
  return *this;
}
void Stream::synchronize() const { CUDA_CHECK(cudaStreamSynchronize(s_)); }

Event::Event() { CUDA_CHECK(cudaEventCreate(&e_)); }
Event::~Event() {
  if (e_) CUDA_CHECK_NOTHROW(cudaEventDestroy(e_));
}
Event& Event::operator=(Event&& o) noexcept {
  if (this != &o) {
    if (e_) CUDA_CHECK_NOTHROW(cudaEventDestroy(e_));
    e_ = std::exchange(o.e_, nullptr);
  }
  return *this;
}
void Event::record(cudaStream_t stream) { CUDA_CHECK(cudaEventRecord(e_, stream)); }
void Event::synchronize() const { CUDA_CHECK(cudaEventSynchronize(e_)); }
float Event::elapsed_ms(const Event& start, const Event& stop) {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start.e_, stop.e_));
  return ms;
}

} // namespace steps
