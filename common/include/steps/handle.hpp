/// @file handle.hpp
/// @brief One owning, move-only wrapper for every CUDA-family handle that is
///        created by one call and destroyed by another: graphs, graph execs,
///        memory pools, NCCL communicators...
///
/// `Handle<T, Destroy>` owns a `T` and calls `Destroy(t)` once, when it goes
/// out of scope. A failed destroy is reported on stderr, never thrown (it runs
/// in destructors). Add a handle type with one alias:
/// @code
/// using Graph = steps::Handle<cudaGraph_t, cudaGraphDestroy>;
/// steps::Graph graph;
/// CUDA_CHECK(cudaStreamEndCapture(stream, graph.out())); // the handle receives the result
/// @endcode
#pragma once

#include "steps/error.hpp"

#include <cuda_runtime.h>

#include <cstdio>
#include <utility>

namespace steps {

namespace detail {
/// Reports a failed destroy (CUDA runtime status).
inline void report_destroy(cudaError_t status) noexcept {
  if (status != cudaSuccess) std::fprintf(stderr, "warning: destroying a CUDA handle failed: %s\n", cudaGetErrorName(status));
}
/// Reports a failed destroy (any other library: a non-zero status is a failure).
template <class Status>
void report_destroy(Status status) noexcept {
  if (static_cast<int>(status) != 0)
    std::fprintf(stderr, "warning: destroying a library handle failed (status %d)\n", static_cast<int>(status));
}
} // namespace detail

/// Owning, move-only handle of type `T`, released by `Destroy(T)`.
template <class T, auto Destroy>
class Handle {
public:
  Handle() = default;
  /// Takes ownership of `h` (which may be null).
  explicit Handle(T h) noexcept : h_(h) {}
  ~Handle() { reset(); }
  Handle(Handle&& o) noexcept : h_(std::exchange(o.h_, T{})) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, T{});
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  T get() const noexcept { return h_; }            ///< the raw handle
  operator T() const noexcept { return h_; }       ///< use where a `T` is expected
  explicit operator bool() const noexcept { return h_ != T{}; } ///< owns something
  /// Destroys what is owned (if anything) and returns the address a create
  /// call writes the new handle to.
  T* out() noexcept {
    reset();
    return &h_;
  }
  /// Destroys what is owned now.
  void reset() noexcept {
    if (h_ != T{}) detail::report_destroy(Destroy(h_));
    h_ = T{};
  }
  /// Gives up ownership without destroying.
  T release() noexcept { return std::exchange(h_, T{}); }

private:
  T h_{};
};

/// A CUDA graph (cudaStreamBeginCapture / cudaStreamEndCapture, or built by hand).
using Graph = Handle<cudaGraph_t, cudaGraphDestroy>;
/// An instantiated, launchable CUDA graph (cudaGraphInstantiate).
using GraphExec = Handle<cudaGraphExec_t, cudaGraphExecDestroy>;
/// A stream-ordered memory pool (cudaMemPoolCreate).
using MemPool = Handle<cudaMemPool_t, cudaMemPoolDestroy>;
/// A CUDA event created with flags (steps::Event is the plain timing event).
using RawEvent = Handle<cudaEvent_t, cudaEventDestroy>;

} // namespace steps
