// Grader for exercise 09 (halo exchange). Built twice: against your
// exercises/ code (./tutorial grade 09) and against the solution (part of
// ./tutorial test).
//
// It runs on whatever GPUs are present: shape by shape, the slices are dealt
// round-robin to the GPUs (with one GPU, every slice lives on it, each with
// its own stream, so the indexing and the stream ordering are still graded;
// only copies between two GPUs are not, and the grader says so).
//
// Each shape runs three rounds. In round r, every slice's stream gets, in
// this order and without the host waiting:
//   [a gate, on slices i with i % 3 == r]   its owned cells written (round values)
//   its ghost cells poisoned (NaN)          YOUR exchange_halos
//   a snapshot of all its cells             its owned cells overwritten at once
// A gate (steps::grade::Gate) holds its stream until the grader has enqueued
// all of the above, so a copy that does not wait for its source (rule 1: a
// held source next to a running reader), a snapshot that does not wait for
// copies made elsewhere (rule 2: the copies stuck behind a third, held
// slice), and an overwrite that does not wait for its readers (rule 3: empty
// slices, n < slices, read from others that never wait for them) each land
// on a wrong value in one of the rounds, on every run, not by timing. The
// grader enqueues only its gates, copies and memsets.
#include "halo.hpp"

#include "steps/catch.hpp"
#include "steps/error.hpp"
#include "steps/grade.hpp"
#include "steps/guarded.hpp"
#include "steps/memory.hpp"
#include "steps/random.hpp"
#include "steps/run.hpp"
#include "steps/timing.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

using ex09::Boundary;

struct Shape {
  std::size_t n;
  int parts;
  std::size_t halo;
  Boundary boundary;
  std::string what;
};

const char* boundary_name(Boundary b) { return b == Boundary::fixed ? "fixed" : "periodic"; }

std::string name_of(const Shape& s) {
  std::ostringstream os;
  os << "n = " << s.n << ", " << s.parts << " slices, halo " << s.halo << ", " << boundary_name(s.boundary);
  if (!s.what.empty()) os << ": " << s.what;
  return os.str();
}

/// The fixed boundary value: not 0 (a ghost left at 0 shows), not in [-1, 1).
constexpr float kOutside = 7.25f;
/// The byte the grader overwrites owned cells with after your call in round
/// r: 0x41 + r; before the first round they hold 0x40 bytes (round -1).
int overwrite_byte(int round) { return 0x41 + round; }
float overwrite_value(int round) {
  const std::uint32_t b = static_cast<std::uint32_t>(overwrite_byte(round));
  const std::uint32_t bits = b | b << 8 | b << 16 | b << 24;
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

int gpu_count() {
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  return count;
}

/// Says once what one GPU cannot check.
void note_gpus() {
  static bool said = false;
  if (said) return;
  said = true;
  const int g = gpu_count();
  if (g < 2)
    std::cout << "note: 1 GPU: every slice lives on GPU 0 (each with its own stream). Your indexing and your "
                 "stream ordering are graded; copies between two GPUs (cudaMemcpyPeerAsync across devices, "
                 "events of one GPU waited for by another's stream) are NOT checked here: grade on 2 or more "
                 "GPUs for that.\n";
  else
    std::cout << "note: " << g << " GPUs: slices are dealt round-robin to GPUs 0.." << g - 1 << ".\n";
}

/// The expected value of the ghost at global position p, and where it comes from.
struct Want {
  float value;
  std::int64_t cell; ///< the global cell, or -1: the fixed boundary value
};

Want want_at(std::int64_t p, std::size_t n, Boundary b, const std::vector<float>& x) {
  const std::int64_t sn = static_cast<std::int64_t>(n);
  if (p >= 0 && p < sn) return {x[static_cast<std::size_t>(p)], p};
  if (b == Boundary::fixed) return {kOutside, -1};
  const std::int64_t q = ((p % sn) + sn) % sn;
  return {x[static_cast<std::size_t>(q)], q};
}

bool same(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// Why a ghost is wrong, in a learner's words.
std::string explain(const Shape& s, int round, std::int64_t p, const Want& want, float got,
                    const std::vector<float>& x, const std::vector<float>& previous) {
  std::ostringstream os;
  os << "expected " << steps::format_value(want.value);
  if (want.cell >= 0) os << " (global cell " << want.cell << ")";
  else os << " (the fixed boundary value, position " << p << " is outside [0, " << s.n << "))";
  os << ", got " << steps::format_value(got) << "\n  Hint: ";
  const std::int64_t sn = static_cast<std::int64_t>(s.n);
  if (std::isnan(got))
    return os.str() + "the ghost still holds the NaN the grader put there just before your call: either "
                      "nothing was copied there, or the copy had not finished when the slice's stream went on "
                      "(rule 2: the slice's later work must see its ghosts; if you copy in another stream, the "
                      "slice's stream must wait for an event recorded after the copy).";
  if (same(got, overwrite_value(round)))
    return os.str() + "this is the value the owner's stream wrote over its cells right AFTER your call: your "
                      "copy ran after the owner had already moved on (rule 3: before a slice's later work, its "
                      "stream must wait for the copies that read from it).";
  if (same(got, overwrite_value(round - 1)))
    return os.str() + "this is the value the owner's cells held BEFORE its stream wrote this round's values: "
                      "your copy did not wait for the work already enqueued in the owner's stream (rule 1: "
                      "record an event in the source's stream, make the copy wait for it).";
  if (want.cell >= 0 && !previous.empty() && same(got, previous[static_cast<std::size_t>(want.cell)]) &&
      !same(got, want.value))
    return os.str() + "this is last round's value of that cell: your copy did not wait for the owner's stream "
                      "(rule 1).";
  if (same(got, kOutside))
    return os.str() + "you wrote the fixed boundary value, but this position " +
           (p >= 0 && p < sn ? std::string("is inside the array") : std::string("wraps around (periodic)")) +
           ". Check the boundary mode and where the array really ends.";
  if (want.cell < 0) {
    const std::int64_t q = ((p % sn) + sn) % sn;
    if (same(got, x[static_cast<std::size_t>(q)]))
      return os.str() + "you wrapped around, but the boundary is FIXED: positions outside [0, n) hold the "
                        "boundary value.";
  }
  for (std::int64_t d : {-1, 1, -2, 2}) {
    const Want near = want_at(p + d, s.n, s.boundary, x);
    if (near.cell >= 0 && same(got, near.value))
      return os.str() + "that is the value of the position " + std::to_string(d) +
             " away: an off-by-one in where a ghost range starts (left: begin - halo; right: begin + count) or "
             "in where you read the source (its owned cells start at cells[halo]).";
  }
  if (s.boundary == Boundary::periodic && (p < 0 || p >= sn))
    return os.str() + "a wrapped position: cell p mod n, with a mathematical modulo (p may be negative, and off "
                      "by more than n when the halo is wider than the array).";
  if (static_cast<std::size_t>(s.parts) > 1 && s.halo > s.n / static_cast<std::size_t>(s.parts))
    return os.str() + "the halo is wider than a slice here: a ghost range may span several slices, not only the "
                      "next one.";
  return os.str() + "the value of some other cell: check which slice owns global cell " +
         std::to_string(want.cell) + " and the offset you read at in it.";
}

// split(n, parts) against the rule. "" when right.
std::string check_split(std::size_t n, int parts_wanted) {
  const std::vector<ex09::Part> parts = ex09::split(n, parts_wanted);
  const std::string call = "split(" + std::to_string(n) + ", " + std::to_string(parts_wanted) + ")";
  if (parts.size() != static_cast<std::size_t>(parts_wanted))
    return call + " returned " + std::to_string(parts.size()) +
           " parts\n  Hint: one part per slice, even when n < parts (empty parts).";
  std::size_t at = 0;
  for (int i = 0; i < parts_wanted; ++i) {
    const std::size_t p = static_cast<std::size_t>(parts_wanted);
    const std::size_t want = n / p + (static_cast<std::size_t>(i) < n % p ? 1 : 0);
    const ex09::Part& got = parts[static_cast<std::size_t>(i)];
    if (got.begin != at || got.count != want)
      return call + ": part " + std::to_string(i) + " is {begin " + std::to_string(got.begin) + ", count " +
             std::to_string(got.count) + "}, expected {begin " + std::to_string(at) + ", count " +
             std::to_string(want) + "}\n  Hint: n / parts cells each, and the first n % parts parts get one more; "
             "the parts follow each other without gaps and end at n (the last one too, and an empty one starts at n).";
    at += want;
  }
  return "";
}

// Runs one shape: split, then three rounds of exchange. Returns "" when right.
std::string run_shape(const Shape& s, std::uint64_t seed) {
  note_gpus();
  // split() first, against the rule.
  if (std::string bad = check_split(s.n, s.parts); !bad.empty()) return bad;
  const std::vector<ex09::Part> parts = ex09::split(s.n, s.parts);

  // The slices: dealt round-robin to the GPUs, each with its own stream.
  const int gpus = gpu_count();
  const std::size_t k = static_cast<std::size_t>(s.parts);
  std::vector<std::unique_ptr<steps::GuardedBuffer<float>>> cells(k);
  std::vector<std::unique_ptr<steps::Stream>> streams(k);
  std::vector<steps::PinnedBuffer<float>> snapshot(k);
  std::vector<ex09::Slice> slices(k);
  for (std::size_t i = 0; i < k; ++i) {
    const int device = static_cast<int>(i % static_cast<std::size_t>(gpus));
    steps::DeviceScope scope(device);
    const std::size_t total = 2 * s.halo + parts[i].count;
    cells[i] = std::make_unique<steps::GuardedBuffer<float>>(total);
    streams[i] = std::make_unique<steps::Stream>(cudaStreamNonBlocking);
    snapshot[i] = steps::PinnedBuffer<float>(total);
    slices[i] = {device, streams[i]->get(), cells[i]->data(), parts[i]};
    if (parts[i].count)
      CUDA_CHECK(cudaMemset(cells[i]->data() + s.halo, overwrite_byte(-1), parts[i].count * sizeof(float)));
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  // The round's values in pinned memory: an asynchronous copy from pageable
  // memory may block the host until the stream reaches it, which would hide
  // the ordering mistakes the pauses are there to show.
  steps::PinnedBuffer<float> pinned(s.n);
  std::vector<float> previous;
  for (int round = 0; round < 3; ++round) {
    const std::vector<float> x = steps::random_vector(s.n, seed + static_cast<std::uint64_t>(round));
    std::memcpy(pinned.data(), x.data(), s.n * sizeof(float));
    // Before your call: [a gate on every third slice], owned cells, NaN ghosts.
    steps::grade::Gate gate;
    for (std::size_t i = 0; i < k; ++i) {
      steps::DeviceScope scope(slices[i].device);
      const cudaStream_t st = slices[i].stream;
      if (i % 3 == static_cast<std::size_t>(round) && !steps::grade::under_sanitizer()) gate.hold(st);
      if (parts[i].count)
        CUDA_CHECK(cudaMemcpyAsync(slices[i].cells + s.halo, pinned.data() + parts[i].begin,
                                   parts[i].count * sizeof(float), cudaMemcpyHostToDevice, st));
      if (s.halo) {
        CUDA_CHECK(cudaMemsetAsync(slices[i].cells, 0xFF, s.halo * sizeof(float), st));
        CUDA_CHECK(cudaMemsetAsync(slices[i].cells + s.halo + parts[i].count, 0xFF, s.halo * sizeof(float), st));
      }
    }
    ex09::exchange_halos(slices, s.n, s.halo, s.boundary, kOutside);
    // After your call: a snapshot, then the owned cells overwritten at once.
    for (std::size_t i = 0; i < k; ++i) {
      steps::DeviceScope scope(slices[i].device);
      const cudaStream_t st = slices[i].stream;
      const std::size_t total = 2 * s.halo + parts[i].count;
      if (total)
        CUDA_CHECK(cudaMemcpyAsync(snapshot[i].data(), slices[i].cells, total * sizeof(float), cudaMemcpyDeviceToHost,
                                   st));
      if (parts[i].count)
        CUDA_CHECK(cudaMemsetAsync(slices[i].cells + s.halo, overwrite_byte(round), parts[i].count * sizeof(float),
                                   st));
    }
    gate.release();
    for (std::size_t i = 0; i < k; ++i) {
      steps::DeviceScope scope(slices[i].device);
      CUDA_CHECK(cudaDeviceSynchronize());
    }

    // Check every slice: guards, owned cells untouched, every ghost.
    for (std::size_t i = 0; i < k; ++i) {
      const std::string where = "round " + std::to_string(round + 1) + ", slice " + std::to_string(i) + " (GPU " +
                                std::to_string(slices[i].device) + ", owns [" + std::to_string(parts[i].begin) +
                                ", " + std::to_string(parts[i].begin + parts[i].count) + "))";
      if (const auto c = cells[i]->check_guards(); !c.ok)
        return where + ": you wrote outside its cells (" + std::to_string(2 * s.halo + parts[i].count) +
               " floats: halo + count + halo): " + c.describe();
      const float* snap = snapshot[i].data();
      for (std::size_t j = 0; j < parts[i].count; ++j)
        if (!same(snap[s.halo + j], x[parts[i].begin + j]))
          return where + ": owned cell " + std::to_string(parts[i].begin + j) + " changed: expected " +
                 steps::format_value(x[parts[i].begin + j]) + ", got " + steps::format_value(snap[s.halo + j]) +
                 "\n  Hint: the exchange writes ghost cells only; check the offsets you write at (ghosts: "
                 "cells[0, halo) and cells[halo + count, halo + count + halo)).";
      const std::int64_t begin = static_cast<std::int64_t>(parts[i].begin);
      const std::int64_t h = static_cast<std::int64_t>(s.halo);
      for (std::size_t j = 0; j < 2 * s.halo; ++j) {
        const bool left = j < s.halo;
        const std::int64_t p = left ? begin - h + static_cast<std::int64_t>(j)
                                    : begin + static_cast<std::int64_t>(parts[i].count + j - s.halo);
        const std::size_t offset = left ? j : parts[i].count + j;
        const Want want = want_at(p, s.n, s.boundary, x);
        const float got = snap[offset];
        if (!same(got, want.value))
          return where + ", " + (left ? "left" : "right") + " ghost " + std::to_string(left ? j : j - s.halo) +
                 " (global position " + std::to_string(p) + "): " + explain(s, round, p, want, got, x, previous);
      }
    }
    previous = x;
  }
  return "";
}

void grade(const std::vector<Shape>& shapes) { steps::grade::shapes(shapes, name_of, run_shape); }

} // namespace

// split() is graded on its own too, n = 0 included (every part empty, at 0).
TEST_CASE("split: parts of every size, n = 0 included", "[halo][split]") {
  struct Split {
    std::size_t n;
    int parts;
  };
  const std::vector<Split> cases{{0, 1}, {0, 3}, {1, 1}, {1, 4}, {3, 8}, {10, 4}, {12, 4}, {13, 6}, {1000003, 7},
                                 {(std::size_t{1} << 33) + 5, 3}};
  steps::grade::shapes(
      cases, [](const Split& c) { return "split(" + std::to_string(c.n) + ", " + std::to_string(c.parts) + ")"; },
      [](const Split& c, std::uint64_t) { return check_split(c.n, c.parts); });
}

TEST_CASE("halo exchange: tiny arrays and the ends", "[halo]") {
  grade({{1, 1, 1, Boundary::fixed, "one cell, one slice"},
         {1, 1, 1, Boundary::periodic, "one cell: both ghosts are the cell itself"},
         {1, 1, 3, Boundary::periodic, "one cell, halo 3: it wraps three times"},
         {1, 3, 1, Boundary::fixed, "n < slices: two empty slices"},
         {2, 5, 2, Boundary::periodic, "n < slices, periodic"},
         {3, 8, 2, Boundary::periodic, "n < slices: empty slices read, nobody reads them"},
         {5, 2, 1, Boundary::fixed, "n not divisible by the slices"},
         {5, 2, 1, Boundary::periodic, ""},
         {7, 3, 2, Boundary::fixed, ""},
         {7, 3, 2, Boundary::periodic, "the first slice's left ghosts come from the last slice"},
         {8, 4, 0, Boundary::periodic, "halo 0: nothing to do"}});
}

TEST_CASE("halo exchange: halos wider than a slice", "[halo]") {
  grade({{10, 4, 4, Boundary::fixed, "slices of 3, 3, 2, 2 and a halo of 4"},
         {10, 4, 4, Boundary::periodic, ""},
         {3, 2, 7, Boundary::periodic, "halo wider than the whole array"},
         {3, 2, 7, Boundary::fixed, "halo wider than the whole array"},
         {13, 6, 5, Boundary::periodic, "slices of 3 and 2, halo 5"},
         {64, 8, 1, Boundary::fixed, "8 slices"}});
}

TEST_CASE("halo exchange: larger arrays", "[halo]") {
  grade({{1000003, 4, 16, Boundary::fixed, "prime n"},
         {1000003, 7, 1000, Boundary::periodic, "prime n, 7 slices"},
         {65537, 3, 65537, Boundary::periodic, "halo = n"}});
}

TEST_CASE("halo exchange: many cells", "[halo][large]") {
  grade({{(std::size_t{1} << 24) + 3, 5, 4099, Boundary::periodic, ""},
         {(std::size_t{1} << 24) + 3, 8, 1, Boundary::fixed, ""}});
}

TEST_CASE("halo exchange speed", "[.speed]") {
  // 2^24 floats in 2 slices per GPU, halo 2^16: what the exchange moves per call.
  const int gpus = gpu_count();
  const int k = 2 * gpus;
  const std::size_t n = std::size_t{1} << 24, halo = std::size_t{1} << 16;
  REQUIRE(run_shape({n, k, halo, Boundary::periodic, "speed shape"}, 99).empty());
  const auto parts = ex09::split(n, k);
  std::vector<steps::DeviceBuffer<float>> cells;
  std::vector<std::unique_ptr<steps::Stream>> streams;
  std::vector<ex09::Slice> slices;
  for (int i = 0; i < k; ++i) {
    steps::DeviceScope scope(i % gpus);
    cells.emplace_back(2 * halo + parts[static_cast<std::size_t>(i)].count);
    streams.push_back(std::make_unique<steps::Stream>(cudaStreamNonBlocking));
    slices.push_back({i % gpus, streams.back()->get(), cells.back().data(), parts[static_cast<std::size_t>(i)]});
  }
  // One timed run: the slices' streams wait for the timing stream, the
  // exchange runs, the timing stream waits for them all.
  steps::Event start;
  std::vector<std::unique_ptr<steps::Event>> finished;
  for (int i = 0; i < k; ++i) {
    steps::DeviceScope scope(i % gpus);
    finished.push_back(std::make_unique<steps::Event>());
  }
  steps::TimingOptions opts;
  opts.iters = 20;
  const auto ms = steps::time_gpu(
      [&](cudaStream_t s) {
        start.record(s);
        for (auto& sl : slices) CUDA_CHECK(cudaStreamWaitEvent(sl.stream, start.get(), 0));
        ex09::exchange_halos(slices, n, halo, Boundary::periodic, kOutside);
        for (int i = 0; i < k; ++i) {
          steps::DeviceScope scope(slices[static_cast<std::size_t>(i)].device);
          finished[static_cast<std::size_t>(i)]->record(slices[static_cast<std::size_t>(i)].stream);
          CUDA_CHECK(cudaStreamWaitEvent(s, finished[static_cast<std::size_t>(i)]->get(), 0));
        }
      },
      opts);
  steps::grade::report_speed("halo exchange, 2^24 floats, " + std::to_string(k) + " slices, halo 2^16", ms,
                             8.0 * static_cast<double>(k) * static_cast<double>(halo));
}
