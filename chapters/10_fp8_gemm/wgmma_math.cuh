// Chapter 10: the math warpgroup's part of versions 3 and 4, shared by both
// (v5 runs v4's; v6 uses the fragment layout, the operand fences and
// issue_k_block's 64 x 96 form, with its own B scales and promotion).
//
// A warpgroup (128 threads) owns a 64 x 128 piece of D. Per K block of 128:
//
//   shared memory (one stage, 128-byte swizzle: written by TMA, in v3a by cp.async)
//     A: 64 rows x 128 B  --+   4 x wgmma m64n128k32      partial (64 x 128 FP32,
//     B: 128 rows x 128 B --+-- (k = 0, 32, 64, 96) ----> 64 registers per thread;
//                                                          starts from 0 each block)
//   then, on the CUDA cores (promotion, as in v2):
//     total += sA(row, kb) * sB(column block, kb) * partial
//
// Register layout of the 64 x 128 result in the warpgroup (see
// ptx::wgmma_m64n128k32_e4m3): thread l of warp w holds rows 16w + l/4 and
// 16w + l/4 + 8, columns 8i + 2(l%4) and the next, i = 0..15. So a thread
// needs exactly two A scales per K block (its two rows) and, because a tile
// is 128 columns aligned to 128, one B scale.
#pragma once

#include "fp8_gemm.cuh"

#include "steps/ptx.cuh"

#include <cstdint>

namespace ch10::wg {

namespace ptx = steps::ptx;

constexpr int kMathRows = 64;    ///< rows of D per math warpgroup (one wgmma m64)
constexpr int kTileN = 128;      ///< columns of D per tile (one wgmma n128)
constexpr int kBlockK = 128;     ///< K per stage = one scale block = 4 wgmma k32
constexpr int kAccum = kMathRows * kTileN / 128; ///< FP32 registers per thread per 64 x 128 piece: 64
/// Bytes of one TMA box row: the 128 K bytes of a K block.
constexpr int kRowBytes = kBlockK;

static_assert(kBlockK == kScaleBlock, "a stage is one scale block: the promotion happens per stage");
static_assert(kTileN == kScaleBlock, "one B scale per tile and K block needs 128-column tiles");

/// The first 1024-byte boundary at or after p: where a tile in the
/// 128-byte swizzled layout must start (dynamic shared memory is only
/// 16-byte aligned).
__device__ __forceinline__ std::uint8_t* align_1024(std::uint8_t* p) {
  return reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(p) + 1023) & ~std::uintptr_t{1023});
}

/// Where this thread's values go: rows row0 and row0 + 8 of D, columns
/// col0 + 8i and col0 + 8i + 1 (i = 0..15).
struct Fragment {
  int row0, col0;
  /// For the thread `lane` of warp `warp_in_group` of the math warpgroup that
  /// owns rows m0.. and columns n0.. of D.
  __device__ Fragment(int m0, int n0, int warp_in_group, int lane)
      : row0(m0 + 16 * warp_in_group + lane / 4), col0(n0 + 2 * (lane % 4)) {}
};

/// The scales a thread needs for one K block: its two rows' A scales and the
/// tile's B scale. Loaded one block ahead and multiplied only in promote(),
/// so that the loads' latency hides behind the tensor-core work: multiplied
/// here, the warp would stall on the loads before it could issue the next
/// wgmma (on the H200 that cost v4 almost half its speed).
struct BlockScales {
  float a0, a1, b;
};

/// This thread's scales of K block kb from global memory (v3a, v3b, v4a). Rows past M get 0 (their A rows
/// arrived as zeros anyway) and read nothing.
__device__ __forceinline__ BlockScales block_scales(const Fp8Gemm& p, const Fragment& f, int n0, int kb) {
  return {f.row0 < p.m ? p.sa.at(f.row0, kb) : 0.0f, f.row0 + 8 < p.m ? p.sa.at(f.row0 + 8, kb) : 0.0f,
          p.sb.at(n0, kb)};
}

/// Tells the compiler that the asm statement "uses and redefines" every
/// accumulator register here. The wgmma wrapper's outputs are only valid
/// after wgmma_wait, but the compiler cannot know that: without this fence
/// after the wait it may move reads of the accumulators (the promotion)
/// above the wait, and before the issue it may keep an accumulator value in
/// a copy. CUTLASS's warpgroup_fence_operand does the same. (A draft of v4
/// without these fences computed a few hundred elements a few percent off,
/// the same ones every run, on small shapes; with them, every run has
/// passed. We did not isolate the draft's bug further.)
template <int N>
__device__ __forceinline__ void fence_operands(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

/// Issues the 4 wgmma of one K block into `partial` (the first one
/// overwrites it, the others accumulate), and commits them as one group.
/// The tiles are given by their descriptors' low words
/// (ptx::wgmma_desc_sw128_lo): `a_lo` this warpgroup's 64 rows of the A
/// stage, `b_lo` B's rows, both 1024-byte aligned; stepping along K is then
/// one add per wgmma (32 bytes = 2 in the low word), not a descriptor
/// rebuilt from a pointer. N = 64 accumulators: a 64 x 128 piece (wgmma
/// n128; v3a to v5); N = 48: 64 x 96 (n96; each half of v6's tile). Returns at once: wait
/// with ptx::wgmma_wait, then fence_operands(partial) before reading it.
template <int N>
__device__ __forceinline__ void issue_k_block(float (&partial)[N], std::uint32_t a_lo, std::uint32_t b_lo) {
  static_assert(N == 48 || N == 64, "wgmma wrappers exist for n96 (48 accumulators) and n128 (64)");
  fence_operands(partial);
  ptx::wgmma_fence(); // the promotion read `partial` with ordinary instructions
#pragma unroll
  for (int k = 0; k < kBlockK / 32; ++k) {
    const std::uint64_t desc_a = ptx::wgmma_desc_sw128(a_lo + 2 * k), desc_b = ptx::wgmma_desc_sw128(b_lo + 2 * k);
    if constexpr (N == 48)
      ptx::wgmma_m64n96k32_e4m3(partial, desc_a, desc_b, k > 0 ? 1u : 0u);
    else
      ptx::wgmma_m64n128k32_e4m3(partial, desc_a, desc_b, k > 0 ? 1u : 0u);
  }
  ptx::wgmma_commit();
  fence_operands(partial);
}
/// The same with the tiles given by pointers (v3a, v3b, v4a).
__device__ __forceinline__ void issue_k_block(float (&partial)[kAccum], const std::uint8_t* a, const std::uint8_t* b) {
  issue_k_block(partial, ptx::wgmma_desc_sw128_lo(a), ptx::wgmma_desc_sw128_lo(b));
}

/// total += sA(row) * sB * partial for the thread's two rows. Call after
/// the block's wgmma_wait.
// [snippet promote]
__device__ __forceinline__ void promote(float (&total)[kAccum], float (&partial)[kAccum], BlockScales sc) {
  fence_operands(partial);
  // Keeps the scale products here: the compiler would otherwise hoist them
  // above the wgmma issued just before (v4), and the warp would wait for the
  // scales' loads before it could issue them.
  asm volatile("" : "+f"(sc.a0), "+f"(sc.a1), "+f"(sc.b));
  const float s0 = sc.a0 * sc.b, s1 = sc.a1 * sc.b;
#pragma unroll
  for (int i = 0; i < kAccum; i += 4) {
    total[i] = fmaf(s0, partial[i], total[i]);
    total[i + 1] = fmaf(s0, partial[i + 1], total[i + 1]);
    total[i + 2] = fmaf(s1, partial[i + 2], total[i + 2]);
    total[i + 3] = fmaf(s1, partial[i + 3], total[i + 3]);
  }
}
// [/snippet promote]

/// Writes the thread's 64 values of `total` to D as BF16 (checked at the
/// edges of D).
__device__ __forceinline__ void store(const Fp8Gemm& p, const Fragment& f, const float (&total)[kAccum]) {
#pragma unroll
  for (int i = 0; i < kAccum / 4; ++i) {
    store_pair(p, f.row0, f.col0 + 8 * i, total[4 * i], total[4 * i + 1]);
    store_pair(p, f.row0 + 8, f.col0 + 8 * i, total[4 * i + 2], total[4 * i + 3]);
  }
}

} // namespace ch10::wg
