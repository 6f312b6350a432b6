// Host test of the ring grader's diagnoses (diagnosis.hpp): reports made by
// hand the way the checked build writes them for each mutant of the
// solution, and the words the learner must then read. No GPU needed.
#include "diagnosis.hpp"

#include "steps/catch.hpp"

#include <initializer_list>
#include <string>

namespace {

using namespace ex10::ring;

/// A report made by hand: base(...), then the event's fields a group at a
/// time, as `base(Finding::deadlock).at(1, kFull, 0).waited(0, 0, 0)`. A
/// field no step sets stays as base() left it (0 unless set there).
struct Made {
  Report r;
  /// The warp that reported and the stage of its step.
  Made& at(int warp, int stage) {
    r.warp = warp;
    r.stage = stage;
    return *this;
  }
  /// ... and the barrier of that stage it used.
  Made& at(int warp, Barrier barrier, int stage) {
    r.barrier = barrier;
    return at(warp, stage);
  }
  /// A wait with `parity` on lap `lap`, whose own parity is `expected`.
  Made& waited(int parity, int lap, int expected) {
    r.parity = parity;
    r.lap = lap;
    r.expected_parity = expected;
    return *this;
  }
  /// The event's number (arrivals, bytes, threads) and the one it should have been.
  Made& counted(long long value, long long expected) {
    r.value = value;
    r.expected = expected;
    return *this;
  }
};

/// A checked report of the solution's barrier counts (1 and 4), stage 0
/// used `loads` times, no warp waiting.
Made base(Finding event, int loads = 1) {
  Report r{};
  r.event = static_cast<int>(event);
  r.checked = 1;
  r.timeout_s = 2;
  r.grid = 132;
  for (int s = 0; s < kStages; ++s) {
    r.stages[s].full_init = 1;
    r.stages[s].empty_init = kConsumerWarps;
  }
  r.stages[0].loads = loads;
  r.stages[0].full_arrivals = loads;
  r.stages[0].expect_bytes = r.stages[0].copy_bytes = kChunk;
  for (auto& w : r.warps) w = WarpWait{0, kNoBarrier, -1, -1, -1, -1};
  return Made{r};
}

/// The learner reads every one of `parts` in explain(r).
void says(const Report& r, std::initializer_list<const char*> parts) {
  const std::string m = explain(r);
  INFO(m);
  for (const char* part : parts) {
    CAPTURE(part);
    CHECK(m.find(part) != std::string::npos);
  }
}

} // namespace

TEST_CASE("deadlock: the producer's first wait with parity 0 (producer_parity_flipped)", "[ring]") {
  // A consumer reported first: the diagnosis must still find the producer's parity.
  Made c = base(Finding::deadlock, 0).at(1, kFull, 0).waited(0, 0, 0);
  c.r.warps[0] = WarpWait{1, kEmpty, 0, 0, 0, 1};
  c.r.warps[1] = WarpWait{1, kFull, 0, 0, 0, 0};
  says(c.r, {"deadlock: block 0 warp 1 (consumer) waited more than 2 s on full[0] for parity 0",
             "warp 0 (producer) waits on empty[0] for parity 0 on lap 0", "wait for parity phase ^ 1"});
}

TEST_CASE("deadlock: the consumers' first wait with parity 1 after the copy landed (consumer_parity_flipped)",
          "[ring]") {
  Made c = base(Finding::deadlock, 1).at(0, kEmpty, 0).waited(0, 1, 0);
  c.r.warps[0] = WarpWait{1, kEmpty, 0, 0, 1, 0};
  c.r.warps[2] = WarpWait{1, kFull, 0, 1, 0, 0};
  says(c.r, {"warp 2 (consumer) waits on full[0] for parity 1 on lap 0", "ring.phase"});
}

TEST_CASE("deadlock: empty[] expects one arrival too many (empty_count_too_large)", "[ring]") {
  Made c = base(Finding::deadlock, 1).at(0, kEmpty, 0).waited(0, 1, 0);
  c.r.stages[0].empty_init = kConsumerWarps + 1;
  c.r.stages[0].empty_arrivals = kConsumerWarps;
  c.r.warps[0] = WarpWait{1, kEmpty, 0, 0, 1, 0};
  says(c.r, {"empty[0] was initialised for 5 arrivals per phase, but 1 use(s) of the stage brought 4"});
}

TEST_CASE("deadlock: full[] expects one arrival per consumer warp (full_count_per_warp)", "[ring]") {
  Made c = base(Finding::deadlock, 1).at(2, kFull, 0).waited(0, 0, 0);
  for (auto& st : c.r.stages) st.full_init = kConsumerWarps;
  c.r.warps[2] = WarpWait{1, kFull, 0, 0, 0, 0};
  says(c.r, {"full[0] was initialised for 4 arrivals per phase", "arrive_expect_tx"});
}

TEST_CASE("deadlock: nobody releases a stage (the stub's TODO 7)", "[ring]") {
  Made c = base(Finding::deadlock, 1).at(0, kEmpty, 0);
  c.r.warps[0] = WarpWait{1, kEmpty, 0, 0, 1, 0};
  says(c.r, {"no consumer ever released a stage"});
}

TEST_CASE("deadlock in an unchecked build: the reporter only", "[ring]") {
  Made c{Report{}}; // an unchecked build fills no shadow: not base()
  c.r.event = static_cast<int>(Finding::deadlock);
  c.r.timeout_s = 2;
  says(c.at(0, kEmpty, 3).waited(1, 0, 0).r,
       {"deadlock: block 0 warp 0 (producer) waited more than 2 s on empty[3] for parity 1",
        "wrong parity"});
}

TEST_CASE("a wait passed with the parity of the wrong lap", "[ring]") {
  SECTION("consumer_parity_flipped: parity 1 on lap 0") {
    says(base(Finding::passed_wrong_parity).at(3, kFull, 0).waited(1, 0, 0).r,
         {"got through its wait on full[0] for parity 1 on lap 0",
          "read the stage before this lap's data had arrived", "ring.phase"});
  }
  SECTION("phase_never_flips: a consumer on lap 1 with parity 0") {
    says(base(Finding::passed_wrong_parity).at(1, kFull, 0).waited(0, 1, 1).r,
         {"lap 1 waited with the parity of lap 0", "phase ^= 1"});
  }
  SECTION("phase_never_flips: the producer on lap 1 with parity 1") {
    says(base(Finding::passed_wrong_parity).at(0, kEmpty, 0).waited(1, 1, 0).r,
         {"refilled the stage before the consumers released it", "lap 1 waited with the parity of lap 0"});
  }
}

TEST_CASE("protocol steps out of turn", "[ring]") {
  SECTION("stage_not_wrapping") {
    says(base(Finding::stage_out_of_ring).at(0, kFull, kStages).r,
         {"used stage 4 (full[4]), outside the ring (0 .. 3)", "wrap the stage back to 0"});
  }
  SECTION("empty_wait_wrong_stage") {
    Made c = base(Finding::wrong_stage).at(0, kEmpty, 2); // on lap 0
    c.r.expected_stage = 1;
    says(c.r, {"waited on empty[2] for its chunk number 1 of this block, which lives in stage 1"});
  }
  SECTION("no_empty_wait") {
    says(base(Finding::load_without_wait).at(0, 0).counted(-1, 0).r,
         {"without waiting on empty[0] first", "reused before it was released"});
  }
  SECTION("expect_tx_full_chunk") {
    says(base(Finding::expect_tx_mismatch).at(0, 0).counted(kChunk, 16).r,
         {"announced 8192 bytes on full[0] (arrive_expect_tx), but the copy of this chunk brings 16 bytes"});
  }
  SECTION("a store before every writer's fence (a writer that skipped the barrier)") {
    says(base(Finding::store_before_fence).at(1, 1).counted(0, 128).r,
         {"block 0 warp 1 (consumer): bulk store of stage 1 issued before fence.proxy.async",
          "(0 of the 128 consumer threads had fenced theirs)"});
  }
  SECTION("missing_wait_read") {
    says(base(Finding::release_before_read).at(1, 2).r,
         {"released stage 2 (arrive on empty[2]) while its bulk store", "wait_group.read 0"});
  }
  SECTION("fence_after_barrier, missing_fence: found at the barrier") {
    says(base(Finding::barrier_before_fence).at(3, kFull, 1).r,
         {"block 0 warp 3 (consumer) reached the consumers' barrier with its writes of out[1] not yet fenced",
          "between a thread's writes and the barrier", "A check of the order of the steps"});
  }
  SECTION("no_fence_after_init") {
    says(base(Finding::init_not_fenced).at(0, kEmpty, 0).r,
         {"block 0 warp 0 (producer) used empty[0] with no fence.mbarrier_init",
          "fence_barrier_init() (fence.mbarrier_init.release.cluster)", "A check of the order of the steps"});
  }
  SECTION("the stub: a barrier count of 0") {
    says(base(Finding::bad_init_count).at(0, kFull, 0).counted(0, 0).r,
         {"full[0] was initialised for 0 arrivals per phase"});
  }
}

TEST_CASE("arrivals per use differ from the count (found at the end of the kernel)", "[ring]") {
  SECTION("empty_count_too_small: 3 per phase, 4 per use") {
    Made c = base(Finding::arrivals_mismatch, 2).at(0, kEmpty, 0).counted(2 * kConsumerWarps, 2 * (kConsumerWarps - 1));
    c.r.stages[0].empty_init = kConsumerWarps - 1;
    says(c.r, {"empty[0] was initialised for 3 arrivals per phase, but its 2 use(s) brought 8 arrivals",
               "overwrite a chunk that is still being read"});
  }
  SECTION("arrive_every_thread: 128 per use") {
    says(base(Finding::arrivals_mismatch, 1).at(0, kEmpty, 0).counted(128, kConsumerWarps).r,
         {"initialised for 4 arrivals per phase, but its 1 use(s) brought 128 arrivals"});
  }
  SECTION("empty_count_too_large on a shape without a second lap") {
    Made c = base(Finding::arrivals_mismatch, 1).at(0, kEmpty, 0).counted(kConsumerWarps, kConsumerWarps + 1);
    c.r.stages[0].empty_init = kConsumerWarps + 1;
    says(c.r, {"initialised for 5 arrivals per phase, but its 1 use(s) brought 4 arrivals", "never returns"});
  }
}
