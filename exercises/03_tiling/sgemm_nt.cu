// Exercise 03: a tiled matrix multiply C = A * B^T, correct for every shape.
//
// Read chapters/03_tiling first (versions 3 and 4), then
// exercises/03_tiling/README.md. Grade with: ./tutorial grade 03
// Hints: ./tutorial hint 03
//
// Fill in every TODO. Keep the signature of ex03::sgemm_nt (sgemm_nt.hpp).
#include "sgemm_nt.hpp"

#include "steps/error.hpp"
#include "steps/math.hpp"

#include <cstddef>

namespace ex03 {

// TODO: pick your tile size (the chapter uses 16 and 32).
constexpr int TILE = 32;

// TODO: the kernel. Each block computes a TILE x TILE tile of C; it walks k
// in steps of TILE, copying a tile of A and a tile of B into shared memory,
// then multiplying them. Think about:
//  - which elements of B a thread should copy so that the 32 threads of a
//    warp read consecutive addresses (B is n x k: its rows run along k);
//  - how to lay the B tile out in shared memory so that the inner loop reads
//    it without bank conflicts;
//  - tiles that stick out past m, n or k;
//  - the two barriers.
__global__ void __launch_bounds__(TILE * TILE)
    sgemm_nt_tiled(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
  // TODO: compute C(row, col) for this thread's element.
}

void sgemm_nt(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
              cudaStream_t stream) {
  // TODO: choose the grid and block, launch sgemm_nt_tiled in `stream`, and
  // check the launch with CUDA_CHECK_LAUNCH(). Mind the empty cases.
  (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b, (void)ldb, (void)c, (void)ldc, (void)stream;
}

} // namespace ex03
