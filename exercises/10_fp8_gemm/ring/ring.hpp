/// @file ring.hpp
/// @brief Exercise 10, part 2 (ID ring): the function ring.cu implements, and
///        the report its watchdog and its protocol checks leave behind.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

namespace ex10::ring {

/// Elements per chunk: one TMA copy of 8 KB of E4M3 in, 16 KB of BF16 out.
constexpr int kChunk = 8192;
/// Elements per scale.
constexpr int kScaleBlock = 128;
/// Stages of the ring (each holds one chunk in and its chunk out: 24 KB).
constexpr int kStages = 4;
/// Consumer warps per block; warp 0 is the producer.
constexpr int kConsumerWarps = 4;
constexpr int kThreads = 32 * (1 + kConsumerWarps);
/// The largest n dequantize accepts (chunk indices fit in an int).
constexpr long long kMaxN = 1LL << 40;

/// y[i] = bf16(float(x[i]) * scales[i / 128]) for i in [0, n), in `stream`,
/// without waiting. n is a multiple of 16 in [0, kMaxN]; x and y 16-byte
/// aligned. Throws std::invalid_argument otherwise.
void dequantize(const __nv_fp8_e4m3* x, const float* scales, __nv_bfloat16* y, long long n, cudaStream_t stream);

/// The number of blocks dequantize launches for n elements (one per chunk,
/// at most one per SM, at most Watch::max_blocks).
int blocks_for(long long n);

/// What a block of the ring was doing when it stopped itself (the event) and
/// the state of its ring then. Written by the GPU into mapped host memory
/// just before __trap(), read by the grader after the launch failed.
enum class Finding : int {
  none = 0,
  deadlock,               ///< a wait on full[] or empty[] took longer than Watch::timeout_s
  bad_init_count,         ///< a barrier initialised with fewer than 1 arrival per phase
  stage_out_of_ring,      ///< a stage index outside 0 .. kStages - 1
  wrong_stage,            ///< the i-th chunk of a role is not in stage i % kStages
  passed_wrong_parity,    ///< a wait returned for a parity that is not its lap's
  load_without_wait,      ///< the producer loaded a stage without waiting on empty[] first
  expect_tx_mismatch,     ///< full[] expects other bytes than the copy brings
  convert_without_wait,   ///< a consumer read a stage without waiting on full[] first
  store_before_fence,     ///< the bulk store was issued before every writer's fence.proxy.async
  release_before_read,    ///< arrive on empty[] while the thread's bulk store may still read the stage
  arrivals_mismatch,      ///< arrivals per use of a stage differ from the barrier's count
  barrier_before_fence,   ///< a consumer reached the barrier before fence.proxy.async after its writes of out[]
  init_not_fenced,        ///< a barrier used with no fence.mbarrier_init after the barriers' init
};

/// Which barrier: full[s] (data arrived) or empty[s] (stage released).
enum Barrier : int { kFull = 0, kEmpty = 1, kNoBarrier = -1 };

/// The shadow of one stage (checked builds only; zeros otherwise).
struct StageShadow {
  int full_init, empty_init;       ///< arrivals per phase given at init (0: not initialised)
  int loads;                       ///< chunks the producer has started copying into the stage
  int full_arrivals, empty_arrivals; ///< arrive calls on full[s] (expect_tx ones included) and on empty[s]
  int expect_bytes, copy_bytes;    ///< the last arrive_expect_tx on full[s]; the last copy's size
  int fenced;                      ///< consumer threads that fenced their writes of the stage (all uses)
};

/// What one warp was waiting for (checked builds only).
struct WarpWait {
  int waiting;                     ///< 1 while inside a wait
  int barrier, stage, parity;      ///< the wait: barrier, stage, parity asked for
  int lap, expected_parity;        ///< the warp's lap around the ring, and its parity
};

struct Report {
  int event;                       ///< a Finding; written last
  int checked;                     ///< 1: a checked build (the shadow below is filled)
  int block, warp, lane, grid;
  int barrier, stage, parity;      ///< the barrier and stage of the event, the parity used
  int lap, expected_stage, expected_parity, chunk;
  long long value, expected;       ///< numbers of the event (arrivals, bytes, warp...)
  double timeout_s;
  StageShadow stages[kStages];
  WarpWait warps[1 + kConsumerWarps];
};

/// The grader's settings for the next launches.
struct Watch {
  Report* report = nullptr;        ///< mapped host memory (cudaHostAllocMapped), or nullptr
  double timeout_s = 2.0;          ///< a wait longer than this is a deadlock: report, then __trap()
  int max_blocks = 0;              ///< > 0: at most this many blocks (more laps around the ring)
  bool slow_consumers = true;      ///< checked builds: consumers dawdle on some chunks
};
void set_watch(const Watch& watch);

} // namespace ex10::ring
