// Grader for exercise 10, part 3 (wgmma). Built three ways: against your
// exercises/ code (./tutorial grade 10 wgmma), against the solution, and
// against each mutant of the solution (part of ./tutorial test).
//
// The inputs are small integers (-3 .. 3, exact in E4M3), so every product
// and every sum of this exercise is exact, on the tensor cores and in FP32:
// D is compared bit for bit with an integer product computed here. That
// makes a wrong element certainly wrong, and lets the grader test what a
// usual mistake would have produced (only the last wgmma of each K block,
// the K step left out, the first 8 rows of a tile repeated...) on the tile
// of the first wrong element. The kernel also leaves a trace (mapped host
// memory): the descriptors your make_descriptor() built for the first tiles,
// decoded in the message, and what the given wgmma wrappers saw of your
// fence / commit / wait (those mistakes ptxas repairs in the machine code,
// so they are checked there, not in the results).
#include "wgmma.hpp"

#include "steps/catch.hpp"
#include "steps/error.hpp"
#include "steps/fp8.hpp"
#include "steps/grade.hpp"
#include "steps/guarded.hpp"
#include "steps/math.hpp"
#include "steps/memory.hpp"
#include "steps/random.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace ex10::wgmma;

constexpr int kTileM = 64, kTileN = 128, kBlockK = 128, kSlice = 32;

void require_hopper() {
  steps::grade::require({{steps::Feature::wgmma}, nullptr}, "wgmma, built for sm_90a");
}

struct Shape {
  int m, n, k;
};

std::string name_of(const Shape& s) {
  std::ostringstream os;
  os << "m = " << s.m << ", n = " << s.n << ", k = " << s.k;
  return os.str();
}

/// The trace, in mapped pinned host memory: still readable after a kernel fault.
Trace* trace() { return steps::grade::mapped_record<Trace>(); }

Trace read_trace() {
  Trace t;
  std::memcpy(&t, const_cast<const Trace*>(static_cast<volatile Trace*>(trace())), sizeof t);
  return t;
}

std::string hex(unsigned long long v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

/// The fields of one descriptor, and what is wrong with them for a tile at
/// shared address `addr` written by the TMA map (128-byte rows, 128-byte
/// swizzle, 1024-byte aligned). "" when they describe that layout.
std::string decode(const char* which, unsigned long long desc, unsigned addr) {
  const unsigned start = desc & 0x3FFF, lbo = (desc >> 16) & 0x3FFF, sbo = (desc >> 32) & 0x3FFF;
  const unsigned base = (desc >> 49) & 0x7, mode = (desc >> 62) & 0x3;
  static const char* modes[] = {"0 (no swizzle)", "1 (128-byte swizzle)", "2 (64-byte swizzle)", "3 (32-byte swizzle)"};
  std::ostringstream os;
  os << which << " tile at shared address " << hex(addr) << ": descriptor " << hex(desc) << " = start " << hex(start)
     << ", leading offset " << lbo * 16 << " B, stride offset " << sbo * 16 << " B, base offset " << base
     << ", swizzle mode " << modes[mode] << ".";
  std::vector<std::string> wrong;
  if (start != ((addr & 0x3FFFF) >> 4)) {
    if (start == (addr & 0x3FFF))
      wrong.push_back("the start field holds the address itself: it takes (address & 0x3FFFF) >> 4 = " +
                      hex((addr & 0x3FFFF) >> 4) + " (addresses are in 16-byte units)");
    else
      wrong.push_back("the start field should be (address & 0x3FFFF) >> 4 = " + hex((addr & 0x3FFFF) >> 4));
  }
  if (sbo * 16 != 1024) {
    if (lbo * 16 == 1024)
      wrong.push_back("1024 sits in the leading offset (bits 16-29) and the stride offset is " + std::to_string(sbo * 16) +
                      " B: the two are swapped. For a K-major tile the stride offset (bits 32-45) goes from one 8-row "
                      "group to the next: 8 rows x 128 B = 1024 B");
    else
      wrong.push_back("the stride offset (bits 32-45) goes from one 8-row group to the next: 8 rows x 128 B = 1024 B, "
                      "encoded 1024 >> 4 = 64");
  }
  if (mode != 1)
    wrong.push_back("the TMA map wrote the tile with the 128-byte swizzle (CU_TENSOR_MAP_SWIZZLE_128B): mode 1");
  if (base != 0) wrong.push_back("the base offset is 0 for tiles that start on a 1024-byte boundary");
  for (const std::string& w : wrong) os << "\n    - " << w;
  return wrong.empty() ? "" : os.str();
}

/// The decoded descriptors of the trace ("" when none was recorded or both
/// describe the layout).
std::string descriptor_hints() {
  const Trace t = read_trace();
  if (!t.recorded) return "";
  std::string out;
  for (const std::string& s : {decode("A", t.desc_a, t.addr_a), decode("B", t.desc_b, t.addr_b)})
    if (!s.empty()) out += "\n  Your make_descriptor() for the " + s;
  return out;
}

/// What the given wgmma wrappers saw of your protocol ("" when nothing).
std::string protocol_finding() {
  const Trace t = read_trace();
  std::ostringstream os;
  os << "(block (" << t.block_x << ", " << t.block_y << "), thread " << t.thread << ", K block " << t.kb << ")";
  const std::string where = os.str();
  const std::string structural =
      " This is a check of the order of your wg_* calls, made by the given wrappers: the results may well be right, "
      "because ptxas repairs this in the machine code when it can see it (it then prints C7519 or C7517 with "
      "-Xptxas -v), but the code is wrong as written and is not repaired where ptxas cannot see it.";
  switch (static_cast<Finding>(t.finding)) {
  case Finding::none: return "";
  case Finding::mma_without_fence:
    return "a wgmma was issued with no wgmma.fence since the accumulators were last touched " + where +
           ".\n  Hint: the promotion (given) reads and writes partial between K blocks, with ordinary instructions; "
           "wgmma reads its accumulators asynchronously, so call wg_fence() before the first wg_mma of every K "
           "block." + structural;
  case Finding::not_committed:
    return "k_block returned with wgmma issued but never committed " + where +
           ".\n  Hint: wg_wait() waits for committed groups only: close the K block's wgmma into a group with "
           "wg_commit(), then wg_wait()." + structural;
  case Finding::not_waited:
    return "k_block returned while its wgmma group was still in flight " + where +
           ": the promotion then reads partial before the tensor cores have written it.\n  Hint: after wg_commit(), "
           "wg_wait() (wgmma.wait_group 0) before returning." + structural;
  }
  return "an unknown finding " + std::to_string(t.finding) + " " + where;
}

/// Small integers as E4M3 codes: -3 .. 3.
std::uint8_t code_of(int v) { return steps::fp8_encode(static_cast<float>(v), steps::Fp8Format::e4m3, true); }

struct Inputs {
  int m = 0, n = 0, k = 0;
  std::vector<std::int8_t> a, b;       // values
  std::vector<std::uint8_t> qa, qb;    // their codes
};

Inputs make_inputs(const Shape& s, std::uint64_t seed) {
  Inputs in;
  in.m = s.m;
  in.n = s.n;
  in.k = s.k;
  auto fill = [&](std::size_t count, std::uint64_t salt, std::vector<std::int8_t>& v, std::vector<std::uint8_t>& q) {
    v.resize(count);
    q.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      v[i] = static_cast<std::int8_t>(static_cast<int>(steps::splitmix64(seed ^ salt ^ (i * 0x9E3779B97F4A7C15ull)) % 7) - 3);
      q[i] = code_of(v[i]);
    }
  };
  fill(static_cast<std::size_t>(s.m) * s.k, 0xA, in.a, in.qa);
  fill(static_cast<std::size_t>(s.n) * s.k, 0xB0000, in.b, in.qb);
  return in;
}

/// Sum of A(r, kk) * B(c, kk) over kk in [k0, k1) (k1 clipped to k): exact.
long long dot(const Inputs& in, int r, int c, int k0, int k1) {
  long long s = 0;
  const std::int8_t* a = &in.a[static_cast<std::size_t>(r) * in.k];
  const std::int8_t* b = &in.b[static_cast<std::size_t>(c) * in.k];
  for (int kk = k0; kk < std::min(k1, in.k); ++kk) s += a[kk] * b[kk];
  return s;
}

/// What the usual mistakes produce at (r, c), from the 32-wide K slices.
struct Guesses {
  long long last_only = 0;  ///< only the last wgmma of each K block (scale-d 0 everywhere)
  long long first_x4 = 0;   ///< every wgmma of a block reads its first 32 K (no K step)
  long long carried = 0;    ///< each block adds the earlier blocks again (scale-d 1 on the first wgmma)
};

Guesses guesses(const Inputs& in, int r, int c) {
  Guesses g;
  long long running = 0;
  for (int k0 = 0; k0 < in.k; k0 += kBlockK) {
    g.last_only += dot(in, r, c, k0 + 3 * kSlice, k0 + 4 * kSlice);
    g.first_x4 += 4 * dot(in, r, c, k0, k0 + kSlice);
    running += dot(in, r, c, k0, k0 + kBlockK);
    g.carried += running;
  }
  return g;
}

/// The pattern of wrong elements in the 64 x 128 tile of D that holds
/// (r, c), in words a learner can act on.
std::string pattern(const Inputs& in, const std::vector<float>& got, const std::vector<long long>& want, int r, int c) {
  const int m0 = r / kTileM * kTileM, n0 = c / kTileN * kTileN;
  const int m1 = std::min(in.m, m0 + kTileM), n1 = std::min(in.n, n0 + kTileN);
  int cells = 0, right = 0, zero = 0, last = 0, first = 0, carried = 0, differ_last = 0, differ_first = 0, differ_carried = 0;
  int corner_cells = 0, corner_right = 0, diag_cells = 0, diag_right = 0;
  for (int i = m0; i < m1; ++i)
    for (int j = n0; j < n1; ++j) {
      const std::size_t at = static_cast<std::size_t>(i) * in.n + j;
      const double v = got[at];
      const bool ok = v == static_cast<double>(want[at]);
      ++cells;
      right += ok;
      zero += v == 0;
      const Guesses g = guesses(in, i, j);
      last += v == static_cast<double>(g.last_only);
      first += v == static_cast<double>(g.first_x4);
      carried += v == static_cast<double>(g.carried);
      differ_last += g.last_only != want[at];
      differ_first += g.first_x4 != want[at];
      differ_carried += g.carried != want[at];
      if (i - m0 < 8 && j - n0 < 8) {
        ++corner_cells;
        corner_right += ok;
      } else if ((i - m0) % 8 == (j - n0) % 8) {
        ++diag_cells;
        diag_right += ok;
      }
    }
  std::ostringstream os;
  os << "In the 64 x 128 tile of D at rows " << m0 << ".., columns " << n0 << ".., " << cells - right << " of " << cells
     << " elements are wrong. ";
  if (last == cells && differ_last > 0)
    return os.str() + "Each element is the product of the LAST 32 K of each K block only: every wgmma overwrote "
                      "partial instead of adding to it. Only the first wgmma of a K block starts from zero "
                      "(accumulate = false); the next three add (accumulate = true).";
  if (first == cells && differ_first > 0)
    return os.str() + "Each element is 4 x the product of the FIRST 32 K of each K block: all four wgmma read the "
                      "same 32 bytes. wgmma k32 reads 32 bytes of each row: step k starts at tile + 32 * k (the "
                      "descriptor's start address moves by 32 / 16 = 2).";
  if (carried == cells && differ_carried > 0)
    return os.str() + "Each K block adds the earlier blocks' sums again: the first wgmma of a block accumulated onto "
                      "the previous block's partial. The first wgmma of a K block must overwrite (accumulate = false).";
  if (zero == cells)
    return os.str() + "The whole tile is 0: nothing reached partial (no wgmma issued, or descriptors that point at "
                      "zeros).";
  if (corner_cells > 0 && corner_right == corner_cells && right - corner_right < (cells - corner_cells) / 2)
    return os.str() + "Only the first 8 rows of A's tile and the first 8 rows of B's tile meet correctly (the 8 x 8 "
                      "corner is right, almost everything else wrong): rows come out wrong in 8-row groups, which is "
                      "the stride byte offset (the distance from one 8-row group to the next).";
  if (diag_cells > 0 && diag_right > diag_cells / 2 && right - corner_right - diag_right < (cells - corner_cells - diag_cells) / 4)
    return os.str() + "The right elements are mostly those where row % 8 == column % 8 inside the tile: A's and B's "
                      "rows were read with their 16-byte chunks permuted the same wrong way, which only cancels when "
                      "both rows sit at the same place in their 8-row group. The descriptor's swizzle mode does not "
                      "match the layout TMA wrote.";
  return os.str() + "No single usual mistake explains the pattern: compare your descriptor with the layout TMA "
                    "wrote (start address >> 4, stride offset 1024 B, swizzle mode 1).";
}

std::string run_shape(const Shape& s, std::uint64_t seed) {
  require_hopper();
  const Inputs in = make_inputs(s, seed);
  const std::size_t guard = steps::GuardedBuffer<std::uint8_t>::default_guard();
  auto on_gpu = [&](const std::vector<std::uint8_t>& codes) {
    std::vector<std::uint8_t> padded(codes);
    padded.resize(codes.size() + guard, 0x7F); // E4M3 NaN after the end
    steps::DeviceBuffer<std::uint8_t> d(padded.size());
    d.copy_from_host(padded);
    return d;
  };
  const steps::DeviceBuffer<std::uint8_t> da = on_gpu(in.qa), db = on_gpu(in.qb);
  steps::GuardedBuffer<float> dd(static_cast<std::size_t>(s.m) * s.n); // starts as NaN
  std::memset(trace(), 0, sizeof(Trace));
  set_trace(trace());
  steps::Stream stream;
  gemm(s.m, s.n, s.k, reinterpret_cast<const __nv_fp8_e4m3*>(da.data()),
       reinterpret_cast<const __nv_fp8_e4m3*>(db.data()), dd.data(), stream);
  stream.synchronize();

  const std::string protocol = protocol_finding();
  if (!protocol.empty()) return protocol;
  const steps::Comparison guards = dd.check_guards();
  if (!guards.ok) return "D: " + guards.describe() + " (the given epilogue stores inside m x n only: report this)";

  const std::vector<float> got = dd.download();
  std::vector<long long> want(got.size());
  for (int r = 0; r < s.m; ++r)
    for (int c = 0; c < s.n; ++c) want[static_cast<std::size_t>(r) * s.n + c] = dot(in, r, c, 0, s.k);
  long long bad = 0, first = -1;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(static_cast<double>(got[i]) == static_cast<double>(want[i]))) {
      if (first < 0) first = static_cast<long long>(i);
      ++bad;
    }
  if (first < 0) return "";
  const int r = static_cast<int>(first / s.n), c = static_cast<int>(first % s.n);
  std::ostringstream os;
  os << "D is wrong: " << bad << " of " << got.size() << " elements differ; the first is D(" << r << ", " << c
     << ") = " << steps::format_value(got[first]) << ", expected " << want[first] << ".\n  ";
  if (std::isnan(got[first]))
    os << "It is NaN: never written (the kernel did not get to the epilogue?), or computed from a NaN.";
  else
    os << pattern(in, got, want, r, c);
  os << descriptor_hints();
  return os.str();
}

/// After a CUDA error (e.g. a descriptor pointing outside shared memory):
/// what the trace says.
std::string wgmma_hint(const steps::Error& e) {
  std::string out;
  const std::string protocol = protocol_finding();
  if (!protocol.empty()) out += protocol;
  const std::string desc = descriptor_hints();
  if (!desc.empty()) out += (out.empty() ? "" : "\n") + std::string("the descriptors may point outside the tiles.") + desc;
  if (out.empty() && e.code_name() == "cudaErrorIllegalAddress")
    out = "a descriptor's start address outside shared memory? Its field is (address & 0x3FFFF) >> 4.";
  return out;
}

void grade(const std::vector<Shape>& shapes) { steps::grade::shapes(shapes, name_of, run_shape, wgmma_hint); }

} // namespace

TEST_CASE("one tile, edges of tiles, K tails", "[wgmma]") {
  grade({{64, 128, 128}, {1, 1, 16}, {1, 8, 32}, {17, 9, 48}, {65, 129, 144}, {63, 127, 112}, {100, 7, 272},
         {3, 200, 400}});
}

TEST_CASE("several tiles and K blocks", "[wgmma]") {
  grade({{128, 256, 256}, {129, 257, 464}, {200, 300, 1040}, {256, 384, 2048}, {64, 1000, 1008}});
}

TEST_CASE("large", "[wgmma][large]") { grade({{1000, 520, 4112}, {2048, 1024, 1024}}); }

// The limits of gemm (wgmma.hpp). Nothing is allocated: it must refuse these
// before it touches memory.
TEST_CASE("bad sizes are refused before any GPU work", "[wgmma]") {
  const std::vector<Shape> bad = {{0, 8, 32},       {8, 0, 32},       {8, 8, 0},        {8, 8, 24},
                                  {65536, 16, 32768}, {16, 65536, 32768}, {65536, 32768, 16}};
  for (const Shape& s : bad) {
    INFO(name_of(s));
    REQUIRE_THROWS_AS(gemm(s.m, s.n, s.k, nullptr, nullptr, nullptr, nullptr), std::invalid_argument);
  }
}

TEST_CASE("wgmma gemm speed", "[.speed]") {
  require_hopper();
  const int m = 4096, n = 4096, k = 4096;
  set_trace(nullptr);
  steps::DeviceBuffer<std::uint8_t> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(n) * k);
  steps::DeviceBuffer<float> d(static_cast<std::size_t>(m) * n);
  a.fill_bytes(0x38); // 1.0
  b.fill_bytes(0x38);
  steps::grade::time_speed(
      "wgmma gemm at 4096 x 4096 x 4096",
      [&](cudaStream_t st) {
        gemm(m, n, k, reinterpret_cast<const __nv_fp8_e4m3*>(a.data()), reinterpret_cast<const __nv_fp8_e4m3*>(b.data()),
             d.data(), st);
      },
      0, 2.0 * m * n * k);
}
