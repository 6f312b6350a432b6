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
// in the table are shared-memory bytes per second. The baseline is the
// conflict-free stride-1 read; the goal is a column read as fast as that.
//
// The stride and float2/float4 rows have the role "baseline": they are
// reference measurements of the hardware, shown as a percentage of
// stride_1, and the goal ("best version") is about the column-read
// versions v1-v3 alone.
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
#include "gemv.hpp"
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace ch04 {

/// Input word i: a whole number in [1, 127], never zero (see bench.cuh for
/// why whole numbers).
inline float input_value(std::uint64_t seed, std::size_t i) {
  return std::floor(steps::uniform_at(seed, i, 1.0f, 128.0f));
}

/// What a row of the table reads, decoded from its name (the registry below
/// is the one list of names): "stride_S", "float2_stride_S" and
/// "float4_stride_S" read with stride S in accesses of 4, 8 or 16 bytes;
/// every other row reads the columns of a tile.
struct Pattern {
  bool columns = true; ///< column reads (columns.cuh) or strided reads (strided.cuh)
  int width = 1;       ///< floats per access
  int stride = 1;      ///< in accesses
};

inline Pattern pattern_of(const std::string& name) {
  Pattern p;
  const std::size_t at = name.find("stride_");
  if (at == std::string::npos) return p;
  p.columns = false;
  p.width = name.rfind("float4_", 0) == 0 ? 4 : name.rfind("float2_", 0) == 0 ? 2 : 1;
  p.stride = std::stoi(name.substr(at + 7));
  return p;
}

#if STEPS_WITH_EXERCISE
// Your exercise row: y = A x with A of kGemvCols columns (not a multiple of
// 32: the last tile of every row is partial) and as many rows as --size
// allows. Entries are multiples of 1/16 between -1 and 1, so every sum is
// exact in float, in any order (see exercises/04_bank_conflicts/README.md).
constexpr int kGemvCols = 517;

inline float gemv_value(std::uint64_t seed, std::size_t i) {
  float k = std::floor(steps::uniform_at(seed, i, -16.0f, 16.0f)); // -16 .. 15
  if (k >= 0) k += 1;                                                // -16..-1, 1..16: never 0
  return k / 16.0f;
}
#endif

/// Inputs, output and CPU reference of one run of the chapter.
class BankConflicts {
public:
  BankConflicts(const steps::Options& opts, const steps::DeviceInfo& dev)
      : dev_(dev), n_(static_cast<std::size_t>(opts.size)), blocks_(blocks_for(n_)),
        // Device memory first: a size that does not fit fails here, before
        // any host memory is spent on it.
        in_(n_), out_(static_cast<std::size_t>(blocks_) * kThreads)
#if STEPS_WITH_EXERCISE
        ,
        gemv_m_(static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(n_ / kGemvCols, 1 << 20)))),
        a_(static_cast<std::size_t>(gemv_m_) * kGemvCols), x_(kGemvCols), y_(gemv_m_)
#endif
  {
    in_host_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i) in_host_[i] = input_value(opts.seed, i);
    in_.upload(in_host_.data());
#if STEPS_WITH_EXERCISE
    a_host_.resize(a_.size());
    x_host_.resize(x_.size());
    for (std::size_t i = 0; i < a_host_.size(); ++i) a_host_[i] = gemv_value(opts.seed + 1, i);
    for (std::size_t i = 0; i < x_host_.size(); ++i) x_host_[i] = gemv_value(opts.seed + 2, i);
    a_.upload(a_host_.data());
    x_.upload(x_host_.data());
#endif
  }

  std::string describe() const {
    // Shared memory delivers 32 banks x 4 bytes = 128 bytes per clock per SM.
    const double peak = dev_.sm_count * 128.0 * dev_.sm_clock_khz * 1e3;
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "%zu input words = %u blocks x one 32 x 32 tile; each thread reads %d x 128 B of shared memory "
                  "(%s per run). Shared-memory peak: %d SMs x 128 B/clock x %d MHz = %.0f GB/s",
                  n_, blocks_, kRounds, steps::format_bytes(blocks_ * kBytesReadPerBlock).c_str(), dev_.sm_count,
                  dev_.sm_clock_khz / 1000, peak / 1e9);
    return buf;
  }

  steps::Work work(const std::string& name) const {
#if STEPS_WITH_EXERCISE
    if (name == "yours") return {8.0 * gemv_m_ * kGemvCols, 2.0 * gemv_m_ * kGemvCols};
#else
    (void)name;
#endif
    return {blocks_ * kBytesReadPerBlock, 0};
  }

  void reset(const std::string& name) {
    out_.poison(); // NaN everywhere: a thread that writes nothing shows
#if STEPS_WITH_EXERCISE
    if (name == "yours") y_.poison();
#else
    (void)name;
#endif
  }

  steps::Comparison check(const std::string& name) const {
#if STEPS_WITH_EXERCISE
    if (name == "yours") return check_gemv();
#endif
    const steps::Comparison guards = out_.check_guards();
    if (!guards.ok) return guards;
    const std::vector<float> got = out_.download();
    const std::vector<double> want = expected(pattern_of(name));
    // Whole numbers below 2^24: float sums are exact, in any order.
    return steps::compare(got.data(), want.data(), got.size(), steps::Tolerance::exact());
  }

  const float* in() const { return in_.data(); }
  float* out() { return out_.data(); }
  std::size_t n() const { return n_; }
#if STEPS_WITH_EXERCISE
  const float* a() const { return a_.data(); }
  const float* x() const { return x_.data(); }
  float* y() { return y_.data(); }
  int gemv_m() const { return gemv_m_; }
#endif

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

#if STEPS_WITH_EXERCISE
  steps::Comparison check_gemv() const {
    // The point of the exercise first: each of the 32 rows and 32 columns of
    // the tile must use 32 different banks. Element k of this comparison is
    // the number of banks row k (k < 32) or column k - 32 uses; all must be 32.
    std::vector<float> banks_used(2 * ex04::TILE), all_banks(2 * ex04::TILE, float{kBanks});
    for (int k = 0; k < 2 * ex04::TILE; ++k) {
      std::vector<bool> used(kBanks, false);
      for (int i = 0; i < ex04::TILE; ++i) {
        const int row = k < ex04::TILE ? k : i, col = k < ex04::TILE ? i : k - ex04::TILE;
        used[static_cast<std::size_t>(((ex04::tile_offset(row, col) % kBanks) + kBanks) % kBanks)] = true;
      }
      banks_used[k] = static_cast<float>(std::count(used.begin(), used.end(), true));
    }
    const steps::Comparison layout = steps::compare(banks_used, all_banks, steps::Tolerance::exact());
    if (!layout.ok) return layout;

    const steps::Comparison guards = y_.check_guards();
    if (!guards.ok) return guards;
    std::vector<double> want(gemv_m_, 0.0);
    for (int r = 0; r < gemv_m_; ++r)
      for (int c = 0; c < kGemvCols; ++c)
        want[r] += static_cast<double>(a_host_[static_cast<std::size_t>(r) * kGemvCols + c]) * x_host_[c];
    const std::vector<float> got = y_.download();
    return steps::compare(got.data(), want.data(), got.size(), steps::Tolerance::exact());
  }
#endif

  steps::DeviceInfo dev_;
  std::size_t n_;
  unsigned int blocks_;
  steps::GuardedBuffer<float> in_, out_;
#if STEPS_WITH_EXERCISE
  int gemv_m_;
  steps::GuardedBuffer<float> a_, x_, y_;
  std::vector<float> a_host_, x_host_;
#endif
  std::vector<float> in_host_;
};

using Version = steps::Version<BankConflicts>;

/// A row of the stride sweep: 4-byte loads at `stride` words.
Version stride_row(int stride, const char* what) {
  return {"stride_" + std::to_string(stride), what, steps::Role::baseline,
          [stride](BankConflicts& p, cudaStream_t s) { strided::launch<float>(p.in(), p.n(), stride, p.out(), s); }};
}

// The registry: the CLI, the table and the JSON all come from this list.
const std::vector<Version> kVersions = {
    stride_row(1, "lane l reads word l: 32 banks, 1 pass per load (the speed of light)"),
    stride_row(2, "lane l reads word 2l: lanes l and l + 16 share a bank, 2-way conflict"),
    stride_row(3, "odd stride: every bank once, conflict-free (so are 5, 7, ... 31)"),
    stride_row(4, "4-way conflict: 8 banks used"),
    stride_row(8, "8-way conflict: 4 banks used"),
    stride_row(16, "16-way conflict: 2 banks used"),
    stride_row(32, "32-way conflict: every lane in bank 0"),
    {"column_unpadded", "v1: warp reads a column of a 32 x 32 tile at row * 32 + col: 32-way", steps::Role::version,
     [](BankConflicts& p, cudaStream_t s) { v1::launch(p.in(), p.n(), p.out(), s); }},
    {"column_padded", "v2: rows padded to 33 words, (row, col) in bank (row + col) % 32", steps::Role::version,
     [](BankConflicts& p, cudaStream_t s) { v2::launch(p.in(), p.n(), p.out(), s); }},
    {"column_swizzled", "v3: no padding, (row, col) at row * 32 + (col ^ row)", steps::Role::version,
     [](BankConflicts& p, cudaStream_t s) { v3::launch(p.in(), p.n(), p.out(), s); }},
    {"float2_stride_1", "8-byte loads, consecutive: 2 passes of 16 lanes, no conflict", steps::Role::baseline,
     [](BankConflicts& p, cudaStream_t s) { wide::launch_float2(p.in(), p.n(), 1, p.out(), s); }},
    {"float4_stride_1", "16-byte loads, consecutive: 4 passes of 8 lanes, no conflict", steps::Role::baseline,
     [](BankConflicts& p, cudaStream_t s) { wide::launch_float4(p.in(), p.n(), 1, p.out(), s); }},
    {"float4_stride_2", "16-byte loads 32 bytes apart: 2-way inside each pass, 8 passes", steps::Role::baseline,
     [](BankConflicts& p, cudaStream_t s) { wide::launch_float4(p.in(), p.n(), 2, p.out(), s); }},
#if STEPS_WITH_EXERCISE
    {"yours", "exercise 04: your gemv y = A x (A: rows x 517); verified: y, and the banks used by tile rows [0..31] "
             "and columns [32..63], 32 each",
     steps::Role::yours,
     [](BankConflicts& p, cudaStream_t s) { ex04::gemv(p.a(), p.x(), p.y(), p.gemv_m(), kGemvCols, s); }},
#endif
    {"mistake_swizzle_on_read_only", "tile stored plain, read swizzled: right words, wrong steps",
     steps::Role::mistake,
     [](BankConflicts& p, cudaStream_t s) { mistakes::swizzle_on_read_only(p.in(), p.n(), p.out(), s); }},
    {"mistake_pad_forgotten_on_read", "tile stored padded, read at row * 32 + col", steps::Role::mistake,
     [](BankConflicts& p, cudaStream_t s) { mistakes::pad_forgotten_on_read(p.in(), p.n(), p.out(), s); }},
};

steps::ChapterInfo info() {
  steps::ChapterInfo i;
  i.number = "04";
  i.binary = "ch04_bank_conflicts";
  i.title = "Bank conflicts";
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
      "element of A\n(one 4-byte store into the tile, one 4-byte load from it). The % peak column compares with "
      "the DRAM bandwidth\nand does not apply here: shared memory is several times faster than DRAM (its peak is "
      "on the Problem line).";
  i.goal = 0.95;
  i.goal_text = ">= 0.95x stride_1 (a conflict-free column read is as fast as a row read)";
  return i;
}

} // namespace ch04

int main(int argc, char** argv) { return steps::run_chapter(argc, argv, ch04::info(), ch04::kVersions); }
