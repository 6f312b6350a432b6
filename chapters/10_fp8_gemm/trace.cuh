// Chapter 10: a record of what v4's warp roles do, and when (the lesson's
// measured timeline; the program warp_roles.cu writes it).
//
// One thread per role records: the producer's working thread, and the first
// thread of each math warpgroup. An event is one 64-bit word, the SM's cycle
// counter (clock64) shifted left by 4 with the event's number below it, in
// the role's own slice of a global buffer:
//
//   buffer: [block 0: producer | math 1 | math 2][block 1: ...] ...
//           each slice `capacity` events; later events are dropped
//
// The three roles of a block share their SM's counter, so their events line
// up in time. Untraced kernels get NoTrace, whose calls compile to nothing:
// the chapter's rows run the same machine code as before this file existed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ch10 {

/// What a role did just now. The producer: begins waiting for a free stage
/// (free_wait), has it and issues the stage's copies (free). A math
/// warpgroup: begins waiting for a stage's data (data_wait), has it and
/// issues its wgmma (data); begins waiting for its oldest wgmma batch
/// (mma_wait), has it (mma_done), has promoted it (promoted); begins and ends
/// storing a tile (store, stored).
enum class TraceEvent : std::uint32_t {
  free_wait = 1, free, data_wait, data, mma_wait, mma_done, promoted, store, stored
};

/// The event names, indexed by TraceEvent (0 unused): the JSON and the figure use them.
inline const char* event_name(std::uint32_t e) {
  constexpr const char* kNames[] = {"?",    "free_wait", "free",     "data_wait", "data",
                                    "mma_wait", "mma_done", "promoted", "store",     "stored"};
  return e < sizeof(kNames) / sizeof(kNames[0]) ? kNames[e] : "?";
}

/// Where a traced launch writes: `blocks` blocks x 3 roles x `capacity` events.
struct TraceBuffer {
  unsigned long long* events = nullptr;
  int capacity = 0;
  int blocks = 0;
};

/// The untraced kernels' recorder: nothing.
struct NoTrace {
  __device__ __forceinline__ void operator()(TraceEvent) const {}
};

/// One role's recorder in a traced kernel (null `out`: this thread does not record).
struct TraceLane {
  unsigned long long* out = nullptr;
  int count = 0, capacity = 0;
  __device__ __forceinline__ void operator()(TraceEvent e) {
    if (out != nullptr && count < capacity)
      out[count++] = (static_cast<unsigned long long>(clock64()) << 4) | static_cast<unsigned long long>(e);
  }
};

/// The recorder of this thread: TraceLane when `kOn` and the thread records
/// for `role` (0 producer, 1 and 2 math) of a block below buf.blocks,
/// NoTrace when !kOn.
template <bool kOn>
__device__ __forceinline__ auto make_tracer(const TraceBuffer& buf, int role, bool records) {
  if constexpr (kOn) {
    TraceLane t;
    if (records && static_cast<int>(blockIdx.x) < buf.blocks) {
      t.out = buf.events + (static_cast<std::size_t>(blockIdx.x) * 3 + role) * buf.capacity;
      t.capacity = buf.capacity;
    }
    return t;
  } else {
    (void)buf, (void)role, (void)records;
    return NoTrace{};
  }
}

} // namespace ch10
