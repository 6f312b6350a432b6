// Exercise 10, part 2: the mbarrier ring of a warp-specialized kernel.
//
// Read chapters/10_fp8_gemm/ring.cuh and producer.cuh (Ring, full[]/empty[])
// first, then exercises/10_fp8_gemm/ring/README.md.
// Grade with: ./tutorial grade 10 ring     Hints: ./tutorial hint 10 ring
//
// The kernel: y = bf16(x * scale), x in E4M3 with one scale per 128
// elements, chunk by chunk. Warp 0 (one thread of it) is the producer: it
// copies chunks into a ring of kStages stages with the copy engine. Warps 1..4
// are the consumers: they convert a stage and send it back to global memory.
// Two barriers per stage keep them in step: full[s] (the chunk has landed)
// and empty[s] (the consumers are done with the stage).
#include "ring.hpp"

#include "given.cuh" // the PTX wrappers, load / convert / store, the watchdog, the launch

namespace ex10::ring {

/// Where a role is in the ring: the stage, and the parity of its lap.
struct Ring {
  int stage = 0;
  std::uint32_t phase = 0;
  __device__ void advance() {
    if (++stage == kStages) { // one lap done: back to stage 0, the next phase of every barrier
      stage = 0;
      phase ^= 1;
    }
  }
};

__global__ void __launch_bounds__(kThreads) dequantize_ring(const Params p) {
  Shared& sm = begin(p);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      init(sm.full, s, 1);               // the producer's arrive_expect_tx (plus the copy's bytes)
      init(sm.empty, s, kConsumerWarps); // lane 0 of each consumer warp
    }
    fence_barrier_init();
  }
  __syncthreads();

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp == 0) {
    if (lane == 0) { // the producer
      Ring ring;
      for (int c = blockIdx.x; c < p.chunks; c += gridDim.x) {
        wait(sm.empty, ring.stage, ring.phase ^ 1); // lap 0: parity 1, which passes at once
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
      wait(sm.full, ring.stage, ring.phase);
      convert(p, ring.stage, c);
      fence_proxy_async(); // my writes to out[] before the copy engine reads it
      consumer_sync();
      if (storer) {
        store(p, ring.stage, c);
        wait_store_read(); // the copy has read out[]: the stage may be refilled
      }
      if (lane == 0) arrive(sm.empty, ring.stage);
      ring.advance();
    }
  }
  end();
}

void dequantize(const __nv_fp8_e4m3* x, const float* scales, __nv_bfloat16* y, long long n, cudaStream_t stream) {
  launch(dequantize_ring, x, scales, y, n, stream);
}

} // namespace ex10::ring
