// Exercise 10, part 2: the mbarrier ring of a warp-specialized kernel.
//
// Read chapters/10_fp8_gemm/v4_warp_specialized.cuh (Ring, full[]/empty[])
// first, then exercises/10_fp8_gemm/ring/README.md.
// Grade with: ./tutorial grade 10 ring     Hints: ./tutorial hint 10 ring
//
// The kernel: y = bf16(x * scale), x in E4M3 with one scale per 128
// elements, chunk by chunk. Warp 0 (one thread of it) is the producer: it
// copies chunks into a ring of kStages stages with the copy engine. Warps 1..4
// are the consumers: they convert a stage and send it back to global memory.
// Two barriers per stage keep them in step: full[s] (the chunk has landed)
// and empty[s] (the consumers are done with the stage).
//
// Fill in the seven TODOs; everything else is given (given.cuh).
#include "ring.hpp"

#include "given.cuh" // the PTX wrappers, load / convert / store, the watchdog, the launch

namespace ex10::ring {

/// Where a role is in the ring: the stage, and the parity of its lap.
struct Ring {
  int stage = 0;
  std::uint32_t phase = 0;
  __device__ void advance() {
    // TODO 2: the next stage. After the last one (kStages - 1) the ring starts
    // a new lap at stage 0, and every barrier is then one phase further on.
  }
};

__global__ void __launch_bounds__(kThreads) dequantize_ring(const Params p) {
  Shared& sm = begin(p);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      // TODO 1: how many arrive calls complete one phase of full[s]? Of
      // empty[s]? (Count the arrive and arrive_expect_tx calls below, per use
      // of a stage. A count must be at least 1.)
      init(sm.full, s, 0);
      init(sm.empty, s, 0);
    }
    fence_barrier_init();
  }
  __syncthreads();

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp == 0) {
    if (lane == 0) { // the producer
      Ring ring;
      for (int c = blockIdx.x; c < p.chunks; c += gridDim.x) {
        // TODO 3: wait until the consumers have released this stage. Which
        // parity? On the first lap nobody has released anything yet, and the
        // wait must pass at once.
        wait(sm.empty, ring.stage, 0);
        const int bytes = chunk_elements(p, c);     // E4M3: one byte per element; the last chunk is short
        arrive_expect_tx(sm.full, ring.stage, bytes);
        load(p, ring.stage, c);
        ring.advance();
      }
    }
  } else { // the consumers
    const bool storer = threadIdx.x == 32;
    Ring ring;
    for (int c = blockIdx.x; c < p.chunks; c += gridDim.x) {
      // TODO 4: wait until this lap's chunk has landed in the stage. Which parity?
      wait(sm.full, ring.stage, 0);
      convert(p, ring.stage, c);
      // TODO 5: the copy engine will read out[] next; it does not see ordinary
      // shared-memory writes unless each writer orders them first.
      consumer_sync();
      if (storer) {
        store(p, ring.stage, c);
        // TODO 6: the store is still READING out[]. When may the stage go back
        // to the producer?
      }
      // TODO 7: release the stage: who arrives on empty[], and how many
      // arrivals make a phase (TODO 1)? Any choice works if one use of the
      // stage brings exactly that many arrivals and the phase cannot complete
      // before the storer's copy has read out[] (README: "Arrive counts").
      ring.advance();
    }
  }
  end();
}

void dequantize(const __nv_fp8_e4m3* x, const float* scales, __nv_bfloat16* y, long long n, cudaStream_t stream) {
  launch(dequantize_ring, x, scales, y, n, stream);
}

} // namespace ex10::ring
