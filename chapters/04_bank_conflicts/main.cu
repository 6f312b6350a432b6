// Chapter 04: shared-memory bank conflicts.
//
// Shared memory is split into 32 banks, 4 bytes wide; a warp's load is
// served in one clock only when its 32 lanes need at most one word from
// each bank. This program measures what happens when they do not:
//
//   stride_S          lane l reads word l * S: the n-way conflicts, S = 1..32 (strided.cuh)
//   column_unpadded   v1: a warp reads one column of a 32 x 32 tile: 32-way
//   column_padded     v2: the same with one word of padding per row: conflict-free
//   column_swizzled   v3: the same with an XOR swizzle, no padding: conflict-free
//   floatV_stride_S   8- and 16-byte loads: requests served in 128-byte passes (wide.cuh)
//
// Everything is a microbenchmark of SHARED memory: each block copies one
// tile from DRAM and reads it 512 times over from shared memory, so GB/s
// in the table are shared-memory bytes per second and the peak is the
// shared-memory peak (32 banks x 4 bytes per clock per SM). The baseline is
// the conflict-free stride-1 read; the goal is a column read as fast as that.
//
// The stride and float2/float4 rows are reference rows: measurements of the
// hardware, shown as a percentage of stride_1 and never ranked; the goal
// ("best version") is about the column-read versions v1-v3 alone.
//
// Run: ./tutorial run 04    (or build/bin/ch04_bank_conflicts --help)
#include "mistakes.cuh"
#include "strided.cuh"
#include "v1_column_unpadded.cuh"
#include "v2_column_padded.cuh"
#include "v3_column_swizzled.cuh"
#include "wide.cuh"

#include "steps/chapter.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#if STEPS_WITH_EXERCISE
#include "yours.cuh"
#endif

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace ch04 {

/// Input word i: a whole number in [1, 127], never zero (see bench.cuh for
/// why whole numbers).
inline float input_value(std::uint64_t seed, std::size_t i) {
  return std::floor(steps::uniform_at(seed, i, 1.0f, 128.0f));
}

/// What a row reads, and so what its CPU reference is. Each row captures
/// its own Pattern, made from the same values as its launch.
struct Pattern {
  bool columns = true; ///< column reads of a tile (columns.cuh) or strided reads (strided.cuh)
  int width = 1;       ///< floats per access (strided reads)
  int stride = 1;      ///< in accesses (strided reads)

  /// Lane l reads row l of the tile, one column per step.
  static Pattern column_reads() { return {}; }
  /// Lane l reads accesses of `width` floats, `stride` accesses apart.
  static Pattern strided_reads(int width, int stride) { return {false, width, stride}; }
};

/// The input, every thread's output and the CPU reference of the
/// microbenchmark rows (all but "yours").
class SharedReads {
public:
  SharedReads(const steps::Options& opts, steps::Run&)
      : n_(static_cast<std::size_t>(opts.size)), blocks_(blocks_for(n_)),
        // Device memory first: a size that does not fit fails here, before
        // any host memory is spent on it.
        in_(n_), out_(static_cast<std::size_t>(blocks_) * kThreads) {
    in_host_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i) in_host_[i] = input_value(opts.seed, i);
    in_.upload(in_host_.data());
  }

  std::string describe() const {
    char buf[240];
    std::snprintf(buf, sizeof buf,
                  "%zu input words = %u blocks x one 32 x 32 tile; each thread reads %d x 128 B of shared memory "
                  "(%s per run)",
                  n_, blocks_, kRounds, steps::format_bytes(blocks_ * kBytesReadPerBlock).c_str());
    return buf;
  }

  /// Shared-memory bytes read by one run (the same for every row).
  steps::Work work() const { return {blocks_ * kBytesReadPerBlock, 0}; }

  /// NaN everywhere in the output: a thread that writes nothing shows.
  void poison() { out_.poison(); }

  /// Every thread's sum, compared exactly with what `pattern` makes it read:
  /// whole numbers below 2^24, so float sums are exact in any order.
  steps::Comparison check(const Pattern& pattern) {
    const steps::Comparison guards = out_.check_guards();
    if (!guards.ok) return guards;
    out_.download(got_);
    const std::vector<double> want = expected(pattern);
    return steps::compare(got_.data(), want.data(), got_.size(), steps::Tolerance::exact());
  }

  const float* in() const { return in_.data(); }
  float* out() { return out_.data(); }
  std::size_t n() const { return n_; }

private:
  // What every thread must have summed (see bench.cuh). Thread t of block b
  // depends only on b's tile and on its lane t % 32.
  std::vector<double> expected(const Pattern& p) const {
    constexpr double kCycles = kRounds / kCycle;
    std::vector<double> want(static_cast<std::size_t>(blocks_) * kThreads);
    std::vector<double> tile(kTileWords), per_lane(32), prefix;
    for (unsigned int b = 0; b < blocks_; ++b) {
      for (int i = 0; i < kTileWords; ++i) {
        const std::size_t g = static_cast<std::size_t>(b) * kTileWords + i;
        tile[i] = g < n_ ? in_host_[g] : 0.0;
      }
      if (p.columns) {
        // Lane l reads element (l, col) at step col, every round.
        for (int l = 0; l < 32; ++l) {
          double sum = 0;
          for (int c = 0; c < TILE; ++c) sum += step_weight(c) * tile[l * TILE + c];
          per_lane[l] = kRounds * sum;
        }
      } else {
        // Lane l reads access (l * stride + q + 32 j) mod accesses at step j of
        // round q: for each j, a window of 32 consecutive accesses (q = 0..31)
        // starting at (l * stride + 32 j) mod accesses. Window sums come from a
        // prefix sum over the tile taken twice (windows may wrap around).
        const int accesses = kTileWords / p.width;
        prefix.assign(2 * accesses + 1, 0.0);
        for (int k = 0; k < 2 * accesses; ++k) {
          double v = 0;
          for (int e = 0; e < p.width; ++e) v += tile[(k % accesses) * p.width + e];
          prefix[k + 1] = prefix[k] + v;
        }
        for (int l = 0; l < 32; ++l) {
          double sum = 0;
          for (int j = 0; j < TILE / p.width; ++j) {
            const int start = (l * p.stride + 32 * j) % accesses;
            sum += step_weight(j) * (prefix[start + 32] - prefix[start]);
          }
          per_lane[l] = kCycles * sum;
        }
      }
      for (int t = 0; t < kThreads; ++t) want[static_cast<std::size_t>(b) * kThreads + t] = per_lane[t % 32];
    }
    return want;
  }

  std::size_t n_;
  unsigned int blocks_;
  steps::GuardedBuffer<float> in_, out_;
  std::vector<float> in_host_, got_; // got_ is reused between checks
};

using Row = steps::Row<SharedReads>;
using Launch = std::function<void(const float* in, std::size_t n, float* out, cudaStream_t)>;

/// A row of the microbenchmark: `launch` reads in `pattern`, and the check
/// expects exactly what that pattern reads.
Row read_row(std::string name, std::string what, steps::Role role, Pattern pattern, Launch launch) {
  Row r;
  r.name = std::move(name);
  r.what = std::move(what);
  r.role = role;
  r.launch = [launch](SharedReads& p, steps::Run& run) { launch(p.in(), p.n(), p.out(), run.stream()); };
  r.work = [](const SharedReads& p) { return p.work(); };
  r.reset = [](SharedReads& p) { p.poison(); };
  r.check = [pattern](SharedReads& p) { return p.check(pattern); };
  return r;
}

/// A row of the stride sweep: 4-byte loads, lanes `stride` words apart.
Row stride_row(int stride, steps::Role role, std::string what) {
  return read_row("stride_" + std::to_string(stride), std::move(what), role, Pattern::strided_reads(1, stride),
                  [stride](const float* in, std::size_t n, float* out, cudaStream_t s) {
                    strided::launch<float>(in, n, stride, out, s);
                  });
}

/// A row of the wide-load experiment: float2 or float4 loads, lanes
/// `stride` accesses apart. Named "float2_stride_S" or "float4_stride_S".
template <class T>
Row wide_row(int stride, std::string what) {
  constexpr int kWidth = strided::kWidth<T>;
  return read_row("float" + std::to_string(kWidth) + "_stride_" + std::to_string(stride), std::move(what),
                  steps::Role::reference, Pattern::strided_reads(kWidth, stride),
                  [stride](const float* in, std::size_t n, float* out, cudaStream_t s) {
                    wide::launch<T>(in, n, stride, out, s);
                  });
}

/// A column-read row: lane l reads row l of a 32 x 32 tile, column by column.
Row column_row(std::string name, std::string what, steps::Role role, Launch launch) {
  return read_row(std::move(name), std::move(what), role, Pattern::column_reads(), std::move(launch));
}

// The registry: the CLI, the table and the JSON all come from these groups.
std::vector<steps::GroupPtr> registry() {
  using steps::Role;
  std::vector<steps::GroupPtr> groups{steps::group<SharedReads>({
      stride_row(1, Role::baseline, "lane l reads word l: 32 banks, 1 pass per load (conflict-free: the baseline)"),
      stride_row(2, Role::reference, "lane l reads word 2l: lanes l and l + 16 share a bank, 2-way conflict"),
      stride_row(3, Role::reference, "odd stride: every bank once, conflict-free (so are 5, 7, ... 31)"),
      stride_row(4, Role::reference, "4-way conflict: 8 banks used"),
      stride_row(8, Role::reference, "8-way conflict: 4 banks used"),
      stride_row(16, Role::reference, "16-way conflict: 2 banks used"),
      stride_row(32, Role::reference, "32-way conflict: every lane in bank 0"),
      column_row("column_unpadded", "v1: warp reads a column of a 32 x 32 tile at row * 32 + col: 32-way",
                 Role::version, v1::launch),
      column_row("column_padded", "v2: rows padded to 33 words, (row, col) in bank (row + col) % 32", Role::version,
                 v2::launch),
      column_row("column_swizzled", "v3: no padding, (row, col) at row * 32 + (col ^ row)", Role::version,
                 v3::launch),
      wide_row<float2>(1, "8-byte loads, consecutive: 2 passes of 16 lanes, no conflict"),
      wide_row<float4>(1, "16-byte loads, consecutive: 4 passes of 8 lanes, no conflict"),
      wide_row<float4>(2, "16-byte loads 32 bytes apart: 2-way inside each pass, 8 passes"),
      column_row("mistake_swizzle_on_read_only", "tile stored plain, read swizzled: right words, wrong steps",
                 Role::mistake, mistakes::swizzle_on_read_only),
      column_row("mistake_pad_forgotten_on_read", "tile stored padded, read at row * 32 + col", Role::mistake,
                 mistakes::pad_forgotten_on_read),
  })};
#if STEPS_WITH_EXERCISE
  groups.push_back(yours_group());
#endif
  return groups;
}

/// Shared memory delivers 32 banks x 4 bytes = 128 bytes per clock per SM.
steps::Peak shared_memory_peak(const steps::DeviceInfo& dev) {
  return {"shared memory", dev.sm_count * 128.0 * dev.sm_clock_khz * 1e3 / 1e9,
          std::to_string(dev.sm_count) + " SMs x 128 B/clock x " + std::to_string(dev.sm_clock_khz / 1000) + " MHz"};
}

steps::ChapterInfo info() {
  steps::ChapterInfo i;
  i.summary = "Measures shared-memory bank conflicts: a stride sweep (n-way conflicts), column reads of a "
              "32 x 32 tile plain, padded and XOR-swizzled, and 8- and 16-byte loads. GB/s are shared-memory "
              "bytes per second.";
  i.metric = steps::Metric::bandwidth;
  // 2^24 words: 16384 blocks, 124 waves of 132 SMs; every row reads 34 GB of
  // shared memory per run. The 64 MiB input barely matters: it is read
  // once per run, the shared tile 512 times.
  i.default_size = std::int64_t{1} << 24;
  i.size_help = "input words: one block per 1024 (a 32 x 32 tile), each tile read 512 times from shared memory";
  i.default_iters = 20;
  i.work_note =
      "GB/s: SHARED-MEMORY bytes read per second by the timed loop (2 MiB per block: 256 threads x 64 rounds x "
      "128 B);\nthe 4-8 KiB tile copy and the DRAM traffic (under 0.5%) are not counted. yours: 8 bytes per "
      "element of A\n(one 4-byte store into the tile, one 4-byte load from it).";
  i.baseline = "stride_1";
  i.goals = {{"best", "stride_1", 0.95, ">= 0.95x stride_1 (a conflict-free column read is as fast as a row read)"}};
  i.peak = shared_memory_peak;
  return i;
}

} // namespace ch04

int main(int argc, char** argv) { return steps::run_chapter(argc, argv, ch04::info(), ch04::registry()); }
