/// @file memory.hpp
/// @brief RAII owners for device memory, pinned host memory, streams and
///        events: memory is freed on every path out, exceptions included.
///
/// Raw cudaMalloc/cudaFree appear only in the chapter 01 lesson, which
/// teaches them; everything else uses these types.
#pragma once

#include "steps/error.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace steps {

/// Allocates `bytes` of device memory or throws OutOfMemory with a message
/// that says how much was asked for and how much the GPU has free.
void* device_allocate(std::size_t bytes);

/// Allocates `bytes` of page-locked host memory or throws OutOfMemory.
void* pinned_allocate(std::size_t bytes);

/// `count * size` in bytes, or throws OutOfMemory if that overflows.
std::size_t checked_bytes(std::size_t count, std::size_t size);

/// Formats a byte count for people: "1.50 GiB".
std::string format_bytes(double bytes);

/// Frees device memory from device_allocate(); never throws (warns on failure).
void device_release(void* p) noexcept;

/// Frees pinned host memory from pinned_allocate(); never throws.
void pinned_release(void* p) noexcept;

namespace detail {

/// Owning, move-only array of `T` whose memory comes from `Allocate` and goes
/// back through `Release`: the part DeviceBuffer and PinnedBuffer share.
template <class T, void* (*Allocate)(std::size_t), void (*Release)(void*) noexcept>
class OwnedArray {
public:
  OwnedArray() = default;
  /// Allocates `count` elements (uninitialised).
  explicit OwnedArray(std::size_t count)
      : data_(static_cast<T*>(count ? Allocate(checked_bytes(count, sizeof(T))) : nullptr)), count_(count) {}
  ~OwnedArray() { reset(); }
  OwnedArray(OwnedArray&& o) noexcept : data_(std::exchange(o.data_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  OwnedArray& operator=(OwnedArray&& o) noexcept {
    if (this != &o) {
      reset();
      data_ = std::exchange(o.data_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  OwnedArray(const OwnedArray&) = delete;
  OwnedArray& operator=(const OwnedArray&) = delete;

  T* data() noexcept { return data_; }                               ///< the pointer
  const T* data() const noexcept { return data_; }                   ///< the pointer
  std::size_t size() const noexcept { return count_; }               ///< elements
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }  ///< bytes

private:
  void reset() noexcept {
    if (data_) Release(data_);
    data_ = nullptr;
    count_ = 0;
  }
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

} // namespace detail

/// Owning, move-only array of `T` in device memory.
template <class T>
class DeviceBuffer : public detail::OwnedArray<T, device_allocate, device_release> {
  using Base = detail::OwnedArray<T, device_allocate, device_release>;

public:
  using Base::Base;
  using Base::bytes;
  using Base::data;
  using Base::size;

  /// Copies `size()` elements from host memory; returns when they are on the GPU.
  void copy_from_host(const T* host) {
    CUDA_CHECK(cudaMemcpy(data(), host, bytes(), cudaMemcpyHostToDevice));
    // From pageable memory, cudaMemcpy may return before the data has reached
    // the GPU; work in other streams must not start before it has.
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  /// Copies a host vector of exactly `size()` elements.
  void copy_from_host(const std::vector<T>& host) {
    if (host.size() != size()) throw std::invalid_argument("DeviceBuffer::copy_from_host: size mismatch");
    copy_from_host(host.data());
  }
  /// Copies `size()` elements to host memory (synchronous).
  void copy_to_host(T* host) const { CUDA_CHECK(cudaMemcpy(host, data(), bytes(), cudaMemcpyDeviceToHost)); }
  /// Returns the contents as a host vector (synchronous).
  std::vector<T> to_host() const {
    std::vector<T> h(size());
    copy_to_host(h.data());
    return h;
  }
  /// Sets every byte to `value`; 0xFF turns floats into NaN, which is how
  /// outputs are poisoned before verification.
  void fill_bytes(int value, cudaStream_t stream = nullptr) {
    CUDA_CHECK(cudaMemsetAsync(data(), value, bytes(), stream));
  }
};

/// Owning, move-only array of `T` in page-locked (pinned) host memory, which
/// the GPU can copy at full speed and asynchronously.
template <class T>
class PinnedBuffer : public detail::OwnedArray<T, pinned_allocate, pinned_release> {
  using Base = detail::OwnedArray<T, pinned_allocate, pinned_release>;

public:
  using Base::Base;
  using Base::data;
  using Base::size;
  T& operator[](std::size_t i) noexcept { return data()[i]; }             ///< element access
  const T& operator[](std::size_t i) const noexcept { return data()[i]; } ///< element access
};

namespace detail {
/// Throws std::out_of_range unless [offset, offset + count) lies inside `size`.
inline void check_range(const char* what, std::size_t offset, std::size_t count, std::size_t size) {
  if (offset > size || count > size - offset)
    throw std::out_of_range(std::string(what) + ": elements [" + std::to_string(offset) + ", " +
                            std::to_string(offset) + " + " + std::to_string(count) + ") are outside a buffer of " +
                            std::to_string(size));
}
} // namespace detail

/// Enqueues a copy of `count` elements from pinned host memory (from element
/// `src_offset`) to device memory (from element `dst_offset`) in `stream`,
/// and returns at once: nothing is synchronised, so copies in other streams
/// and kernels can overlap it (chapter 08). Throws std::out_of_range for a
/// range outside either buffer.
template <class T>
void copy_async(DeviceBuffer<T>& dst, std::size_t dst_offset, const PinnedBuffer<T>& src, std::size_t src_offset,
                std::size_t count, cudaStream_t stream) {
  detail::check_range("copy_async (device destination)", dst_offset, count, dst.size());
  detail::check_range("copy_async (pinned source)", src_offset, count, src.size());
  CUDA_CHECK(cudaMemcpyAsync(dst.data() + dst_offset, src.data() + src_offset, count * sizeof(T),
                             cudaMemcpyHostToDevice, stream));
}

/// Enqueues a device-to-pinned-host copy (the mirror of the one above).
template <class T>
void copy_async(PinnedBuffer<T>& dst, std::size_t dst_offset, const DeviceBuffer<T>& src, std::size_t src_offset,
                std::size_t count, cudaStream_t stream) {
  detail::check_range("copy_async (pinned destination)", dst_offset, count, dst.size());
  detail::check_range("copy_async (device source)", src_offset, count, src.size());
  CUDA_CHECK(cudaMemcpyAsync(dst.data() + dst_offset, src.data() + src_offset, count * sizeof(T),
                             cudaMemcpyDeviceToHost, stream));
}

/// Whole-buffer asynchronous copy, pinned host to device (sizes must match).
template <class T>
void copy_async(DeviceBuffer<T>& dst, const PinnedBuffer<T>& src, cudaStream_t stream) {
  if (dst.size() != src.size()) throw std::invalid_argument("copy_async: buffer sizes differ");
  copy_async(dst, 0, src, 0, src.size(), stream);
}

/// Whole-buffer asynchronous copy, device to pinned host (sizes must match).
template <class T>
void copy_async(PinnedBuffer<T>& dst, const DeviceBuffer<T>& src, cudaStream_t stream) {
  if (dst.size() != src.size()) throw std::invalid_argument("copy_async: buffer sizes differ");
  copy_async(dst, 0, src, 0, src.size(), stream);
}

/// Owning, move-only CUDA stream.
///
/// By default the stream is "blocking": it waits for work in the legacy
/// default stream (stream 0), so a plain cudaMemcpy or cudaMemset issued
/// before a launch in this stream is ordered before it. (A host-to-device
/// cudaMemcpy from pageable memory may return before its data has landed.)
/// Pass cudaStreamNonBlocking to opt out (chapter 08).
class Stream {
public:
  explicit Stream(unsigned int flags = cudaStreamDefault);
  ~Stream();
  Stream(Stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const noexcept { return s_; }  ///< the raw handle
  operator cudaStream_t() const noexcept { return s_; } ///< use where a cudaStream_t is expected
  void synchronize() const;                          ///< waits for all work in the stream

private:
  cudaStream_t s_ = nullptr;
};

/// Owning, move-only CUDA event, for timing and cross-stream ordering.
class Event {
public:
  Event();
  ~Event();
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Event& operator=(Event&& o) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const noexcept { return e_; }   ///< the raw handle
  operator cudaEvent_t() const noexcept { return e_; } ///< use where a cudaEvent_t is expected
  void record(cudaStream_t stream = nullptr);        ///< records the event in `stream`
  void synchronize() const;                           ///< waits until the event has happened

  /// Milliseconds between two recorded events (both must have completed).
  static float elapsed_ms(const Event& start, const Event& stop);

private:
  cudaEvent_t e_ = nullptr;
};

} // namespace steps
