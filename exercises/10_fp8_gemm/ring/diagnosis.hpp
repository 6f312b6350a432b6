/// @file diagnosis.hpp
/// @brief Exercise 10, part 2 (ring): the grader's words for a Report, the
///        note a block of the ring leaves in mapped host memory before it
///        stops the kernel (a deadlock ended by the watchdog, or a step of
///        the protocol taken out of turn). Host code only, no GPU: tested by
///        test_ring_diagnosis.cpp.
#pragma once

#include "ring.hpp"

#include <sstream>
#include <string>

namespace ex10::ring {

inline std::string barrier_name(int barrier, int stage) {
  return std::string(barrier == kFull ? "full" : barrier == kEmpty ? "empty" : "?") + "[" + std::to_string(stage) +
         "]";
}

inline std::string who(const Report& r) {
  return "block " + std::to_string(r.block) + " warp " + std::to_string(r.warp) +
         (r.warp == 0 ? " (producer)" : " (consumer)");
}

/// Why a wait with the wrong parity is wrong, for the barrier and lap it was on.
inline std::string parity_hint(int barrier, int lap, int parity, int expected) {
  std::ostringstream os;
  if (barrier == kEmpty && lap == 0 && parity == 0)
    os << "on its first lap the producer must not wait: nobody has released a stage yet, and phase 0 of "
          "empty[] completes only when the consumers release it the first time. Waiting for parity 1 (the phase "
          "\"before\" phase 0, which counts as complete) passes at once: wait for parity phase ^ 1.";
  else if (barrier == kFull && lap == 0 && parity == 1)
    os << "parity 1 on the first lap asks about the phase \"before\" phase 0: on a fresh barrier that wait "
          "returns at once, and the consumers read the stage before its data arrived (had the copy landed "
          "already, it would wait instead for a second copy that never comes). Consumers wait for the parity "
          "of their lap: ring.phase.";
  else if (lap >= 1 && parity == (((lap - 1) & 1) ^ (barrier == kEmpty ? 1 : 0)))
    os << "lap " << lap << " waited with the parity of lap " << lap - 1
       << ", a phase that completed long ago, so the wait passed at once. The parity must flip each time the "
          "stage index wraps to 0 (Ring::advance: phase ^= 1).";
  else
    os << "on lap L a consumer waits on full[s] for parity L % 2 (ring.phase), the producer on empty[s] for "
          "the other one (ring.phase ^ 1): it waits for the release of the previous lap.";
  (void)expected;
  return os.str();
}

/// What the report says, in a learner's words: one line of what happened,
/// then "  Hint: ..." lines.
inline std::string explain(const Report& r) {
  std::ostringstream os;
  const auto ev = static_cast<Finding>(r.event);
  const std::string bar = barrier_name(r.barrier, r.stage);
  switch (ev) {
  case Finding::deadlock: {
    os << "deadlock: " << who(r) << " waited more than " << r.timeout_s << " s on " << bar << " for parity "
       << r.parity;
    if (r.checked) os << " (lap " << r.lap << " around the ring, chunk " << r.chunk << ")";
    os << "; the watchdog stopped the kernel.\n  Hint: ";
    if (!r.checked) {
      os << "a wait for a phase that never completes: a wrong parity, a barrier count that the arrivals never "
            "reach, or bytes announced that never come.";
      break;
    }
    // The most telling cause first: a warp waiting with a parity that is not its lap's.
    for (int w = 0; w <= kConsumerWarps; ++w) {
      const WarpWait& ww = r.warps[w];
      if (ww.waiting && ww.parity != ww.expected_parity) {
        os << "warp " << w << (w == 0 ? " (producer)" : " (consumer)") << " waits on "
           << barrier_name(ww.barrier, ww.stage) << " for parity " << ww.parity << " on lap " << ww.lap << ": "
           << parity_hint(ww.barrier, ww.lap, ww.parity, ww.expected_parity);
        return os.str();
      }
    }
    for (int s = 0; s < kStages; ++s) {
      const StageShadow& st = r.stages[s];
      if (st.full_init != 1) {
        os << "full[" << s << "] was initialised for " << st.full_init
           << " arrivals per phase, but one use of a stage brings exactly one: the producer's arrive_expect_tx "
              "(the copy's bytes count down separately). The phase never completes.";
        return os.str();
      }
    }
    for (int s = 0; s < kStages; ++s) {
      const StageShadow& st = r.stages[s];
      if (st.loads > 0 && st.expect_bytes != st.copy_bytes) {
        os << "full[" << s << "] expects " << st.expect_bytes << " bytes but its copy brings " << st.copy_bytes
           << ": the phase completes only when exactly the announced bytes have landed.";
        return os.str();
      }
    }
    // The producer waits on empty[s] for the release of the previous lap.
    const WarpWait& pw = r.warps[0];
    if (pw.waiting && pw.barrier == kEmpty && pw.stage >= 0 && pw.stage < kStages) {
      const StageShadow& st = r.stages[pw.stage];
      const int uses = pw.lap; // laps 0 .. lap - 1 have used the stage
      if (st.empty_arrivals == 0)
        os << "no consumer ever released a stage: after a stage's chunk is converted and stored, the consumers "
              "arrive on empty[s] (that is what the producer waits for before it refills it).";
      else if (uses > 0 && st.empty_arrivals < uses * st.empty_init)
        os << "empty[" << pw.stage << "] was initialised for " << st.empty_init << " arrivals per phase, but "
           << uses << " use(s) of the stage brought " << st.empty_arrivals
           << " arrivals: the count must equal the arrivals of one use (one per consumer warp that arrives).";
      else
        os << "the producer waits for the consumers to release stage " << pw.stage
           << ", and they never finish: are they waiting on full[] for a chunk that was never loaded?";
      return os.str();
    }
    os << "a wait for a phase that never completes: a wrong parity, a barrier count that the arrivals never "
          "reach, or bytes announced that never come.";
    break;
  }
  case Finding::bad_init_count:
    os << "ring protocol: " << bar << " was initialised for " << r.value
       << " arrivals per phase.\n  Hint: a count is how many arrive calls complete one phase (at least 1): "
          "full[s] gets the producer's one arrive_expect_tx per chunk, empty[s] one arrival per consumer warp "
          "that releases the stage (TODO 1).";
    break;
  case Finding::stage_out_of_ring:
    os << "ring protocol: " << who(r) << " used stage " << r.stage << " (" << bar << "), outside the ring (0 .. "
       << kStages - 1 << ").\n  Hint: Ring::advance must wrap the stage back to 0 after stage " << kStages - 1
       << " (and flip the phase there).";
    break;
  case Finding::wrong_stage:
    os << "ring protocol: " << who(r) << " waited on " << bar << " for its chunk number "
       << r.lap * kStages + r.expected_stage << " of this block, which lives in stage " << r.expected_stage
       << ".\n  Hint: every role walks the ring in the same order, 0, 1, ..., " << kStages - 1
       << ", 0, ...: wait on the stage you are about to use (ring.stage, which Ring::advance moves on after "
          "each chunk). A wait on another stage says nothing about this one: the producer would overwrite a "
          "stage still in use.";
    break;
  case Finding::passed_wrong_parity:
    os << "ring protocol: " << who(r) << " got through its wait on " << bar << " for parity " << r.parity
       << " on lap " << r.lap << " (chunk " << r.chunk << "), but lap " << r.lap << " needs parity "
       << r.expected_parity << (r.barrier == kFull ? ": it read the stage before this lap's data had arrived."
                                                   : ": it refilled the stage before the consumers released it.")
       << "\n  Hint: " << parity_hint(r.barrier, r.lap, r.parity, r.expected_parity);
    break;
  case Finding::load_without_wait:
    os << "ring protocol: " << who(r) << " started copying a chunk into stage " << r.stage
       << " without waiting on empty[" << r.stage << "] first"
       << (r.value >= 0 ? " (its last wait was on empty[" + std::to_string(r.value) + "])" : std::string())
       << ": a stage reused before it was released.\n  Hint: before each load, wait on empty[ring.stage]: the "
          "consumers may still be reading the chunk of the previous lap.";
    break;
  case Finding::expect_tx_mismatch:
    os << "ring protocol: " << who(r) << " announced " << r.value << " bytes on full[" << r.stage
       << "] (arrive_expect_tx), but the copy of this chunk brings " << r.expected << " bytes.\n  Hint: the phase of "
       << "full[] completes when exactly the announced bytes have landed: announce more and the consumers wait "
          "forever, fewer and they may read a half-copied stage. The last chunk is short: announce "
          "chunk_elements(p, c) bytes.";
    break;
  case Finding::convert_without_wait:
    os << "ring protocol: " << who(r) << " read stage " << r.stage << " without waiting on full[" << r.stage
       << "] first.\n  Hint: the chunk is only in shared memory once full[stage] has completed this lap's phase.";
    break;
  case Finding::store_before_fence:
    os << "ring protocol: " << who(r) << ": bulk store of stage " << r.stage
       << " issued before fence.proxy.async after the shared-memory writes (" << r.value << " of the "
       << r.expected << " consumer threads had fenced theirs).\n  Hint: the copy engine reads shared memory "
          "through the async proxy, which does not see ordinary stores in order: every thread that wrote the "
          "stage calls fence_proxy_async() after its writes and before the barrier that precedes the store.";
    break;
  case Finding::release_before_read:
    os << "ring protocol: " << who(r) << " released stage " << r.stage << " (arrive on empty[" << r.stage
       << "]) while its bulk store of that stage may still be reading shared memory.\n  Hint: "
          "cp.async.bulk.wait_group.read 0 (wait_store_read()) before the arrive: otherwise the producer may "
          "refill the stage, and the consumers overwrite out[], under the store.";
    break;
  case Finding::arrivals_mismatch: {
    const int uses = r.stage >= 0 && r.stage < kStages ? r.stages[r.stage].loads : 0;
    os << "ring protocol: " << bar << " was initialised for " << (uses > 0 ? r.expected / uses : 0)
       << " arrivals per phase, but its " << uses << " use(s) brought " << r.value
       << " arrivals.\n  Hint: each use of a stage must complete exactly one phase of each of its barriers. ";
    if (r.barrier == kEmpty)
      os << (r.value > r.expected
                 ? "With more arrivals than the count, a phase completes before every consumer has released the "
                   "stage: the producer may overwrite a chunk that is still being read. "
                 : "With fewer, the producer's next wait on the stage never returns. ")
         << "The count of empty[s] is the number of arrive calls per use: one per consumer warp if lane 0 of "
            "each warp arrives.";
    else
      os << "full[s] gets one arrival per use: the producer's arrive_expect_tx.";
    break;
  }
  case Finding::barrier_before_fence:
    os << "ring protocol: " << who(r) << " reached the consumers' barrier with its writes of out[" << r.stage
       << "] not yet fenced (lap " << r.lap << ").\n  Hint: fence_proxy_async() goes between a thread's writes "
          "and the barrier, in every consumer thread: the storer issues the bulk store as soon as the barrier "
          "opens, and the copy engine (the async proxy) sees only the writes fenced before that. A fence after "
          "the barrier comes too late for the store, however fast it runs. (A check of the order of the steps, "
          "made by the given wrappers on every run: the timing rarely shows this one in the results.)";
    break;
  case Finding::init_not_fenced:
    os << "ring protocol: " << who(r) << " used " << bar
       << " with no fence.mbarrier_init after the barriers were initialised.\n  Hint: after the init() calls, "
          "thread 0 calls fence_barrier_init() (fence.mbarrier_init.release.cluster), then everyone meets at "
          "__syncthreads(): the PTX ISA's fence for mbarrier.init, which makes the initialised barriers visible "
          "to the other threads and to the copy engine that completes its copies on them. (A check of the order "
          "of the steps, made by the given wrappers: in this one-block launch the results are likely right "
          "without it, since the __syncthreads() also orders the init before the other threads; it is not "
          "enough once the barriers are used across a cluster.)";
    break;
  case Finding::none:
  default:
    os << "the kernel stopped (event " << r.event << ") without a report that the grader understands.";
    break;
  }
  return os.str();
}

} // namespace ex10::ring
