// Chapter 10: the PTX instructions the tensor-core versions use, one small
// wrapper each, with the rules that come with them.
//
//   cp.async (sm_80+)  copies 16 bytes global -> shared without passing
//                      through registers; completes asynchronously, in
//                      "commit groups" the thread waits for.
//   mma.sync (sm_89+ for FP8)  one warp multiplies a 16 x 32 E4M3 tile of A
//                      by a 32 x 8 tile of B into a 16 x 8 FP32 tile.
//
// The wgmma / TMA / mbarrier wrappers of the next part (v3, v4) belong here too.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace ch10::ptx {

/// Copies 16 bytes from global to shared memory, asynchronously. Both
/// addresses must be 16-byte aligned. ".cg" caches in L2 only: the bytes are
/// used once from shared memory, there is no point keeping them in L1.
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src) {
  const auto dst = static_cast<unsigned int>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(gmem_src) : "memory");
}

/// Closes the current group of cp.async copies of this thread (an empty
/// group is allowed and completes at once).
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

/// Waits until at most `kPending` of this thread's most recent groups are
/// still in flight. Other threads' copies are only visible after a barrier
/// (__syncthreads) that follows the wait.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

/// D = A * B + D for one warp:
///   mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32
/// A 16 x 32 (E4M3, "row": K-major), B 32 x 8 (E4M3, "col": K-major as
/// well), D 16 x 8 FP32. Which elements each lane holds (PTX ISA, "Matrix
/// Fragments for mma.m16n8k32"), with g = lane / 4 ("groupID") and
/// t = lane % 4 ("threadID_in_group"); a register holds 4 codes, lowest k
/// in the lowest byte:
///
///   a[0]: A row g,     k = 4t .. 4t+3         b[0]: B column g, k = 4t .. 4t+3
///   a[1]: A row g + 8, k = 4t .. 4t+3         b[1]: B column g, k = 16+4t .. 16+4t+3
///   a[2]: A row g,     k = 16+4t .. 16+4t+3
///   a[3]: A row g + 8, k = 16+4t .. 16+4t+3
///
///   d[0], d[1]: D row g,     columns 2t, 2t+1
///   d[2], d[3]: D row g + 8, columns 2t, 2t+1
///
/// So every register is 4 consecutive bytes of one K-major row: one 32-bit
/// load from shared memory each.
__device__ __forceinline__ void mma_m16n8k32_e4m3(float (&d)[4], const std::uint32_t (&a)[4],
                                                  const std::uint32_t (&b)[2]) {
  asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

} // namespace ch10::ptx
