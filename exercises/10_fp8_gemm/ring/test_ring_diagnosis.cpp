// Host test of the ring grader's diagnoses (diagnosis.hpp): reports made by
// hand the way the checked build writes them for each mutant of the
// solution, and the words the learner must then read. No GPU needed.
#include "diagnosis.hpp"

#include "steps/catch.hpp"

#include <string>

namespace {

using namespace ex10::ring;

/// A checked report of the solution's barrier counts (1 and 4), stage 0
/// used `loads` times, no warp waiting.
Report base(Finding event, int loads = 1) {
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
  return r;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

} // namespace

TEST_CASE("deadlock: the producer's first wait with parity 0 (producer_parity_flipped)", "[ring]") {
  Report r = base(Finding::deadlock, 0);
  r.warp = 1; // a consumer reported first: the diagnosis must still find the producer's parity
  r.barrier = kFull;
  r.stage = 0;
  r.parity = 0;
  r.lap = 0;
  r.expected_parity = 0;
  r.warps[0] = WarpWait{1, kEmpty, 0, 0, 0, 1};
  r.warps[1] = WarpWait{1, kFull, 0, 0, 0, 0};
  const std::string m = explain(r);
  INFO(m);
  CHECK(has(m, "deadlock: block 0 warp 1 (consumer) waited more than 2 s on full[0] for parity 0"));
  CHECK(has(m, "warp 0 (producer) waits on empty[0] for parity 0 on lap 0"));
  CHECK(has(m, "wait for parity phase ^ 1"));
}

TEST_CASE("deadlock: the consumers' first wait with parity 1 after the copy landed (consumer_parity_flipped)",
          "[ring]") {
  Report r = base(Finding::deadlock, 1);
  r.warp = 0;
  r.barrier = kEmpty;
  r.parity = 0;
  r.lap = 1;
  r.expected_parity = 0;
  r.warps[0] = WarpWait{1, kEmpty, 0, 0, 1, 0};
  r.warps[2] = WarpWait{1, kFull, 0, 1, 0, 0};
  const std::string m = explain(r);
  INFO(m);
  CHECK(has(m, "warp 2 (consumer) waits on full[0] for parity 1 on lap 0"));
  CHECK(has(m, "ring.phase"));
}

TEST_CASE("deadlock: empty[] expects one arrival too many (empty_count_too_large)", "[ring]") {
  Report r = base(Finding::deadlock, 1);
  r.stages[0].empty_init = kConsumerWarps + 1;
  r.stages[0].empty_arrivals = kConsumerWarps;
  r.barrier = kEmpty;
  r.parity = 0;
  r.lap = 1;
  r.expected_parity = 0;
  r.warps[0] = WarpWait{1, kEmpty, 0, 0, 1, 0};
  const std::string m = explain(r);
  INFO(m);
  CHECK(has(m, "empty[0] was initialised for 5 arrivals per phase, but 1 use(s) of the stage brought 4"));
}

TEST_CASE("deadlock: full[] expects one arrival per consumer warp (full_count_per_warp)", "[ring]") {
  Report r = base(Finding::deadlock, 1);
  for (auto& st : r.stages) st.full_init = kConsumerWarps;
  r.warp = 2;
  r.barrier = kFull;
  r.parity = 0;
  r.lap = 0;
  r.expected_parity = 0;
  r.warps[2] = WarpWait{1, kFull, 0, 0, 0, 0};
  const std::string m = explain(r);
  INFO(m);
  CHECK(has(m, "full[0] was initialised for 4 arrivals per phase"));
  CHECK(has(m, "arrive_expect_tx"));
}

TEST_CASE("deadlock: nobody releases a stage (the stub's TODO 7)", "[ring]") {
  Report r = base(Finding::deadlock, 1);
  r.barrier = kEmpty;
  r.warps[0] = WarpWait{1, kEmpty, 0, 0, 1, 0};
  const std::string m = explain(r);
  INFO(m);
  CHECK(has(m, "no consumer ever released a stage"));
}

TEST_CASE("deadlock in an unchecked build: the reporter only", "[ring]") {
  Report r{};
  r.event = static_cast<int>(Finding::deadlock);
  r.timeout_s = 2;
  r.warp = 0;
  r.barrier = kEmpty;
  r.stage = 3;
  r.parity = 1;
  const std::string m = explain(r);
  INFO(m);
  CHECK(has(m, "deadlock: block 0 warp 0 (producer) waited more than 2 s on empty[3] for parity 1"));
  CHECK(has(m, "wrong parity"));
}

TEST_CASE("a wait passed with the parity of the wrong lap", "[ring]") {
  SECTION("consumer_parity_flipped: parity 1 on lap 0") {
    Report r = base(Finding::passed_wrong_parity);
    r.warp = 3;
    r.barrier = kFull;
    r.parity = 1;
    r.lap = 0;
    r.expected_parity = 0;
    const std::string m = explain(r);
    INFO(m);
    CHECK(has(m, "got through its wait on full[0] for parity 1 on lap 0"));
    CHECK(has(m, "read the stage before this lap's data had arrived"));
    CHECK(has(m, "ring.phase"));
  }
  SECTION("phase_never_flips: a consumer on lap 1 with parity 0") {
    Report r = base(Finding::passed_wrong_parity);
    r.warp = 1;
    r.barrier = kFull;
    r.parity = 0;
    r.lap = 1;
    r.expected_parity = 1;
    const std::string m = explain(r);
    INFO(m);
    CHECK(has(m, "lap 1 waited with the parity of lap 0"));
    CHECK(has(m, "phase ^= 1"));
  }
  SECTION("phase_never_flips: the producer on lap 1 with parity 1") {
    Report r = base(Finding::passed_wrong_parity);
    r.barrier = kEmpty;
    r.parity = 1;
    r.lap = 1;
    r.expected_parity = 0;
    const std::string m = explain(r);
    INFO(m);
    CHECK(has(m, "refilled the stage before the consumers released it"));
    CHECK(has(m, "lap 1 waited with the parity of lap 0"));
  }
}

TEST_CASE("protocol steps out of turn", "[ring]") {
  SECTION("stage_not_wrapping") {
    Report r = base(Finding::stage_out_of_ring);
    r.barrier = kFull;
    r.stage = kStages;
    const std::string m = explain(r);
    INFO(m);
    CHECK(has(m, "used stage 4 (full[4]), outside the ring (0 .. 3)"));
    CHECK(has(m, "wrap the stage back to 0"));
  }
  SECTION("empty_wait_wrong_stage") {
    Report r = base(Finding::wrong_stage);
    r.barrier = kEmpty;
    r.stage = 2;
    r.lap = 0;
    r.expected_stage = 1;
    const std::string m = explain(r);
    INFO(m);
    CHECK(has(m, "waited on empty[2] for its chunk number 1 of this block, which lives in stage 1"));
  }
  SECTION("no_empty_wait") {
    Report r = base(Finding::load_without_wait);
    r.stage = 0;
    r.value = -1;
    const std::string m = explain(r);
    INFO(m);
    CHECK(has(m, "without waiting on empty[0] first"));
    CHECK(has(m, "reused before it was released"));
  }
  SECTION("expect_tx_full_chunk") {
    Report r = base(Finding::expect_tx_mismatch);
    r.stage = 0;
    r.value = kChunk;
    r.expected = 16;
    const std::string m = explain(r);
    INFO(m);
    CHECK(has(m, "announced 8192 bytes on full[0] (arrive_expect_tx), but the copy of this chunk brings 16 bytes"));
  }
  SECTION("a store before every writer's fence (a writer that skipped the barrier)") {
    Report r = base(Finding::store_before_fence);
    r.warp = 1;
    r.stage = 1;
    r.value = 0;
    r.expected = 128;
    const std::string m = explain(r);
    INFO(m);
    CHECK(has(m, "block 0 warp 1 (consumer): bulk store of stage 1 issued before fence.proxy.async"));
    CHECK(has(m, "(0 of the 128 consumer threads had fenced theirs)"));
  }
  SECTION("missing_wait_read") {
    Report r = base(Finding::release_before_read);
    r.warp = 1;
    r.stage = 2;
    const std::string m = explain(r);
    INFO(m);
    CHECK(has(m, "released stage 2 (arrive on empty[2]) while its bulk store"));
    CHECK(has(m, "wait_group.read 0"));
  }
  SECTION("fence_after_barrier, missing_fence: found at the barrier") {
    Report r = base(Finding::barrier_before_fence);
    r.warp = 3;
    r.barrier = kFull;
    r.stage = 1;
    r.lap = 0;
    const std::string m = explain(r);
    INFO(m);
    CHECK(has(m, "block 0 warp 3 (consumer) reached the consumers' barrier with its writes of out[1] not yet fenced"));
    CHECK(has(m, "between a thread's writes and the barrier"));
    CHECK(has(m, "A check of the order of the steps"));
  }
  SECTION("no_fence_after_init") {
    Report r = base(Finding::init_not_fenced);
    r.warp = 0;
    r.barrier = kEmpty;
    r.stage = 0;
    const std::string m = explain(r);
    INFO(m);
    CHECK(has(m, "block 0 warp 0 (producer) used empty[0] with no fence.mbarrier_init"));
    CHECK(has(m, "fence_barrier_init() (fence.mbarrier_init.release.cluster)"));
    CHECK(has(m, "A check of the order of the steps"));
  }
  SECTION("the stub: a barrier count of 0") {
    Report r = base(Finding::bad_init_count);
    r.barrier = kFull;
    r.stage = 0;
    r.value = 0;
    const std::string m = explain(r);
    INFO(m);
    CHECK(has(m, "full[0] was initialised for 0 arrivals per phase"));
  }
}

TEST_CASE("arrivals per use differ from the count (found at the end of the kernel)", "[ring]") {
  SECTION("empty_count_too_small: 3 per phase, 4 per use") {
    Report r = base(Finding::arrivals_mismatch, 2);
    r.barrier = kEmpty;
    r.stage = 0;
    r.stages[0].empty_init = kConsumerWarps - 1;
    r.value = 2 * kConsumerWarps;
    r.expected = 2 * (kConsumerWarps - 1);
    const std::string m = explain(r);
    INFO(m);
    CHECK(has(m, "empty[0] was initialised for 3 arrivals per phase, but its 2 use(s) brought 8 arrivals"));
    CHECK(has(m, "overwrite a chunk that is still being read"));
  }
  SECTION("arrive_every_thread: 128 per use") {
    Report r = base(Finding::arrivals_mismatch, 1);
    r.barrier = kEmpty;
    r.stage = 0;
    r.value = 128;
    r.expected = kConsumerWarps;
    const std::string m = explain(r);
    INFO(m);
    CHECK(has(m, "initialised for 4 arrivals per phase, but its 1 use(s) brought 128 arrivals"));
  }
  SECTION("empty_count_too_large on a shape without a second lap") {
    Report r = base(Finding::arrivals_mismatch, 1);
    r.barrier = kEmpty;
    r.stage = 0;
    r.stages[0].empty_init = kConsumerWarps + 1;
    r.value = kConsumerWarps;
    r.expected = kConsumerWarps + 1;
    const std::string m = explain(r);
    INFO(m);
    CHECK(has(m, "initialised for 5 arrivals per phase, but its 1 use(s) brought 4 arrivals"));
    CHECK(has(m, "never returns"));
  }
}
