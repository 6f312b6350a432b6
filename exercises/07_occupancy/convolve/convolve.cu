// Exercise 07, GPU part: a 1-D convolution whose weights live in constant
// memory and whose input tile lives in more than 48 KiB of shared memory.
//
// Read chapters/07_occupancy first (constant.cuh: broadcast; the rows with a
// 227 KiB shared-memory pad: the opt-in), then
// exercises/07_occupancy/convolve/README.md.
// Grade with: ./tutorial grade 07 convolve     Hints: ./tutorial hint 07 convolve
//
// Fill in every TODO. Keep the signatures of convolve.hpp.
#include "convolve.hpp"

#include "steps/error.hpp"

#include <stdexcept>

namespace ex07 {

// TODO: the filter's weights in constant memory: room for the widest filter
// (2 * kMaxRadius + 1 floats).

// TODO: the kernel. Block b computes the outputs [b * kTile, (b + 1) * kTile)
// (fewer in the last block). Its threads first stage the inputs those outputs
// need, x[b * kTile - r] .. x[(b + 1) * kTile + r - 1], in dynamic shared
// memory (0 where the index is outside [0, n): never read x there), wait
// until the whole tile is staged, then each thread computes its outputs from
// shared memory and the constant weights.
__global__ void convolve_kernel(const float* x, float* y, int n, int radius) {
  // TODO
  (void)x, (void)y, (void)n, (void)radius;
}

void set_weights(const float* w, int radius, cudaStream_t stream) {
  if (radius < 0 || radius > kMaxRadius) throw std::invalid_argument("set_weights: radius out of range");
  // TODO: copy the 2 r + 1 weights into your constant array, in `stream`
  // (cudaMemcpyToSymbolAsync).
  (void)w, (void)stream;
}

void convolve(const float* x, float* y, int n, int radius, cudaStream_t stream) {
  if (n < 0 || n > kMaxN) throw std::invalid_argument("convolve: n out of range");
  if (radius < 0 || radius > kMaxRadius) throw std::invalid_argument("convolve: radius out of range");
  // TODO: the shared-memory bytes one block needs, the opt-in that allows
  // more than 48 KiB (cudaFuncSetAttribute), the grid, the launch in
  // `stream` (n == 0 launches nothing), and CUDA_CHECK_LAUNCH().
  (void)x, (void)y, (void)stream;
}

} // namespace ex07
