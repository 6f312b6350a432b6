/// @file halo.hpp
/// @brief Exercise 09: the functions you implement in halo.cu.
///
/// A 1-D array of n floats (the "global" array) is cut into contiguous
/// slices, one per GPU (or several per GPU: a slice is a (device, pointer,
/// stream) triple, so one GPU can host several). Each slice stores its own
/// cells between two ghost zones of `halo` cells:
///
///     cells: [ halo ghosts | count owned cells | halo ghosts ]
///              global begin-halo .. begin-1      begin+count .. begin+count+halo-1
///
/// Before a stencil step, every ghost cell must hold the value of the global
/// cell at its position, wherever that cell lives.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

namespace ex09 {

/// Which global cells a slice owns: [begin, begin + count).
struct Part {
  std::size_t begin = 0;
  std::size_t count = 0;
};

/// Cuts n cells into `parts` contiguous parts, in order, as evenly as
/// possible: every part has n / parts or n / parts + 1 cells, the first
/// n % parts parts have the extra one. Parts may be empty (n < parts; all
/// of them, at 0, for n = 0). parts >= 1.
std::vector<Part> split(std::size_t n, int parts);

/// What lies outside [0, n).
enum class Boundary {
  fixed,    ///< a ghost cell outside [0, n) holds `outside` (the fixed boundary value)
  periodic, ///< the array wraps around: position p holds cell p mod n (p may be < 0 or >= n,
            ///< by more than n when the halo is wider than the array)
};

/// One slice of the global array.
struct Slice {
  int device = 0;              ///< the GPU (CUDA ordinal) that holds `cells` and owns `stream`
  cudaStream_t stream = nullptr; ///< the slice's stream, on `device`
  float* cells = nullptr;      ///< halo + part.count + halo floats on `device`
  Part part;                   ///< the global cells it owns
};

/// Fills every slice's 2 x halo ghost cells: the ghost at global position p
/// (p in [begin - halo, begin) on the left, [begin + count, begin + count +
/// halo) on the right; for an empty slice both ranges are computed the same
/// way) receives:
///   - the owned value of global cell p, from whichever slice owns it, when
///     0 <= p < n;
///   - else, Boundary::fixed: `outside`; Boundary::periodic: cell p mod n.
///
/// The slices are the parts of split(n, slices.size()), in order. Owned
/// cells are never changed. The function is asynchronous: it only enqueues
/// work, and it must respect each slice's stream:
///   1. a slice's owned cells are read only after the work already enqueued
///      in its stream (they may still be being written when you are called);
///   2. work enqueued in a slice's stream after the call sees its ghost
///      cells filled;
///   3. work enqueued in a slice's stream after the call may overwrite its
///      owned cells at once: that must not change what the other slices'
///      ghosts receive.
/// n >= 1 (an empty array has nothing to exchange; the grader never asks).
/// Reports failed CUDA calls by throwing (CUDA_CHECK).
void exchange_halos(const std::vector<Slice>& slices, std::size_t n, std::size_t halo, Boundary boundary,
                    float outside);

} // namespace ex09
