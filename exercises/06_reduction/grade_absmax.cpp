// Grader for exercise 06 (absmax). Built twice: against your exercises/ code
// (./tutorial grade 06) and against the solution (part of ./tutorial test).
//
// Every shape runs on fresh random data in a guarded device array: the
// memory around x holds NaN (a stray read), the memory around *out and the
// workspace holds known bytes (a stray write shows). *out starts poisoned
// (all bits set), the workspace full of garbage (0xA5 bytes). The expected
// result comes from a CPU scan of the same data, or, for the [.huge] case,
// from the values planted in it (all larger than any random value). The
// result is compared exactly, the value bit for bit (+0.0, never -0.0). Your
// function gets a non-blocking stream with work still pending ahead of it
// (the grader's, which finishes writing x, poisons *out and fills the
// workspace with garbage): work that is not in that stream gives a wrong
// result. One check reads the compiled code: a fence before the ticket.
#include "absmax.hpp"

#include "steps/catch.hpp"
#include "steps/error.hpp"
#include "steps/grade.hpp"
#include "steps/guarded.hpp"
#include "steps/memory.hpp"
#include "steps/random.hpp"
#include "steps/timing.hpp"

#include <cxxabi.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

/// A value written over the random data at one index.
struct Plant {
  std::size_t index;
  float value;
};

constexpr std::size_t kResultWords = sizeof(ex06::Result) / sizeof(std::uint64_t);
static_assert(sizeof(ex06::Result) == kResultWords * sizeof(std::uint64_t), "Result is two 64-bit words");

struct Shape {
  Shape(std::size_t n_, std::string what_, std::vector<Plant> plants_ = {}, std::size_t offset_ = 0,
        float lo_ = -1.0f, float hi_ = 1.0f, bool equal_ = false, bool zeros_ = false)
      : n(n_), what(std::move(what_)), plants(std::move(plants_)), offset(offset_), lo(lo_), hi(hi_),
        equal(equal_), zeros(zeros_) {}
  std::size_t n;
  std::string what;          ///< what the shape tests, in the learner's words
  std::vector<Plant> plants; ///< written over the random data
  std::size_t offset;        ///< x starts this many floats past a 16-byte boundary
  float lo, hi;              ///< range of the random data
  bool equal;                ///< every element has |x| = 0.5, alternating signs: a tie everywhere
  bool zeros;                ///< every element is -0.0 or +0.0 (-0.0 first), before the plants
};

/// The result's value must match bit for bit: +0.0 and -0.0 compare equal
/// as numbers, but |x| is never -0.0.
bool same_value(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::string name_of(const Shape& s) {
  std::ostringstream os;
  os << "n = " << s.n;
  if (s.offset) os << " (x offset " << s.offset << ")";
  if (!s.what.empty()) os << ": " << s.what;
  return os.str();
}

std::string show(const ex06::Result& r) {
  std::ostringstream os;
  os << "{value " << steps::format_value(r.value) << ", index " << r.index << "}";
  return os.str();
}

bool never_written(const ex06::Result& r) {
  std::uint32_t value_bits;
  std::memcpy(&value_bits, &r.value, sizeof value_bits);
  return value_bits == 0xFFFFFFFFu && r.index == ~std::uint64_t{0};
}

// What went wrong, in a learner's words. `x` is the input (empty for the
// huge case, whose data stays on the GPU).
std::string explain(const Shape& s, const ex06::Result& got, const ex06::Result& want, const std::vector<float>& x) {
  const std::string head = "expected " + show(want) + ", got " + show(got) + "\n  Hint: ";
  if (never_written(got))
    return head + "*out was never written (it still holds the grader's poison). Does your kernel run (n == 0 "
                  "too)? Does exactly one thread write the final result? If you count arriving blocks in "
                  "the workspace, did you initialize the counter (the workspace holds garbage) in `stream`? The "
                  "grader's stream has work pending ahead of your call (it finishes writing x and fills the "
                  "workspace with garbage): a cudaMemset without Async, or a kernel in the default stream 0, "
                  "runs before it.";
  if (got.value == 0.0f && std::signbit(got.value))
    return head + "your value is -0.0, a negative zero: the magnitude |x| is never negative, and |-0.0| is "
                  "+0.0 (fabsf clears the sign bit; v < 0 ? -v : v keeps -0.0, because -0.0 < 0 is false).";
  if (std::isnan(got.value))
    return head + "the inputs are finite, so a NaN comes from reading outside x (the memory around it "
                  "holds NaN) or from memory you never wrote. Check every bound, the last block and the "
                  "tail of your loop.";
  if (s.n == 0)
    return head + "for n == 0 the result must be {-1, 0}: the empty result, which is also the identity "
                  "of your reduction (the candidate of a thread without elements).";
  if (got.value == -1.0f && got.index == s.n)
    return head + "your result is the empty result {-1, n}: not a single element was considered. Does every "
                  "element reach a thread's loop (the elements after the last whole group of loads, arrays "
                  "smaller than one group)?";
  if (got.index >= s.n)
    return head + "the index is past the end of x: a candidate of a thread without elements (the identity) "
                  "won, or an index was computed wrongly.";
  if (!x.empty()) {
    const float at = x[got.index];
    if (got.value == at && at < 0)
      return head + "your value is x[" + std::to_string(got.index) + "] itself, negative: the result is the "
                    "largest MAGNITUDE |x[i]| (fabsf).";
    if (std::fabs(at) != got.value)
      return head + "value and index do not belong together: |x[" + std::to_string(got.index) + "]| = " +
             steps::format_value(std::fabs(at)) + ". Do you move the value and the index together at every "
             "step (both shuffled with the same offset, both stored and loaded)?";
  }
  if (got.value == want.value)
    return head + "a tie broken the wrong way: several elements have |x| = " + steps::format_value(want.value) +
           ", and the smallest index must win. Check the tie rule at EVERY level: in a thread's loop (a strict "
           ">), between lanes, between warps and between blocks (compare the indices when the values are "
           "equal).";
  if (got.value < want.value)
    return head + "your maximum is too small: element " + std::to_string(want.index) + " was never "
           "considered. A lost tail (the last elements after your main loop)? A lane, warp or block left "
           "out of a combine? A shuffle loop that stops too early? A missing __syncthreads() before warp 0 "
           "reads the warps' results?";
  return head + "your maximum is larger than every |x[i]|: a value from outside x, or from a shared-memory "
                "slot or workspace entry that was not written in this call.";
}

// Runs absmax on one shape and checks everything. Returns "" when correct.
std::string run_shape(const Shape& s, std::uint64_t seed) {
  constexpr std::size_t kHostLimit = std::size_t{1} << 26; // beyond: data generated and checked on the GPU
  const bool on_host = s.n <= kHostLimit;
  std::vector<float> x;
  steps::GuardedBuffer<float> dx(s.n, s.offset);
  if (on_host) {
    x = steps::random_vector(s.n, seed, s.lo, s.hi);
    if (s.equal)
      for (std::size_t i = 0; i < s.n; ++i) x[i] = i % 2 ? -0.5f : 0.5f;
    if (s.zeros)
      for (std::size_t i = 0; i < s.n; ++i) x[i] = i % 2 ? 0.0f : -0.0f;
    for (const auto& p : s.plants) x.at(p.index) = p.value;
    dx.upload(x.data());
  } else {
    steps::fill_uniform_device(dx.data(), s.n, seed, s.lo, s.hi);
    for (const auto& p : s.plants) {
      if (!(std::fabs(p.value) > std::fmax(std::fabs(s.lo), std::fabs(s.hi))) || p.index >= s.n)
        throw std::logic_error("grader: a huge shape's plants must exceed every random value");
      CUDA_CHECK(cudaMemcpy(dx.data() + p.index, &p.value, sizeof(float), cudaMemcpyHostToDevice));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  // The expected result: the first largest magnitude.
  ex06::Result want{-1.0f, 0};
  if (on_host) {
    for (std::size_t i = 0; i < s.n; ++i)
      if (std::fabs(x[i]) > want.value) want = {std::fabs(x[i]), i}; // fabs(-0.0) is +0.0
  } else {
    for (const auto& p : s.plants)
      if (std::fabs(p.value) > want.value || (std::fabs(p.value) == want.value && p.index < want.index))
        want = {std::fabs(p.value), p.index};
  }

  // *out: one Result in a guarded buffer of 64-bit words (GuardedBuffer
  // compares guard values as numbers, which a struct is not). It starts
  // poisoned: all bits set.
  steps::GuardedBuffer<std::uint64_t> out(kResultWords);
  steps::GuardedBuffer<unsigned char> workspace(ex06::kWorkspaceBytes);
  // x is scrambled, *out not yet poisoned and the workspace not yet full of
  // garbage (0xA5 bytes, as the contract says) until the work pending in the
  // stream has run: work not ordered after it gives a wrong result.
  steps::grade::BusyStream stream;
  stream.restores(dx.data(), s.n * sizeof(float));
  stream.fills(out.data(), sizeof(ex06::Result), 0xFF);
  stream.fills(workspace.data(), ex06::kWorkspaceBytes, 0xA5);
  stream.start();
  ex06::absmax(dx.data(), s.n, reinterpret_cast<ex06::Result*>(out.data()), workspace.data(), stream);
  stream.finish();

  if (const auto c = out.check_guards(); !c.ok)
    return "you wrote outside *out (one Result): " + c.describe();
  if (const auto c = workspace.check_guards(); !c.ok)
    return "you wrote outside the workspace (" + std::to_string(ex06::kWorkspaceBytes) + " bytes): " + c.describe();
  if (const auto c = dx.check_guards(); !c.ok) return "you wrote into the memory around x: " + c.describe();
  if (on_host && s.n > 0) {
    const auto after = dx.download();
    if (std::memcmp(after.data(), x.data(), s.n * sizeof(float)) != 0)
      return "x changed, but it is an input: " +
             steps::compare(after, x, steps::Tolerance::exact()).describe();
  }
  const std::vector<std::uint64_t> words = out.download();
  ex06::Result got;
  std::memcpy(&got, words.data(), sizeof got);
  if (same_value(got.value, want.value) && got.index == want.index) return "";
  return "wrong result: " + explain(s, got, want, x);
}

void grade(const std::vector<Shape>& shapes) { steps::grade::shapes(shapes, name_of, run_shape); }

// Equal magnitudes at every `step`-th element from `first`: many ties, spread
// over lanes, warps and blocks in every order of threads.
std::vector<Plant> every(std::size_t first, std::size_t step, std::size_t n, float value) {
  std::vector<Plant> plants;
  for (std::size_t i = first; i < n; i += step) plants.push_back({i, (plants.size() % 2) ? -value : value});
  return plants;
}

} // namespace

TEST_CASE("absmax on small and odd sizes", "[absmax]") {
  grade({{0, "empty: the result is {-1, 0}"},
         {1, "one element"},
         {1, "one negative element", {{0, -0.75f}}},
         {2, "", {{1, 0.9f}}},
         {3, ""},
         {5, "", {{4, -0.95f}}},
         {31, "one warp minus one"},
         {32, "one warp", {{31, 1.5f}}},
         {33, "one warp plus one", {{32, -1.5f}}},
         {255, ""},
         {256, "one block of 256", {{255, 1.25f}}},
         {257, "", {{256, 1.25f}}},
         {1023, ""},
         {1024, "", {{1023, -1.25f}}},
         {1025, "", {{1024, 1.25f}}},
         {4099, "prime"},
         {65537, "prime", {{65536, -1.5f}}}});
}

TEST_CASE("absmax finds the maximum wherever it is", "[absmax]") {
  grade({{100000, "maximum in the first element, negative", {{0, -1.5f}}},
         {100003, "maximum in the last element", {{100002, 1.5f}}},
         {100003, "maximum one before the last", {{100001, -1.5f}}},
         {100003, "maximum in the middle", {{50001, -1.5f}}},
         {1000003, "maximum inside the tail (more elements than threads on most GPUs)", {{1000001, 1.5f}}},
         {4099, "all values negative: the largest magnitude is the most negative", {}, 0, -1.0f, -0.001f},
         {4099, "all values positive", {}, 0, 0.001f, 1.0f},
         {1025, "x misaligned by 1", {{1024, 1.5f}}, 1},
         {1025, "x misaligned by 2", {{3, -1.5f}}, 2},
         {4099, "x misaligned by 3", {{4098, 1.5f}}, 3}});
}

// |x| is never negative: for -0.0 it is +0.0, and the result's value is
// compared bit for bit (as numbers, -0.0 == +0.0).
TEST_CASE("absmax of zeros: the magnitude of -0.0 is +0.0", "[absmax][zeros]") {
  grade({{1, "one -0.0: the result is {+0.0, 0}", {}, 0, -1.0f, 1.0f, false, true},
         {2, "-0.0 then +0.0: a tie, the first wins, and its magnitude is +0.0", {}, 0, -1.0f, 1.0f, false, true},
         {4099, "-0.0 and +0.0 alternating", {}, 0, -1.0f, 1.0f, false, true},
         {100003, "-0.0 and +0.0 alternating, over many blocks", {}, 0, -1.0f, 1.0f, false, true}});
}

TEST_CASE("absmax breaks ties towards the smallest index", "[absmax][ties]") {
  grade({{2, "two equal magnitudes", {{0, -0.5f}, {1, 0.5f}}},
         {64, "a tie between lanes of one warp", {{38, -2.0f}, {37, 2.0f}, {5, 2.0f}}},
         {1000, "-3 at 200 and +3 at 700", {{700, 3.0f}, {200, -3.0f}}},
         {1025, "a tie between the last and the first element", {{1024, 2.0f}, {0, -2.0f}}},
         {200003, "a tie between blocks", {{150000, 2.0f}, {100001, -2.0f}, {5000, 2.0f}}},
         {100003, "every element has |x| = 0.5", {}, 0, -1.0f, 1.0f, true}});
}

// More elements than threads: every thread loops many times. Kept out of the
// compute-sanitizer pass (slow there); the shapes above run under it.
TEST_CASE("absmax on large sizes (more elements than threads)", "[absmax][large]") {
  grade({{(1u << 20) + 7, "random"},
         {1000003, "maximum in the middle", {{500001, -1.5f}}},
         {(1u << 20) + 7, "equal maxima every 997 elements", every(12, 997, (1u << 20) + 7, 2.5f)},
         {(1u << 20) + 7, "equal maxima every 262144 elements (in different blocks)",
          every(300, 262144, (1u << 20) + 7, 2.5f), 1},
         {(1u << 24) + 1, "maximum in the last element", {{1u << 24, -1.5f}}},
         {(1u << 24) + 1, "a tie far apart", {{(1u << 24) - 3, 2.0f}, {7, -2.0f}}, 3},
         {(1u << 24) + 1, "every element has |x| = 0.5", {}, 0, -1.0f, 1.0f, true}});
}

// --- The fence before the ticket: a structural check ----------------------
//
// A block that stores its candidate, then takes a ticket (atomicAdd) without
// a __threadfence() in between, lets the last block read that candidate
// before it is visible: a wrong result on rare runs, which no test run can
// provoke on demand. So this check reads the compiled code instead (the SASS
// of this program, or its PTX, with cuobjdump): every kernel of yours that
// takes a value back from a global atomicAdd or atomicInc must have a memory
// fence before it.

/// "" when `k` is fine, else the offending instruction.
std::string ticket_without_fence(const steps::grade::CompiledKernel& k) {
  const bool ptx = k.arch.rfind("ptx", 0) == 0;
  bool fenced = false;
  for (const std::string& ins : k.instructions) {
    if (ptx) {
      if (ins.rfind("membar", 0) == 0 || ins.rfind("fence.", 0) == 0) fenced = true;
      const bool ticket = ins.rfind("atom.", 0) == 0 && (ins.find(".add") != std::string::npos ||
                                                         ins.find(".inc") != std::string::npos);
      if (ticket && (ins.find(".release") != std::string::npos || ins.find(".acq_rel") != std::string::npos))
        fenced = true;
      if (ticket && !fenced) return ins;
    } else {
      if (ins.find("MEMBAR") != std::string::npos) fenced = true;
      const bool atom = ins.find("ATOM.") != std::string::npos || ins.find("ATOMG.") != std::string::npos;
      const bool ticket = atom && (ins.find(".ADD") != std::string::npos || ins.find(".INC") != std::string::npos);
      if (ticket && !fenced) return ins;
    }
  }
  return "";
}

std::string readable(const std::string& mangled) {
  int status = 0;
  char* name = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && name ? name : mangled;
  std::free(name);
  return out;
}

TEST_CASE("absmax: a fence before every ticket (structural check of the compiled code)", "[absmax][structure]") {
  if (steps::grade::under_sanitizer()) {
    SUCCEED("checked in the run without compute-sanitizer");
    return;
  }
  std::string why;
  const auto kernels = steps::grade::compiled_kernels("ex06", &why);
  if (kernels.empty()) {
    std::cout << "note: the fence before the ticket was not checked here: " << why << ".\n";
    SUCCEED("not checked: " << why);
    return;
  }
  for (const auto& k : kernels) {
    const std::string bad = ticket_without_fence(k);
    if (!bad.empty())
      FAIL("a structural check of your compiled kernel (cuobjdump, " << k.arch << "), not a run: "
           << readable(k.name) << " takes a ticket with a global atomic (" << bad
           << ") with no memory fence before it.\n  Hint: store the block's candidate, then __threadfence(), "
              "then atomicAdd: without the fence the last block may read a candidate before it has reached "
              "memory, a wrong result on rare runs that no test can provoke on demand (chapter 06, v7).");
    SUCCEED(readable(k.name) << " (" << k.arch << "): no ticket, or a fence before it");
  }
}

// Past 2^32 elements an index held in 32 bits wraps around: a loop over
// unsigned int never reaches n, one over int misses the end. 2^32 + 5 floats
// take 16 GiB of GPU memory (no host copy: the expected result comes from
// the planted values), so this case is hidden ([.huge]): ./tutorial grade
// runs it after the others pass, alone, and where the GPU lacks the memory
// it says so and is not checked.
TEST_CASE("absmax past 2^32 elements (64-bit indexing)", "[.huge]") {
  const std::size_t n = (std::size_t{1} << 32) + 5;
  std::size_t free_bytes = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < n * sizeof(float) + (std::size_t{1} << 30)) {
    std::cout << "SKIPPED: n = 2^32 + 5 needs 17 GiB of free GPU memory; this GPU has " << (free_bytes >> 20)
              << " MiB free: 64-bit indexing is not checked here.\n";
    std::exit(77);
  }
  grade({{n, "maximum past 2^32, a smaller one near the start", {{10, 2.5f}, {n - 2, -3.0f}}}});
}

TEST_CASE("absmax speed", "[.speed]") {
  const std::size_t n = std::size_t{1} << 26;
  REQUIRE(run_shape({n, "random"}, 99).empty());
  steps::DeviceBuffer<float> x(n);
  steps::fill_uniform_device(x.data(), n, 5);
  steps::DeviceBuffer<ex06::Result> out(1);
  steps::DeviceBuffer<unsigned char> workspace(ex06::kWorkspaceBytes);
  steps::TimingOptions opts;
  opts.iters = 50;
  const auto ms = steps::time_gpu(
      [&](cudaStream_t s) { ex06::absmax(x.data(), n, out.data(), workspace.data(), s); }, opts);
  steps::grade::report_speed("absmax on 2^26 floats", ms, 4.0 * static_cast<double>(n));
}
