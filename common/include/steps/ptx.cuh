// The PTX instructions of chapter 10's tensor-core kernels, of exercise 10
// and of chapter 03's last version, one small wrapper each, with the rules
// that come with them.
//
//   cp.async (sm_80+)  copies 4 or 16 bytes global -> shared without passing
//                      through registers; completes asynchronously, in
//                      "commit groups" the thread waits for.
//   mma.sync (sm_89+ for FP8)  one warp multiplies a 16 x 32 E4M3 tile of A
//                      by a 32 x 8 tile of B into a 16 x 8 FP32 tile.
//   mma.sync (sm_80+ for BF16) the same for a 16 x 16 BF16 tile of A and a
//                      16 x 8 BF16 tile of B (chapter 11, exercise 11).
//   ldmatrix (sm_75+)  one warp loads 8 x 8 tiles of 16-bit values from shared
//                      memory straight into the fragment layout of mma.sync
//                      (optionally transposed on the way: .trans).
//   mbarrier (sm_80+, transaction counts sm_90)  a 64-bit barrier object in
//                      shared memory: threads arrive on it, and TMA copies
//                      count their bytes down on it; a phase completes when
//                      both reach zero, and waiters wait for a phase's parity.
//   TMA (sm_90)        cp.async.bulk.tensor: one thread asks the copy engine
//                      for a whole 2D box of a tensor described by a
//                      CUtensorMap; it lands in shared memory (swizzled if the
//                      map says so) and completes on an mbarrier.
//   wgmma (sm_90a)     a warpgroup (4 warps) multiplies a 64 x 32 E4M3 tile of A
//                      by a 32 x N tile of B, both read straight from shared
//                      memory through descriptors, into 64 x N FP32 registers;
//                      asynchronous: commit, then wait.
//   setmaxnreg (sm_90a) moves registers between warpgroups of a block.
//
// A binary built for several architectures compiles each kernel once per
// architecture. A kernel that uses an instruction some of them lack wraps its
// body in `#if STEPS_PTX_SM90A` (wgmma, setmaxnreg, TMA, clusters) or
// `#if STEPS_PTX_FP8_MMA` (FP8 mma.sync) or `#if STEPS_PTX_CP_ASYNC` (cp.async
// alone) ... `#endif`: elsewhere
// it compiles to an empty kernel, which the program must not launch there
// (it checks the GPU's compute capability first).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

/// 1 in the device pass for sm_90a (`-gencode arch=compute_90a,code=sm_90a`),
/// the only one with Hopper's arch-specific instructions; 0 in every other
/// pass (the host pass included).
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define STEPS_PTX_SM90A 1
#else
#define STEPS_PTX_SM90A 0
#endif

/// 1 in the device passes for sm_89 and later (FP8 mma.sync exists there);
/// 0 in earlier ones and in the host pass.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
#define STEPS_PTX_FP8_MMA 1
#else
#define STEPS_PTX_FP8_MMA 0
#endif

/// 1 in the device passes for sm_80 and later (cp.async exists there); 0 in
/// earlier ones and in the host pass.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define STEPS_PTX_CP_ASYNC 1
#else
#define STEPS_PTX_CP_ASYNC 0
#endif

/// 1 in the device passes for sm_80 and later (BF16 mma.sync exists there);
/// 0 in earlier ones and in the host pass.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define STEPS_PTX_MMA_BF16 1
#else
#define STEPS_PTX_MMA_BF16 0
#endif

namespace steps::ptx {

/// Copies 16 bytes from global to shared memory, asynchronously. Both
/// addresses must be 16-byte aligned. ".cg" caches in L2 only: the bytes are
/// used once from shared memory, there is no point keeping them in L1.
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src) {
  const auto dst = static_cast<unsigned int>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(gmem_src) : "memory");
}

/// cp_async_16, or 16 zero bytes into smem_dst when `copy` is false (the
/// source is then not read, but must still be a valid address: pass the
/// start of the matrix). Edge tiles get zeros without a branch around the copy.
__device__ __forceinline__ void cp_async_16_or_zero(void* smem_dst, const void* gmem_src, bool copy) {
  const auto dst = static_cast<unsigned int>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem_src), "r"(copy ? 16 : 0)
               : "memory");
}

/// Copies one 4-byte word from global to shared memory asynchronously, or
/// writes 4 zero bytes when `copy` is false (the source is then not read,
/// but must still be a valid address). Both addresses 4-byte aligned. Words
/// can land anywhere in shared memory: a tile can be transposed on the way
/// in (chapter 03, v9). ".ca" is the only caching mode for copies under 16
/// bytes.
__device__ __forceinline__ void cp_async_4_or_zero(void* smem_dst, const void* gmem_src, bool copy) {
  const auto dst = static_cast<unsigned int>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(gmem_src), "r"(copy ? 4 : 0)
               : "memory");
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

// ---------------------------------------------------------------- mbarrier

/// The shared-memory address of a generic pointer, as the PTX instructions
/// below take it.
__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// ------------------------------------------- BF16 mma.sync and ldmatrix

/// D = A * B + D for one warp:
///   mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
/// A 16 x 16 (BF16), B 16 x 8 (BF16), D 16 x 8 (FP32). Which elements each
/// lane holds (PTX ISA, "Matrix Fragments for mma.m16n8k16 with
/// floating point type"), with g = lane / 4 ("groupID") and t = lane % 4
/// ("threadID_in_group"); a register holds two BF16 values, the lower k (or
/// column) in the lower 16 bits:
///
///   a[0]: A row g,     k = 2t, 2t+1           b[0]: B k = 2t, 2t+1,     column g
///   a[1]: A row g + 8, k = 2t, 2t+1           b[1]: B k = 2t+8, 2t+9,   column g
///   a[2]: A row g,     k = 2t+8, 2t+9
///   a[3]: A row g + 8, k = 2t+8, 2t+9
///
///   d[0], d[1]: D row g,     columns 2t, 2t+1
///   d[2], d[3]: D row g + 8, columns 2t, 2t+1
///
/// Below sm_80 (the instruction does not exist there) it traps: a kernel
/// that uses it must not be launched on such a GPU (steps::Feature::mma_bf16).
__device__ __forceinline__ void mma_m16n8k16_bf16(float (&d)[4], const std::uint32_t (&a)[4],
                                                  const std::uint32_t (&b)[2]) {
#if STEPS_PTX_MMA_BF16
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  (void)d, (void)a, (void)b;
  __trap();
#endif
}

/// Four 8 x 8 matrices of 16-bit values from shared memory into r[0..3], for
/// one warp: ldmatrix.sync.aligned.m8n8.x4.shared.b16. Lane l gives the
/// address of one 16-byte row: lanes 0-7 the rows 0-7 of matrix 0, lanes
/// 8-15 those of matrix 1, 16-23 matrix 2, 24-31 matrix 3 (each address
/// 16-byte aligned; the rows may lie anywhere). Lane l receives, in r[i],
/// row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 of matrix i: the
/// layout of an mma.sync fragment register.
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(row_address))
               : "memory");
}

/// ldmatrix_x4 with .trans: each matrix is transposed on the way, so lane l
/// receives in r[i] the elements (row 2 (l % 4), column l / 4) and
/// (row 2 (l % 4) + 1, column l / 4) of matrix i as stored: two values of
/// one COLUMN. The row addresses are given as for ldmatrix_x4.
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(row_address))
               : "memory");
}

// ------------------------------------------------------ shared memory

/// A float from shared memory at a 32-bit shared-window address
/// (smem_addr): an LDS, where a load through a generic pointer the compiler
/// cannot trace to shared memory is a generic LD with 64-bit address
/// arithmetic. Volatile, with a memory clobber: it stays after the
/// mbarrier wait before it, and before the release after it.
__device__ __forceinline__ float ld_shared_f32(std::uint32_t addr) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr) : "memory");
  return v;
}

/// Sets up a barrier that completes a phase after `arrivals` arrive calls
/// (and, if anyone announced bytes with arrive_expect_tx, after those bytes
/// landed). One thread initialises; see fence_barrier_init.
__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, std::uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(arrivals) : "memory");
}

/// Makes initialised barriers visible to the other threads and to the copy
/// engine; a __syncthreads() must follow before anyone uses them.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/// One arrival that also announces `bytes` more bytes to come (TMA copies
/// completing on this barrier count them down).
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}

/// One plain arrival.
__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}

/// Waits until the phase of parity `parity` (0 or 1) has completed. A
/// barrier starts in phase 0, incomplete: waiting for parity 0 blocks until
/// the first phase completes, waiting for parity 1 returns at once (the
/// "previous" phase counts as complete). That is the whole trick of a ring of
/// stages: consumers wait on full[s] with the phase bit of their lap around
/// the ring, producers on empty[s] with the opposite bit, so their first lap
/// does not wait. try_wait blocks for a while in hardware before it reports
/// failure, so this loop does not spin hot.
__device__ __forceinline__ void mbarrier_wait(std::uint64_t* bar, std::uint32_t parity) {
  const std::uint32_t addr = smem_addr(bar);
  std::uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(addr), "r"(parity)
        : "memory");
  } while (!done);
}

// --------------------------------------------------------------------- TMA

/// Starts a TMA copy of the box at (`c0`, `c1`) (c0 innermost: the K byte,
/// c1 the row) of the tensor `map` describes into shared memory at `dst`; it
/// completes on `bar` with the box's full byte count, even where the box
/// reaches past the tensor (those bytes are zero-filled).
__device__ __forceinline__ void tma_load_2d(void* dst, const void* map, std::uint64_t* bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
}

/// Starts a copy of `bytes` contiguous bytes from global memory at `src` into
/// shared memory at `dst` by the copy engine, without a tensor map (both
/// addresses 16-byte aligned, `bytes` a multiple of 16); it completes on
/// `bar` with `bytes`, like tma_load_2d.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, std::uint32_t bytes, std::uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                   smem_addr(dst)),
               "l"(src), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
}

/// Starts a TMA copy of the box in shared memory at `src` to (`c0`, `c1`)
/// of the tensor `map` describes (c0 innermost: the column, c1 the row).
/// Parts of the box past the tensor are not written. It reads `src` for a
/// while after this returns: close it into a bulk group (bulk_commit) and
/// wait with bulk_wait_read before writing `src` again.
__device__ __forceinline__ void tma_store_2d(const void* map, const void* src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(smem_addr(src)), "r"(c0), "r"(c1)
               : "memory");
}

/// Closes this thread's bulk copies issued since the last commit into a group.
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }

/// Waits until at most kPending of this thread's bulk groups still READ
/// shared memory (their writes to global memory may still be on their way).
template <int kPending>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}

/// Waits until at most kPending of this thread's bulk groups are not complete.
template <int kPending>
__device__ __forceinline__ void bulk_wait() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(kPending) : "memory");
}

/// Orders this thread's earlier shared-memory writes (generic proxy) before
/// later accesses by the copy engine (async proxy), e.g. a TMA store of them.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/// Fetches a tensor map (a kernel parameter) into the TMA unit's cache.
__device__ __forceinline__ void tma_prefetch_map(const void* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}

// ------------------------------------------------------------------- wgmma

/// The 64-bit shared-memory matrix descriptor of a K-major tile whose rows
/// are 128 bytes, stored with the 128-byte swizzle (as TMA writes it with
/// CU_TENSOR_MAP_SWIZZLE_128B), starting at `tile`:
///   bits  0-13  start address >> 4
///   bits 16-29  leading-dimension byte offset >> 4: unused for swizzled
///               K-major tiles (0)
///   bits 32-45  stride byte offset >> 4: 1024 B from one group of 8 rows to
///               the next (8 rows x 128 B)
///   bits 62-63  swizzle mode: 1 = 128-byte swizzle
/// The tile must start on a 1024-byte boundary (the swizzle pattern repeats
/// every 8 rows = 1024 B, and the descriptor's base-offset bits stay 0). To
/// step along K inside the 128-byte rows, add the byte offset (32 per k32
/// step) to `tile`: the hardware applies the swizzle to the final address.
// [snippet wgmma_desc]
__device__ __forceinline__ std::uint64_t wgmma_desc_sw128(const void* tile) {
  const std::uint64_t addr = smem_addr(tile);
  return ((addr & 0x3FFFF) >> 4) | (std::uint64_t{1024 >> 4} << 32) | (std::uint64_t{1} << 62);
}
// [/snippet wgmma_desc]
/// The same descriptor split in two: its low word (the start address >> 4)
/// and its high word, the same for every such tile. A kernel that computes
/// the low word once and steps it (+ bytes / 16) issues one integer add per
/// wgmma instead of rebuilding the descriptor from a pointer.
__device__ __forceinline__ std::uint32_t wgmma_desc_sw128_lo(const void* tile) { return (smem_addr(tile) & 0x3FFFF) >> 4; }
constexpr std::uint32_t kWgmmaDescSw128Hi = (1024 >> 4) | (1u << 30);
__device__ __forceinline__ std::uint64_t wgmma_desc_sw128(std::uint32_t lo) {
  return (std::uint64_t{kWgmmaDescSw128Hi} << 32) | lo;
}

/// Orders this thread's earlier register writes (of the accumulators) before
/// the wgmma instructions that follow. Needed before the first wgmma of a
/// batch whenever the accumulators were touched by ordinary instructions.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
/// Closes the current batch of wgmma instructions into a group.
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
/// Waits until at most `kPending` groups of this warpgroup are in flight.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// The accumulator operands of the two wgmma wrappers below: the PTX names
// %0 .. %47 (and %48 .. %63), then the C++ registers d[0] .. bound to them,
// eight at a time.
#define STEPS_WGMMA_D_0_47                                                                                        \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                                        \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "                              \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47"
#define STEPS_WGMMA_D_48_63 ", %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define STEPS_WGMMA_D8(i)                                                                                         \
  "+f"(d[(i)]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3]), "+f"(d[(i) + 4]), "+f"(d[(i) + 5]),         \
      "+f"(d[(i) + 6]), "+f"(d[(i) + 7])
#define STEPS_WGMMA_D48 STEPS_WGMMA_D8(0), STEPS_WGMMA_D8(8), STEPS_WGMMA_D8(16), STEPS_WGMMA_D8(24), \
                        STEPS_WGMMA_D8(32), STEPS_WGMMA_D8(40)

/// d (64 x 128 FP32) = A (64 x 32 E4M3) * B^T (B: 128 x 32 E4M3) + (accumulate ? d : 0)
/// for one warpgroup, A and B both K-major in shared memory (descriptors
/// above). Which elements thread l of warp w (of the warpgroup) holds, for
/// i = 0..15:
///   d[4i], d[4i+1]:   row 16w + l/4,     columns 8i + 2(l%4), 8i + 2(l%4) + 1
///   d[4i+2], d[4i+3]: row 16w + l/4 + 8, the same columns
/// Asynchronous: the registers are valid only after wgmma_commit and
/// wgmma_wait.
__device__ __forceinline__ void wgmma_m64n128k32_e4m3(float (&d)[64], std::uint64_t desc_a, std::uint64_t desc_b,
                                                      std::uint32_t accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {" STEPS_WGMMA_D_0_47 STEPS_WGMMA_D_48_63
               "}, %64, %65, p, 1, 1;\n}\n"
               : STEPS_WGMMA_D48, STEPS_WGMMA_D8(48), STEPS_WGMMA_D8(56)
               : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

/// The same for a 64 x 96 piece of D (B: 96 x 32 E4M3): 48 registers,
/// d[4i] .. d[4i+3] as above for i = 0..11 (chapter 10's v6: half tiles).
__device__ __forceinline__ void wgmma_m64n96k32_e4m3(float (&d)[48], std::uint64_t desc_a, std::uint64_t desc_b,
                                                     std::uint32_t accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %50, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n96k32.f32.e4m3.e4m3 {" STEPS_WGMMA_D_0_47
               "}, %48, %49, p, 1, 1;\n}\n"
               : STEPS_WGMMA_D48
               : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

#undef STEPS_WGMMA_D48
#undef STEPS_WGMMA_D8
#undef STEPS_WGMMA_D_48_63
#undef STEPS_WGMMA_D_0_47

/// stmatrix.sync.aligned.m8n8.x4: the warp stores four 8 x 8 matrices of
/// 16-bit values to shared memory. Register r_j of lane l holds row l / 4,
/// columns 2(l % 4) and 2(l % 4) + 1 of matrix j (low half first: the
/// layout of an mma / wgmma accumulator fragment); lanes 8j .. 8j + 7 give
/// the addresses of the 8 rows (16 bytes each) of matrix j. One instruction
/// for what takes four 4-byte stores per thread otherwise.
__device__ __forceinline__ void stmatrix_x4(void* smem, std::uint32_t r0, std::uint32_t r1, std::uint32_t r2,
                                            std::uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(smem_addr(smem)), "r"(r0),
               "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// ------------------------------------------------------- named barriers

/// __syncthreads() for a subset: waits until `threads` threads (a multiple
/// of 32) have reached barrier `id` (1..15; 0 is __syncthreads' own).
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// ------------------------------ flags between blocks (chapter 10's v7)

/// Reads a flag in global memory with acquire semantics at GPU scope: what
/// the writer did before its release is visible after this load sees it.
__device__ __forceinline__ int ld_acquire_gpu(const int* flag) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(flag) : "memory");
  return v;
}
/// Writes a flag in global memory with release semantics at GPU scope.
__device__ __forceinline__ void st_release_gpu(int* flag, int v) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(flag), "r"(v) : "memory");
}

// -------------------------------------------------------------- registers

/// Lowers this warpgroup's register count to kRegs (every warp of the
/// warpgroup executes it).
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
/// Raises this warpgroup's register count to kRegs, waiting until other
/// warpgroups have released enough.
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

} // namespace steps::ptx
