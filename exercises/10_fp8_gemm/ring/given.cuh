// Exercise 10, part 2 (ring): what is given (and correct). Your ring.cu and
// the solution both include this file; you do not need to change it.
//
//   - the steps of the ring, each around the course's PTX wrapper
//     (steps/ptx.cuh: mbarrier init / arrive / arrive.expect_tx, the fence
//     after init, the 1-D bulk copy global -> shared, fence.proxy.async, the
//     bulk group's commit and wait_group.read) or, where steps/ptx.cuh has
//     none, its own instruction: the bounded mbarrier.try_wait.parity, the
//     1-D bulk copy shared -> global, and the consumers' named barrier (the
//     non-.aligned form);
//   - the work of a stage: load (producer), convert and store (consumers);
//   - the watchdog: every wait is bounded; past Watch::timeout_s the block
//     writes a Report (where it waited, for which parity) into mapped host
//     memory and stops the kernel with __trap();
//   - with STEPS_RING_CHECKED (the grader's build), a shadow of the protocol
//     in shared memory, updated by these wrappers: each one checks that the
//     ring is in a state where its step is allowed (no barrier used before
//     the fence after its init, a consumer at the barrier only after the
//     fence of its writes, a store only after every writer's fence, a
//     release only after the store has read the stage...)
//     and reports a violation the same way. Races then fail every time, not
//     only when the timing happens to expose them.
//   - the launch.
#pragma once

#include "ring.hpp"

#include "steps/error.hpp"
#include "steps/ptx.cuh" // mbarrier_init, _arrive, _arrive_expect_tx, named_barrier_sync

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#ifndef STEPS_RING_CHECKED
#define STEPS_RING_CHECKED 0
#endif

namespace ex10::ring {

constexpr int kChunkBytes = kChunk;     // E4M3: one byte per element
constexpr int kOutBytes = 2 * kChunk;   // BF16
constexpr int kConsumers = 32 * kConsumerWarps;

/// The kernel's arguments.
struct Params {
  const std::uint8_t* x;    // n E4M3 codes
  const float* scales;      // ceil(n / 128)
  std::uint16_t* y;         // n BF16
  long long n;
  int chunks;               // ceil(n / kChunk)
  Report* report;           // device view of the grader's mapped Report, or nullptr
  unsigned long long timeout_ns;
  int slow;                 // checked builds: consumers sleep on some chunks
};

#if STEPS_RING_CHECKED
/// The checked build's shadow of the protocol.
struct Shadow {
  int init_fenced;              // 1: fence.mbarrier_init after the barriers' init
  StageShadow stage[kStages];
  WarpWait warp[1 + kConsumerWarps];
  int waits[kThreads];          // waits so far of each thread: its chunk iteration
  int waited[kThreads];         // the stage it last waited on and has not used yet, or -1
  int unfenced[kThreads];       // the stage this thread wrote and has not fenced yet, or -1
  int unread[kThreads];         // 1: a bulk store of this thread may still read shared memory
};
#endif

/// Dynamic shared memory: stage s is in[s] (the chunk as it arrives) and
/// out[s] (the chunk converted, as it leaves).
struct Shared {
  alignas(128) std::uint8_t in[kStages][kChunkBytes];
  alignas(128) std::uint8_t out[kStages][kOutBytes];
  std::uint64_t full[kStages];  // the producer's copy of stage s has landed
  std::uint64_t empty[kStages]; // the consumers are done with stage s
  Report* report;
  unsigned long long timeout_ns;
#if STEPS_RING_CHECKED
  Shadow shadow;
#endif
};

/// The grader's settings (set_watch) and the flag that lets one thread of a
/// launch write the report.
inline Watch g_watch;
__device__ int g_report_claimed;

__device__ __forceinline__ Shared& shared() {
  extern __shared__ __align__(128) std::uint8_t ring_smem[];
  return *reinterpret_cast<Shared*>(ring_smem);
}

__device__ __forceinline__ std::uint64_t now_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ int barrier_of(const std::uint64_t* bars) {
  return bars == shared().full ? kFull : kEmpty;
}

/// Writes the report (the first thread of the launch to get here) and stops
/// the kernel: after __trap() the launch fails with an error.
__device__ __noinline__ void report_and_trap(Finding event, int barrier, int stage, int parity, int lap,
                                             int expected_stage, int expected_parity, long long value,
                                             long long expected) {
  Shared& sm = shared();
  if (sm.report == nullptr) __trap();
  if (atomicCAS(&g_report_claimed, 0, 1) != 0) {
    // Another thread writes the report: wait until it is out (at most 1 s),
    // since this thread's __trap() would end the kernel under its pen.
    const std::uint64_t start = now_ns();
    while (atomicAdd(&g_report_claimed, 0) != 2 && now_ns() - start < 1000000000ull) __nanosleep(1000);
    __trap();
  }
  {
    volatile Report* r = sm.report;
    r->checked = STEPS_RING_CHECKED;
    r->block = static_cast<int>(blockIdx.x);
    r->grid = static_cast<int>(gridDim.x);
    r->warp = static_cast<int>(threadIdx.x / 32);
    r->lane = static_cast<int>(threadIdx.x % 32);
    r->barrier = barrier;
    r->stage = stage;
    r->parity = parity;
    r->lap = lap;
    r->expected_stage = expected_stage;
    r->expected_parity = expected_parity;
    r->chunk = lap < 0 || expected_stage < 0
                   ? -1
                   : static_cast<int>(blockIdx.x + (lap * kStages + expected_stage) * gridDim.x);
    r->value = value;
    r->expected = expected;
    r->timeout_s = static_cast<double>(sm.timeout_ns) * 1e-9;
#if STEPS_RING_CHECKED
    const volatile Shadow& sh = sm.shadow;
    for (int s = 0; s < kStages; ++s) {
      r->stages[s].full_init = sh.stage[s].full_init;
      r->stages[s].empty_init = sh.stage[s].empty_init;
      r->stages[s].loads = sh.stage[s].loads;
      r->stages[s].full_arrivals = sh.stage[s].full_arrivals;
      r->stages[s].empty_arrivals = sh.stage[s].empty_arrivals;
      r->stages[s].expect_bytes = sh.stage[s].expect_bytes;
      r->stages[s].copy_bytes = sh.stage[s].copy_bytes;
      r->stages[s].fenced = sh.stage[s].fenced;
    }
    for (int w = 0; w <= kConsumerWarps; ++w) {
      r->warps[w].waiting = sh.warp[w].waiting;
      r->warps[w].barrier = sh.warp[w].barrier;
      r->warps[w].stage = sh.warp[w].stage;
      r->warps[w].parity = sh.warp[w].parity;
      r->warps[w].lap = sh.warp[w].lap;
      r->warps[w].expected_parity = sh.warp[w].expected_parity;
    }
#endif
    __threadfence_system();
    r->event = static_cast<int>(event); // last: the host trusts the fields once it sees an event
    __threadfence_system();
    atomicExch(&g_report_claimed, 2);
  }
  __trap();
}

/// Where the calling thread is in the protocol (checked builds): its chunk
/// iteration is the number of waits it has done.
__device__ __forceinline__ int iteration() {
#if STEPS_RING_CHECKED
  return shared().shadow.waits[threadIdx.x];
#else
  return -1;
#endif
}

__device__ __forceinline__ void check_stage(int barrier, int stage) {
#if STEPS_RING_CHECKED
  if (stage < 0 || stage >= kStages) {
    const int it = iteration() > 0 ? iteration() - 1 : 0;
    report_and_trap(Finding::stage_out_of_ring, barrier, stage, -1, it / kStages, it % kStages, -1, stage, 0);
  }
#else
  (void)barrier, (void)stage;
#endif
}

// ------------------------------------------------------------ the barriers

/// Initialises bars[stage] (sm.full or sm.empty) to complete a phase after
/// `count` arrivals (and, for full[], the bytes announced by expect_tx).
__device__ __forceinline__ void init(std::uint64_t* bars, int stage, int count) {
  const int barrier = barrier_of(bars);
  check_stage(barrier, stage);
#if STEPS_RING_CHECKED
  if (count < 1 || count >= (1 << 20))
    report_and_trap(Finding::bad_init_count, barrier, stage, -1, -1, -1, -1, count, 0);
  StageShadow& st = shared().shadow.stage[stage];
  (barrier == kFull ? st.full_init : st.empty_init) = count;
#endif
  steps::ptx::mbarrier_init(&bars[stage], static_cast<std::uint32_t>(count));
}

/// fence.mbarrier_init.release.cluster: makes this thread's mbarrier.init
/// visible to the other threads and to the copy engine, which completes its
/// copies on the barriers (a __syncthreads() follows). The PTX ISA's fence for
/// exactly this: it orders only the thread's earlier mbarrier.init. (Not
/// fence.proxy.async: cp.async.bulk accesses its mbarrier through the generic
/// proxy; the proxy fence is for the data the copy engine reads, out[].)
__device__ __forceinline__ void fence_barrier_init() {
  steps::ptx::fence_barrier_init();
#if STEPS_RING_CHECKED
  shared().shadow.init_fenced = 1;
#endif
}

/// Checked builds: a barrier used before the fence after its init.
__device__ __forceinline__ void check_init_fenced(int barrier, int stage) {
#if STEPS_RING_CHECKED
  if (!shared().shadow.init_fenced) report_and_trap(Finding::init_not_fenced, barrier, stage, -1, -1, -1, -1, 0, 0);
#else
  (void)barrier, (void)stage;
#endif
}

__device__ __forceinline__ bool try_wait(std::uint64_t* bar, std::uint32_t parity) {
  std::uint32_t done;
  asm volatile(
      "{\n.reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(steps::ptx::smem_addr(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

/// Waits until the phase of bars[stage] with parity `parity` has completed.
/// A barrier starts in phase 0, incomplete: a wait for parity 0 blocks until
/// the first phase completes; a wait for parity 1 returns at once (the phase
/// "before" the first counts as complete). Bounded: after Watch::timeout_s
/// it reports a deadlock and stops the kernel.
__device__ __forceinline__ void wait(std::uint64_t* bars, int stage, std::uint32_t parity) {
  Shared& sm = shared();
  const int barrier = barrier_of(bars);
  const int p = static_cast<int>(parity);
  int lap = -1, want_stage = -1, want_parity = -1;
  check_init_fenced(barrier, stage);
#if STEPS_RING_CHECKED
  Shadow& sh = sm.shadow;
  const int it = sh.waits[threadIdx.x];
  lap = it / kStages;
  want_stage = it % kStages;
  // full[s], lap L: the phase L, parity L % 2. empty[s], lap L: the phase
  // L - 1, released by the consumers' previous lap (parity 1 on lap 0).
  want_parity = (lap & 1) ^ (barrier == kEmpty ? 1 : 0);
  if (stage < 0 || stage >= kStages)
    report_and_trap(Finding::stage_out_of_ring, barrier, stage, p, lap, want_stage, want_parity, stage, 0);
  if (stage != want_stage)
    report_and_trap(Finding::wrong_stage, barrier, stage, p, lap, want_stage, want_parity, stage, want_stage);
  WarpWait& ww = sh.warp[threadIdx.x / 32];
  if (threadIdx.x % 32 == 0) {
    ww.barrier = barrier;
    ww.stage = stage;
    ww.parity = p;
    ww.lap = lap;
    ww.expected_parity = want_parity;
    ww.waiting = 1;
  }
#endif
  const std::uint64_t start = now_ns();
  while (!try_wait(&bars[stage], parity)) {
    if (now_ns() - start > sm.timeout_ns)
      report_and_trap(Finding::deadlock, barrier, stage, p, lap, want_stage, want_parity, 0, 0);
  }
#if STEPS_RING_CHECKED
  if (threadIdx.x % 32 == 0) ww.waiting = 0;
  if (p != want_parity)
    report_and_trap(Finding::passed_wrong_parity, barrier, stage, p, lap, want_stage, want_parity, p, want_parity);
  sh.waits[threadIdx.x] = it + 1;
  sh.waited[threadIdx.x] = stage;
#endif
}

/// One arrival on bars[stage].
__device__ __forceinline__ void arrive(std::uint64_t* bars, int stage) {
  const int barrier = barrier_of(bars);
  check_stage(barrier, stage);
  check_init_fenced(barrier, stage);
#if STEPS_RING_CHECKED
  Shadow& sh = shared().shadow;
  const int it = iteration() - 1;
  if (barrier == kEmpty && sh.unread[threadIdx.x])
    report_and_trap(Finding::release_before_read, barrier, stage, -1, it / kStages, it % kStages, -1, 0, 0);
  atomicAdd(barrier == kFull ? &sh.stage[stage].full_arrivals : &sh.stage[stage].empty_arrivals, 1);
#endif
  steps::ptx::mbarrier_arrive(&bars[stage]);
}

/// One arrival on bars[stage] that also announces `bytes` more bytes to
/// come: the phase completes when the arrivals are in AND exactly that many
/// bytes of the copies that name this barrier have landed.
__device__ __forceinline__ void arrive_expect_tx(std::uint64_t* bars, int stage, int bytes) {
  const int barrier = barrier_of(bars);
  check_stage(barrier, stage);
  check_init_fenced(barrier, stage);
#if STEPS_RING_CHECKED
  StageShadow& st = shared().shadow.stage[stage];
  st.expect_bytes = bytes;
  ++st.full_arrivals;
#endif
  steps::ptx::mbarrier_arrive_expect_tx(&bars[stage], static_cast<std::uint32_t>(bytes));
}

// ------------------------------------------------------ the work of a stage

/// Elements (= E4M3 bytes) of chunk c: kChunk, fewer in the last chunk.
__device__ __forceinline__ int chunk_elements(const Params& p, int c) {
  const long long left = p.n - static_cast<long long>(c) * kChunk;
  return static_cast<int>(left < kChunk ? left : kChunk);
}

/// Producer: starts the copy of chunk c of x into in[stage] (cp.async.bulk,
/// the 1-D TMA); it completes on full[stage] with its byte count.
__device__ __forceinline__ void load(const Params& p, int stage, int c) {
  Shared& sm = shared();
  check_stage(kFull, stage);
  const int bytes = chunk_elements(p, c);
#if STEPS_RING_CHECKED
  Shadow& sh = sm.shadow;
  const int it = iteration() - 1;
  if (sh.waited[threadIdx.x] != stage)
    report_and_trap(Finding::load_without_wait, kEmpty, stage, -1, it < 0 ? 0 : it / kStages, stage, -1,
                    sh.waited[threadIdx.x], stage);
  if (sh.stage[stage].expect_bytes != bytes)
    report_and_trap(Finding::expect_tx_mismatch, kFull, stage, -1, it / kStages, it % kStages, -1,
                    sh.stage[stage].expect_bytes, bytes);
  sh.waited[threadIdx.x] = -1;
  ++sh.stage[stage].loads;
  sh.stage[stage].copy_bytes = bytes;
#endif
  steps::ptx::bulk_load(sm.in[stage], p.x + static_cast<std::size_t>(c) * kChunk, static_cast<std::uint32_t>(bytes),
                        &sm.full[stage]);
}

/// Consumers (all 128 threads): out[stage] = BF16 of in[stage] times its
/// scales, for chunk c. Ordinary shared-memory loads and stores: the
/// "generic proxy".
__device__ __forceinline__ void convert(const Params& p, int stage, int c) {
  Shared& sm = shared();
  check_stage(kFull, stage);
  const int t = static_cast<int>(threadIdx.x) - 32; // 0 .. kConsumers - 1
#if STEPS_RING_CHECKED
  Shadow& sh = sm.shadow;
  const int it = iteration() - 1;
  if (sh.waited[threadIdx.x] != stage)
    report_and_trap(Finding::convert_without_wait, kFull, stage, -1, it < 0 ? 0 : it / kStages, stage, -1,
                    sh.waited[threadIdx.x], stage);
  sh.waited[threadIdx.x] = -1;
  // Dawdle between reading and converting on some chunks: a stage reused
  // too early is then overwritten while it is still being read.
  const bool slow = p.slow && c % 3 == 1;
#endif
  const int count = chunk_elements(p, c);
  const float* scales = p.scales + static_cast<std::size_t>(c) * (kChunk / kScaleBlock);
  for (int i = 4 * t; i < count; i += 4 * kConsumers) { // 4 codes: one 32-bit load, one 64-bit store
    const std::uint32_t codes = *reinterpret_cast<const std::uint32_t*>(&sm.in[stage][i]);
#if STEPS_RING_CHECKED
    if (slow && i == 4 * t) __nanosleep(2000);
#endif
    const float s = __ldg(&scales[i / kScaleBlock]);
    const __half2_raw lo = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(codes & 0xFFFF), __NV_E4M3);
    const __half2_raw hi = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(codes >> 16), __NV_E4M3);
    const float2 a = __half22float2(__half2(lo)), b = __half22float2(__half2(hi));
    const __nv_bfloat162 ya = __floats2bfloat162_rn(__fmul_rn(a.x, s), __fmul_rn(a.y, s));
    const __nv_bfloat162 yb = __floats2bfloat162_rn(__fmul_rn(b.x, s), __fmul_rn(b.y, s));
    uint2 v;
    v.x = *reinterpret_cast<const std::uint32_t*>(&ya);
    v.y = *reinterpret_cast<const std::uint32_t*>(&yb);
    *reinterpret_cast<uint2*>(&sm.out[stage][2 * i]) = v;
  }
#if STEPS_RING_CHECKED
  sh.unfenced[threadIdx.x] = stage;
#endif
}

/// Orders this thread's earlier shared-memory writes (generic proxy) before
/// later accesses by the copy engine (async proxy): fence.proxy.async.
__device__ __forceinline__ void fence_proxy_async() {
  steps::ptx::fence_proxy_async();
#if STEPS_RING_CHECKED
  // Counted per stage (not read from the other threads' entries): the
  // storer must not read what a thread writes on its way to the next chunk.
  Shadow& sh = shared().shadow;
  const int written = sh.unfenced[threadIdx.x];
  if (written >= 0) {
    atomicAdd(&sh.stage[written].fenced, 1);
    sh.unfenced[threadIdx.x] = -1;
  }
#endif
}

/// The consumers' barrier (named barrier 1, the 128 consumer threads; the
/// producer warp is not held up). The non-.aligned form: a thread may arrive
/// here while others of its warp are still elsewhere (the storer).
/// Checked builds: a thread arriving with writes of out[] it has not fenced
/// yet is refused here, whatever the timing: the storer may issue the copy
/// as soon as the barrier opens, and a fence after it comes too late.
__device__ __forceinline__ void consumer_sync() {
#if STEPS_RING_CHECKED
  {
    const int written = shared().shadow.unfenced[threadIdx.x];
    if (written >= 0) {
      const int it = iteration() - 1;
      report_and_trap(Finding::barrier_before_fence, kFull, written, -1, it < 0 ? 0 : it / kStages, written, -1, 0, 0);
    }
  }
#endif
  asm volatile("barrier.sync 1, %0;\n" ::"r"(kConsumers) : "memory");
}

/// One consumer thread: starts the copy of out[stage] to chunk c of y
/// (cp.async.bulk shared -> global) and closes it into a bulk group. The
/// copy READS shared memory for a while after this returns.
__device__ __forceinline__ void store(const Params& p, int stage, int c) {
  Shared& sm = shared();
  check_stage(kFull, stage);
#if STEPS_RING_CHECKED
  Shadow& sh = sm.shadow;
  const int it = iteration() - 1;
  // Every consumer thread fences its writes once per use of the stage; the
  // next use cannot start before this store's release.
  const int fenced = atomicAdd(&sh.stage[stage].fenced, 0) - kConsumers * (it / kStages);
  if (fenced != kConsumers)
    report_and_trap(Finding::store_before_fence, kFull, stage, -1, it / kStages, it % kStages, -1, fenced, kConsumers);
  sh.unread[threadIdx.x] = 1;
#endif
  std::uint16_t* dst = p.y + static_cast<std::size_t>(c) * kChunk;
  const int bytes = 2 * chunk_elements(p, c);
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst),
               "r"(steps::ptx::smem_addr(sm.out[stage])), "r"(bytes)
               : "memory");
  steps::ptx::bulk_commit();
}

/// Waits until this thread's bulk stores have finished READING shared memory
/// (cp.async.bulk.wait_group.read 0); their writes to global memory may
/// still be on their way, which is fine: the stage may be refilled now.
__device__ __forceinline__ void wait_store_read() {
  steps::ptx::bulk_wait_read<0>();
#if STEPS_RING_CHECKED
  shared().shadow.unread[threadIdx.x] = 0;
#endif
}

// ---------------------------------------------- the kernel's first and last steps

/// Every thread, first: the watchdog's settings and the shadow; ends with
/// __syncthreads(). Returns the block's shared memory.
__device__ __forceinline__ Shared& begin(const Params& p) {
  Shared& sm = shared();
  if (threadIdx.x == 0) {
    sm.report = p.report;
    sm.timeout_ns = p.timeout_ns;
  }
#if STEPS_RING_CHECKED
  Shadow& sh = sm.shadow;
  sh.waits[threadIdx.x] = 0;
  sh.waited[threadIdx.x] = -1;
  sh.unfenced[threadIdx.x] = -1;
  sh.unread[threadIdx.x] = 0;
  if (threadIdx.x == 0) sh.init_fenced = 0;
  if (threadIdx.x < kStages) sh.stage[threadIdx.x] = StageShadow{};
  if (threadIdx.x <= kConsumerWarps) sh.warp[threadIdx.x] = WarpWait{0, kNoBarrier, -1, -1, -1, -1};
#endif
  __syncthreads();
  return sm;
}

/// Every thread, last. Checked builds: each use of a stage must have
/// completed exactly one phase of full[s] and of empty[s] (the arrivals per
/// use equal the count the barrier was initialised with).
__device__ __forceinline__ void end() {
  __syncthreads();
#if STEPS_RING_CHECKED
  const Shadow& sh = shared().shadow;
  if (threadIdx.x == 0)
    for (int s = 0; s < kStages; ++s) {
      const StageShadow& st = sh.stage[s];
      if (st.loads == 0) continue;
      if (st.full_arrivals != st.full_init * st.loads)
        report_and_trap(Finding::arrivals_mismatch, kFull, s, -1, -1, s, -1, st.full_arrivals,
                        static_cast<long long>(st.full_init) * st.loads);
      if (st.empty_arrivals != st.empty_init * st.loads)
        report_and_trap(Finding::arrivals_mismatch, kEmpty, s, -1, -1, s, -1, st.empty_arrivals,
                        static_cast<long long>(st.empty_init) * st.loads);
    }
#endif
}

// ------------------------------------------------------------------ launch

inline int blocks_for_chunks(long long chunks) {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  long long grid = std::min<long long>(sms, chunks);
  if (g_watch.max_blocks > 0) grid = std::min<long long>(grid, g_watch.max_blocks);
  return static_cast<int>(grid);
}

/// Checks the arguments and launches `kernel` on one block per SM (or fewer).
template <class Kernel>
void launch(Kernel kernel, const __nv_fp8_e4m3* x, const float* scales, __nv_bfloat16* y, long long n,
            cudaStream_t stream) {
  if (n < 0 || n % 16 != 0 || n > kMaxN)
    throw std::invalid_argument("dequantize: n must be a multiple of 16 in [0, 2^40] (got " + std::to_string(n) + ")");
  if (n == 0) return;
  if (reinterpret_cast<std::uintptr_t>(x) % 16 != 0 || reinterpret_cast<std::uintptr_t>(y) % 16 != 0)
    throw std::invalid_argument("dequantize: x and y must be 16-byte aligned (bulk copies)");
  Params p{};
  p.x = reinterpret_cast<const std::uint8_t*>(x);
  p.scales = scales;
  p.y = reinterpret_cast<std::uint16_t*>(y);
  p.n = n;
  p.chunks = static_cast<int>((n + kChunk - 1) / kChunk);
  p.report = nullptr;
  if (g_watch.report != nullptr)
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&p.report), g_watch.report, 0));
  p.timeout_ns = static_cast<unsigned long long>(g_watch.timeout_s * 1e9);
  p.slow = g_watch.slow_consumers ? 1 : 0;
  void* claimed = nullptr;
  CUDA_CHECK(cudaGetSymbolAddress(&claimed, g_report_claimed));
  CUDA_CHECK(cudaMemsetAsync(claimed, 0, sizeof(int), stream));
  const int smem = static_cast<int>(sizeof(Shared));
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  kernel<<<blocks_for_chunks(p.chunks), kThreads, smem, stream>>>(p);
  CUDA_CHECK_LAUNCH();
}

} // namespace ex10::ring

// The host functions of ring.hpp that are not yours (this header is included
// by ring.cu only: one definition each).
namespace ex10::ring {
int blocks_for(long long n) { return n <= 0 ? 0 : blocks_for_chunks((n + kChunk - 1) / kChunk); }
void set_watch(const Watch& watch) { g_watch = watch; }
} // namespace ex10::ring
