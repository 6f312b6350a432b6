// Chapter 10: v4's warp roles on a timeline, measured (the lesson's figure).
//
// Runs v4 (v4_warp_specialized.cuh) twice on the same FP8 problem: as the
// chapter runs it, then with the recorder of trace.cuh, which writes the SM's
// cycle counter at every wait and arrival of the producer and of both math
// warpgroups, in the first few blocks. Checks that the traced run computed
// the same D bit for bit and that the record obeys the ring (no stage's data
// seen before the producer issued its copy), then writes the record as JSON:
//
//   build/bin/ch10_warp_roles --out docs/results/traces/<GPU>.ch10_warp_roles.json
//
// tools/results.py render draws it (chapters/10_fp8_gemm/figures.py,
// warp_roles). Exit codes: 0 written, 1 a check failed, 2 usage, 77 this GPU
// or build cannot run v4.
#include "fp8_gemm.cuh"
#include "problem.cuh"
#include "trace.cuh"
#include "v4_warp_specialized.cuh"

#include "steps/arch.hpp"
#include "steps/device.hpp"
#include "steps/memory.hpp"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

constexpr const char* kProgram = "ch10_warp_roles";
constexpr int kStages = ch10::v4::kDefaultStages;
constexpr const char* kRoles[3] = {"producer", "math 1", "math 2"};

struct Args {
  int m = 8192, n = 8192, k = 4096; // the chapter's default problem
  int blocks = 2;                   // traced blocks (each on its own SM)
  int capacity = 1024;              // events kept per role: about the first 6 tiles of a math warpgroup
  std::string out;
};

[[noreturn]] void usage(const std::string& why) {
  std::cerr << kProgram << ": error: " << why
            << " (usage: " << kProgram << " --out FILE [--m M] [--n N] [--k K] [--blocks B] [--events E])\n";
  std::exit(2);
}

int positive(const char* name, const char* text, int most) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 1 || v > most)
    usage(std::string(name) + " '" + text + "': a whole number from 1 to " + std::to_string(most));
  return static_cast<int>(v);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string opt = argv[i];
    if (opt == "--help") {
      std::cout << "usage: " << kProgram << " --out FILE [--m M] [--n N] [--k K] [--blocks B] [--events E]\n"
                << "Records when v4's producer and math warpgroups wait, issue, promote and store (the SM's\n"
                << "cycle counter) in the first B blocks (default 2), E events per role (default 1024), on\n"
                << "M x N x K (default 8192 x 8192 x 4096), and writes them to FILE as JSON.\n";
      std::exit(0);
    }
    if (i + 1 >= argc) usage(opt + " needs a value");
    const char* v = argv[++i];
    if (opt == "--out") a.out = v;
    else if (opt == "--m") a.m = positive("--m", v, 1 << 16);
    else if (opt == "--n") a.n = positive("--n", v, 1 << 16);
    else if (opt == "--k") a.k = positive("--k", v, 1 << 16);
    else if (opt == "--blocks") a.blocks = positive("--blocks", v, 132);
    else if (opt == "--events") a.capacity = positive("--events", v, 1 << 16);
    else usage("unknown option '" + opt + "'");
  }
  if (a.out.empty()) usage("--out FILE is required");
  if (a.k % 16 != 0) usage("--k " + std::to_string(a.k) + ": K must be a multiple of 16");
  if (a.n % 8 != 0) usage("--n " + std::to_string(a.n) + ": N must be a multiple of 8 (the TMA store of D)");
  return a;
}

/// `count` random E4M3 codes that are finite numbers (0x7F and 0xFF are NaN:
/// bits 3 and 7 cleared, codes stay at most 0x77, 240).
std::vector<std::uint8_t> random_codes(std::size_t count, std::uint64_t seed) {
  std::vector<std::uint8_t> v(count);
  for (std::size_t i = 0; i < count; ++i) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    v[i] = static_cast<std::uint8_t>(seed >> 56) & 0x77;
  }
  return v;
}

struct Lane {
  std::vector<unsigned long long> cycles;
  std::vector<unsigned> events;
};

/// The record's sanity: the events of each role come in the order its code
/// issues them, at cycles that never go back, and the n-th stage a math
/// warpgroup receives (data) comes after the producer issued that stage's
/// copies (free, n-th). "" when all hold.
std::string check_block(const Lane (&lane)[3], int block) {
  using ch10::TraceEvent;
  const std::string where = "block " + std::to_string(block) + ", ";
  for (int r = 0; r < 3; ++r)
    for (std::size_t i = 1; i < lane[r].cycles.size(); ++i)
      if (lane[r].cycles[i] < lane[r].cycles[i - 1]) return where + kRoles[r] + ": the clock went back at event " + std::to_string(i);
  std::vector<unsigned long long> issued;
  for (std::size_t i = 0; i < lane[0].events.size(); ++i) {
    const unsigned e = lane[0].events[i];
    const unsigned want = i % 2 == 0 ? unsigned(TraceEvent::free_wait) : unsigned(TraceEvent::free);
    if (e != want) return where + "producer: event " + std::to_string(i) + " is " + ch10::event_name(e) + ", expected " + ch10::event_name(want);
    if (e == unsigned(TraceEvent::free)) issued.push_back(lane[0].cycles[i]);
  }
  for (int r = 1; r < 3; ++r) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < lane[r].events.size(); ++i) {
      if (lane[r].events[i] != unsigned(TraceEvent::data)) continue;
      if (n < issued.size() && lane[r].cycles[i] < issued[n])
        return where + kRoles[r] + ": stage " + std::to_string(n) + " seen at cycle " + std::to_string(lane[r].cycles[i]) +
               ", before the producer issued it at " + std::to_string(issued[n]);
      ++n;
    }
    if (n == 0) return where + kRoles[r] + ": no stage received";
  }
  return "";
}

int run(const Args& args) {
  using namespace ch10;
  const steps::DeviceInfo dev = steps::query_device(0);
  const void* kernel = reinterpret_cast<const void*>(v4::fp8_gemm_warp_specialized<kStages, true>);
  if (const std::string why = steps::unmet(steps::Needs{kHopperFeatures, kernel}, dev); !why.empty()) {
    std::cerr << kProgram << ": skipped: GPU 0 (" << dev.name << "): " << why << "\n";
    return 77;
  }
  const int m = args.m, n = args.n, k = args.k, kb = k_blocks(k);
  steps::DeviceBuffer<std::uint8_t> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(n) * k);
  a.copy_from_host(random_codes(a.size(), 1));
  b.copy_from_host(random_codes(b.size(), 2));
  // Every scale 1: the timeline does not depend on the values (v4's output is
  // verified by the chapter's program); the traced D is compared with v4's.
  auto ones = [](std::size_t count) {
    steps::DeviceBuffer<float> s(count);
    s.copy_from_host(std::vector<float>(count, 1.0f));
    return s;
  };
  auto sa = ones(OperandScales::count(Scaling::fine, false, m, k));
  auto sb = ones(OperandScales::count(Scaling::fine, true, n, k));
  auto sa_by_kb = ones(static_cast<std::size_t>(kb) * sa_by_kb_ld(m));
  auto sb_by_kb = ones(static_cast<std::size_t>(kb) * sb_by_kb_ld(n) + 4);
  steps::DeviceBuffer<__nv_bfloat16> d(static_cast<std::size_t>(m) * n);
  Fp8Gemm p;
  p.m = m, p.n = n, p.k = k, p.a = a.data(), p.b = b.data(), p.d = d.data();
  p.sa = OperandScales::layout(Scaling::fine, false, k, sa.data());
  p.sb = OperandScales::layout(Scaling::fine, true, k, sb.data());
  p.sa_by_kb = sa_by_kb.data(), p.sa_by_kb_ld = sa_by_kb_ld(m);
  p.sb_by_kb = sb_by_kb.data(), p.sb_by_kb_ld = sb_by_kb_ld(n);

  const v4::LaunchPlan plan = v4::plan_launch(p);
  const int blocks = std::min(args.blocks, plan.grid);
  for (int i = 0; i < 2; ++i) v4::launch_stages<kStages>(p, plan, nullptr); // as the chapter runs it (and warm)
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<__nv_bfloat16> plain = d.to_host();

  steps::DeviceBuffer<unsigned long long> events(static_cast<std::size_t>(blocks) * 3 * args.capacity);
  events.fill_bytes(0);
  d.fill_bytes(0xFF);
  v4::launch_stages<kStages, true>(p, plan, nullptr, TraceBuffer{events.data(), args.capacity, blocks});
  CUDA_CHECK(cudaDeviceSynchronize());
  const steps::Clocks clocks = steps::current_clocks(0);
  const std::vector<__nv_bfloat16> traced = d.to_host();
  if (std::memcmp(plain.data(), traced.data(), plain.size() * sizeof(plain[0])) != 0) {
    std::cerr << kProgram << ": error: the traced run's D differs from v4's: the recorder changed the work\n";
    return 1;
  }

  const std::vector<unsigned long long> raw = events.to_host();
  std::ofstream out(args.out);
  if (!out) {
    std::cerr << kProgram << ": error: cannot write " << args.out << "\n";
    return 2;
  }
  out << "{\n \"program\": \"" << kProgram << "\",\n \"gpu\": \"" << dev.name << "\",\n \"machine\": \""
      << steps::machine_name(dev, 1) << "\",\n \"sm_clock_mhz\": " << clocks.sm_mhz << ",\n \"boost_clock_mhz\": "
      << dev.sm_clock_khz / 1000 << ",\n \"m\": " << m << ", \"n\": " << n << ", \"k\": " << k << ", \"stages\": "
      << kStages << ", \"grid\": " << plan.grid << ", \"k_blocks_per_tile\": " << kb
      << ",\n \"roles\": [\"producer\", \"math 1\", \"math 2\"],\n \"blocks\": [";
  for (int blk = 0; blk < blocks; ++blk) {
    Lane lane[3];
    unsigned long long first = ~0ULL;
    for (int r = 0; r < 3; ++r)
      for (int i = 0; i < args.capacity; ++i) {
        const unsigned long long w = raw[(static_cast<std::size_t>(blk) * 3 + r) * args.capacity + i];
        if (w == 0) break;
        lane[r].cycles.push_back(w >> 4);
        lane[r].events.push_back(static_cast<unsigned>(w & 15));
        first = std::min(first, w >> 4);
      }
    if (const std::string bad = check_block(lane, blk); !bad.empty()) {
      std::cerr << kProgram << ": error: the record breaks the ring's rules: " << bad << "\n";
      return 1;
    }
    out << (blk ? "," : "") << "\n  {\"block\": " << blk << ", \"lanes\": [";
    for (int r = 0; r < 3; ++r) {
      out << (r ? ", " : "") << "\n   [";
      for (std::size_t i = 0; i < lane[r].cycles.size(); ++i)
        out << (i ? ", " : "") << "[" << lane[r].cycles[i] - first << ", \"" << event_name(lane[r].events[i]) << "\"]";
      out << "]";
    }
    out << "]}";
  }
  out << "\n ]\n}\n";
  std::cout << kProgram << ": " << blocks << " blocks of v4 traced on " << m << " x " << n << " x " << k
            << " (D identical to the untraced run) -> " << args.out << "\n";
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  std::string reason;
  if (!steps::gpu_available(&reason)) {
    std::cerr << kProgram << ": skipped: " << reason << "\n";
    return 77;
  }
  if (const std::string why = steps::build_code_missing(steps::query_device(0)); !why.empty()) {
    std::cerr << kProgram << ": skipped: " << why << "\n";
    return 77;
  }
  try {
    return run(args);
  } catch (const std::exception& e) {
    std::cerr << kProgram << ": error: " << e.what() << "\n";
    return 1;
  }
}
