// Exercise 09: a halo exchange between slices of a 1-D array, on any number
// of GPUs (and several slices per GPU).
//
// Read chapters/09_multi_gpu first (v2_stencil.cuh: pull_halos, and the
// ordering of split()), then exercises/09_multi_gpu/README.md.
// Grade with: ./tutorial grade 09        Hints: ./tutorial hint 09
//
// Fill in every TODO. Keep the signatures of halo.hpp.
#include "given.cuh"
#include "halo.hpp"

#include "steps/error.hpp"
#include "steps/handle.hpp"
#include "steps/run.hpp"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace ex09 {

std::vector<Part> split(std::size_t n, int parts) {
  // TODO: `parts` contiguous parts in order; the first n % parts of them
  // have one cell more than the others. What if n < parts?
  (void)n;
  return std::vector<Part>(static_cast<std::size_t>(parts > 0 ? parts : 0));
}

void exchange_halos(const std::vector<Slice>& slices, std::size_t n, std::size_t halo, Boundary boundary,
                    float outside) {
  // TODO 1: record an event in every slice's stream (its owned cells as of
  // now). Events belong to a device: create and record each one with that
  // slice's device current (steps::DeviceScope).
  //
  // TODO 2: for every slice and both of its ghost ranges, walk the global
  // positions and find where each stretch comes from: a slice that owns it
  // (which may not be the next one when the halo is wider than a slice),
  // the fixed boundary value (fill_async, given.cuh), or, periodic, the
  // cell p mod n. Copy each stretch with cudaMemcpyPeerAsync in the
  // receiving slice's stream, after that stream waits for the source's
  // event (cudaStreamWaitEvent).
  //
  // TODO 3: after a slice's copies, record an event in its stream; every
  // slice it copied from must wait for that event before its own later work
  // can overwrite what was copied.
  (void)slices, (void)n, (void)halo, (void)boundary, (void)outside;
}

} // namespace ex09
