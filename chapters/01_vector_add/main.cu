// Chapter 01: vector add, c[i] = a[i] + b[i].
//
// The simplest useful kernel, and a memory-bound one: each element costs one
// addition and 12 bytes of traffic (two 4-byte reads, one 4-byte write), so
// the speed limit is the memory system, not arithmetic. The chapter's three
// versions are measured against cudaMemcpy device-to-device (the fastest a
// vendor routine moves bytes on this GPU) and the theoretical DRAM bandwidth.
//
//   v1 one_per_thread  one element per thread, grid = ceil(n / 256) blocks
//   v2 grid_stride     one full wave of blocks looping over the array
//   v3 float4          v2 with 16-byte loads/stores, head and tail handled
//
// Run: ./tutorial run 01    (or build/bin/ch01_vector_add --help)
#include "mistakes.cuh"
#include "v1_one_per_thread.cuh"
#include "v2_grid_stride.cuh"
#include "v3_float4.cuh"

#include "steps/chapter.hpp"
#include "steps/guarded.hpp"
#include "steps/random.hpp"

#if STEPS_WITH_EXERCISE
#include "axpby.hpp"
#endif

#include <cstdio>
#include <string>
#include <vector>

namespace ch01 {

// Coefficients of your exercise row, y = kAlpha * x + kBeta * y.
constexpr float kAlpha = 2.0f;
constexpr float kBeta = -0.5f;

/// Inputs, output and CPU reference of one run of the chapter.
class VectorAdd {
public:
  VectorAdd(const steps::Options& opts, const steps::DeviceInfo& dev)
      : dev_(dev), n_(static_cast<std::size_t>(opts.size)), offset_(static_cast<std::size_t>(opts.get("--offset"))),
        // Device memory first: a size that does not fit fails here, before
        // any host memory is spent on it.
        a_(n_, offset_), b_(n_, offset_), c_(n_, offset_) {
    // Random inputs, generated on the GPU, copied back for the reference.
    steps::fill_uniform_device(a_.data(), n_, opts.seed, -1.0f, 1.0f);
    steps::fill_uniform_device(b_.data(), n_, opts.seed + 1, -1.0f, 1.0f);
    a_host_ = a_.download();
    b_host_ = b_.download();
    sum_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i) sum_[i] = a_host_[i] + b_host_[i];
  }

  // The exercise's reference, y = alpha * a + beta * b, computed in double
  // and rounded once; made on first use only.
  const std::vector<float>& axpby_reference() const {
    if (axpby_.empty()) {
      axpby_.resize(n_);
      for (std::size_t i = 0; i < n_; ++i)
        axpby_[i] = static_cast<float>(double{kAlpha} * a_host_[i] + double{kBeta} * b_host_[i]);
    }
    return axpby_;
  }

  std::string describe() const {
    char buf[160];
    std::snprintf(buf, sizeof buf, "c = a + b, n = %zu floats (3 arrays of %s), offset %zu", n_,
                  steps::format_bytes(4.0 * static_cast<double>(n_)).c_str(), offset_);
    return buf;
  }

  steps::Work work(const std::string& name) const {
    const double n = static_cast<double>(n_);
    if (name == "memcpy") return {2 * 4 * n, 0};  // read a, write c
    return {3 * 4 * n, n};                        // read a and b (or x and y), write c (or y)
  }

  void reset(const std::string& name) {
    c_.poison();                                  // NaN everywhere: unwritten elements show
    if (name == "yours") c_.copy_from_device(b_.data()); // y starts as b
  }

  steps::Comparison check(const std::string& name) const {
    const steps::Comparison guards = c_.check_guards();
    if (!guards.ok) return guards;
    c_.download(got_);
    if (name == "memcpy") return steps::compare(got_, a_host_, steps::Tolerance::exact());
    if (name == "yours") return steps::compare(got_, axpby_reference(), steps::Tolerance::fp32());
    // One float addition rounds the same way on the CPU and the GPU: exact.
    return steps::compare(got_, sum_, steps::Tolerance::exact());
  }

  const float* a() const { return a_.data(); }
  const float* b() const { return b_.data(); }
  float* c() { return c_.data(); }
  std::size_t n() const { return n_; }
  const steps::DeviceInfo& dev() const { return dev_; }

private:
  steps::DeviceInfo dev_;
  std::size_t n_, offset_;
  steps::GuardedBuffer<float> a_, b_, c_;
  std::vector<float> a_host_, b_host_, sum_;
  mutable std::vector<float> got_, axpby_; // reused between checks
};

using Version = steps::Version<VectorAdd>;

// The registry: the CLI, the table and the JSON all come from this list.
const std::vector<Version> kVersions = {
    {"memcpy", "cudaMemcpy device-to-device of one array (speed of light)", steps::Role::baseline,
     [](VectorAdd& p, cudaStream_t s) {
       CUDA_CHECK(cudaMemcpyAsync(p.c(), p.a(), p.n() * sizeof(float), cudaMemcpyDeviceToDevice, s));
     }},
    {"one_per_thread", "v1: one element per thread, ceil(n/256) blocks", steps::Role::version,
     [](VectorAdd& p, cudaStream_t s) { v1::launch(p.a(), p.b(), p.c(), p.n(), s); }},
    {"grid_stride", "v2: one full wave of blocks, grid-stride loop", steps::Role::version,
     [](VectorAdd& p, cudaStream_t s) { v2::launch(p.a(), p.b(), p.c(), p.n(), p.dev(), s); }},
    {"float4", "v3: v2 with 16-byte float4 accesses, scalar head and tail", steps::Role::version,
     [](VectorAdd& p, cudaStream_t s) { v3::launch(p.a(), p.b(), p.c(), p.n(), p.dev(), s); }},
#if STEPS_WITH_EXERCISE
    {"yours", "exercise 01: your axpby, y = 2x - 0.5y (same bytes as a + b)", steps::Role::yours,
     [](VectorAdd& p, cudaStream_t s) { ex01::axpby(kAlpha, p.a(), kBeta, p.c(), p.n(), s); }},
#endif
    {"mistake_index_product", "index = blockIdx.x * threadIdx.x", steps::Role::mistake,
     [](VectorAdd& p, cudaStream_t s) { mistakes::index_product(p.a(), p.b(), p.c(), p.n(), s); }},
    {"mistake_too_few_blocks", "n / 256 blocks: the tail gets no thread", steps::Role::mistake,
     [](VectorAdd& p, cudaStream_t s) { mistakes::too_few_blocks(p.a(), p.b(), p.c(), p.n(), s); }},
    {"mistake_no_bounds_check", "no `if (i < n)`: the last block writes past the end", steps::Role::mistake,
     [](VectorAdd& p, cudaStream_t s) { mistakes::no_bounds_check(p.a(), p.b(), p.c(), p.n(), s); }},
    {"mistake_block_too_large", "2048 threads per block: the launch fails", steps::Role::mistake,
     [](VectorAdd& p, cudaStream_t s) { mistakes::block_too_large(p.a(), p.b(), p.c(), p.n(), s); }},
};

steps::ChapterInfo info() {
  steps::ChapterInfo i;
  i.number = "01";
  i.binary = "ch01_vector_add";
  i.title = "Vector add";
  i.summary = "Adds two float arrays with three kernel versions and compares them with cudaMemcpy "
              "device-to-device and the theoretical bandwidth.";
  i.metric = steps::Metric::bandwidth;
  // 2^27 + 3: 512 MiB per array (25x the H200's L2) and deliberately not a
  // multiple of 4 or 256, so every default run exercises the tails.
  i.default_size = (std::int64_t{1} << 27) + 3;
  i.size_help = "elements per array";
  i.default_iters = 50;
  i.work_note = "GB/s: bytes read + written per second, 1 GB = 1e9 B; a + b moves 12 bytes per element "
                "(2 reads + 1 write), memcpy 8 (1 read + 1 write).";
  i.goal = 0.95;
  i.goal_text = ">= 0.95x memcpy";
  i.int_options.push_back({"--offset", "K", "start all arrays K elements past a 16-byte boundary", 0, 0, 3});
  return i;
}

} // namespace ch01

int main(int argc, char** argv) { return steps::run_chapter(argc, argv, ch01::info(), ch01::kVersions); }
