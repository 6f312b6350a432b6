/// @file guarded.hpp
/// @brief A device array with guard zones on both sides, to catch writes
///        outside it.
///
/// A missing bounds check writes a few elements past the end of an array, or
/// reads a few past the end of an input.
/// Device memory is handed out in large pages, so such a write rarely
/// crashes: it silently corrupts whatever lies next to the array. A
/// GuardedBuffer puts known bytes before and after the array (the view you
/// pass to a kernel) and check_guards() reports any that changed. The view
/// can also start `offset` elements into the allocation, to test code with
/// misaligned pointers.
///
/// For floating-point types the guard zones hold a NaN with a recognisable
/// payload (guard_value()): a stray READ past the end of an input then turns
/// the result into NaN, which no comparison accepts, instead of adding a
/// small finite number that a tolerance might forgive. For integer types
/// they hold 0xA5 bytes.
///
/// Under compute-sanitizer (the environment variable STEPS_SANITIZE is set,
/// as ./tutorial grade and the sanitize tests do), the default guard is 0:
/// the view ends exactly where its allocation ends, so that memcheck reports
/// every read or write past the end, also those that change no result.
#pragma once

#include "steps/compare.hpp"
#include "steps/memory.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace steps {

/// Device array of `size()` elements between two guard zones.
template <class T>
class GuardedBuffer {
public:
  /// The value every guard element holds: for float and double a quiet NaN
  /// with payload 0xA5A5.. (not the NaN a kernel computes, 0x7FFFFFFF), for
  /// other types the bytes 0xA5.
  static T guard_value() {
    T v;
    if constexpr (std::is_same_v<T, float>) {
      const std::uint32_t bits = 0x7FE5A5A5u;
      std::memcpy(&v, &bits, sizeof v);
    } else if constexpr (std::is_same_v<T, double>) {
      const std::uint64_t bits = 0x7FFCA5A5A5A5A5A5ull;
      std::memcpy(&v, &bits, sizeof v);
    } else {
      std::memset(&v, 0xA5, sizeof v);
    }
    return v;
  }

  /// @param count  elements in the view
  /// @param offset extra elements between the front guard and the view (to
  ///               misalign the view: offset 1 of a float breaks 16-byte alignment)
  /// @param guard  elements in each guard zone (default: default_guard())
  explicit GuardedBuffer(std::size_t count, std::size_t offset = 0, std::size_t guard = default_guard())
      : all_(guard + offset + count + guard), front_(guard + offset), count_(count), guard_(guard) {
    // The view starts poisoned (NaN for floats); the guard zones get guard_value().
    if (count_) CUDA_CHECK(cudaMemset(data(), 0xFF, count_ * sizeof(T)));
    const std::vector<T> fill(std::max(front_, guard_), guard_value());
    if (front_) CUDA_CHECK(cudaMemcpy(all_.data(), fill.data(), front_ * sizeof(T), cudaMemcpyHostToDevice));
    if (guard_)
      CUDA_CHECK(cudaMemcpy(all_.data() + front_ + count_, fill.data(), guard_ * sizeof(T), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  /// A 1024-thread block's worth of elements; 0 under compute-sanitizer
  /// (STEPS_SANITIZE set), where memcheck sees every access past the end.
  static std::size_t default_guard() { return std::getenv("STEPS_SANITIZE") ? 0 : 1024; }

  T* data() noexcept { return all_.data() + front_; }             ///< the view
  const T* data() const noexcept { return all_.data() + front_; } ///< the view
  std::size_t size() const noexcept { return count_; }            ///< elements in the view

  /// Copies `size()` elements from the host into the view; guards untouched.
  void upload(const T* host) {
    CUDA_CHECK(cudaMemcpy(data(), host, count_ * sizeof(T), cudaMemcpyHostToDevice));
    // From pageable memory, cudaMemcpy may return before the data has reached
    // the GPU; work in other streams must not start before it has.
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  /// Copies a device array of `size()` elements into the view.
  void copy_from_device(const T* device, cudaStream_t stream = nullptr) {
    CUDA_CHECK(cudaMemcpyAsync(data(), device, count_ * sizeof(T), cudaMemcpyDeviceToDevice, stream));
  }
  /// Sets every byte of the view to `value` (0xFF: NaN for floats, so that an
  /// element no thread wrote stands out).
  void poison(int value = 0xFF, cudaStream_t stream = nullptr) {
    CUDA_CHECK(cudaMemsetAsync(data(), value, count_ * sizeof(T), stream));
  }
  /// The view's contents.
  std::vector<T> download() const {
    std::vector<T> h;
    download(h);
    return h;
  }
  /// The view's contents, into `out` (resized; reusing its memory saves the
  /// page faults of a fresh multi-gigabyte vector on every check).
  void download(std::vector<T>& out) const {
    out.resize(count_);
    if (count_) CUDA_CHECK(cudaMemcpy(out.data(), data(), count_ * sizeof(T), cudaMemcpyDeviceToHost));
  }

  /// Checks both guard zones. On a change, the result fails with
  /// out_of_bounds set and first_bad = the signed distance from the view's
  /// start (negative: before the array; >= size(): past its end).
  Comparison check_guards() const {
    const std::size_t front_elems = front_, back_elems = guard_;
    std::vector<T> front(front_elems), back(back_elems);
    CUDA_CHECK(cudaMemcpy(front.data(), all_.data(), front_elems * sizeof(T), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(back.data(), data() + count_, back_elems * sizeof(T), cudaMemcpyDeviceToHost));
    Comparison c;
    c.count = count_;
    const T guard = guard_value();
    auto changed = [&guard](const T& v) { return std::memcmp(&v, &guard, sizeof(T)) != 0; };
    // Report the write closest to the array on each side, back first.
    for (std::size_t i = 0; i < back_elems; ++i)
      if (changed(back[i])) note(c, static_cast<std::int64_t>(count_ + i), back[i]);
    for (std::size_t i = front_elems; i-- > 0;)
      if (changed(front[i])) note(c, -static_cast<std::int64_t>(front_elems - i), front[i]);
    return c;
  }

private:
  static void note(Comparison& c, std::int64_t where, const T& v) {
    if (c.bad_count++ == 0) {
      c.ok = false;
      c.out_of_bounds = true;
      c.outside_index = where;
      // A struct (a result record) has no one value to show.
      if constexpr (std::is_arithmetic_v<T>) c.got_at_first_bad = static_cast<double>(v);
      else c.got_at_first_bad = std::numeric_limits<double>::quiet_NaN();
    }
  }
  DeviceBuffer<T> all_;
  std::size_t front_, count_, guard_;
};

} // namespace steps
