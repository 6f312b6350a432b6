// The one table of GPU architecture facts (see arch.hpp).
//
// Sources, per column:
//  - threads, blocks and shared memory per SM, the per-block opt-in: the CUDA
//    C++ Programming Guide, "Technical Specifications per Compute Capability"
//    (resident blocks also in cuda_occupancy.h, which the host test reads);
//  - FP32 FMA per clock per SM: the Programming Guide's "Arithmetic
//    Instructions" table (64 on sm_70/75/80, 128 from sm_86 on, and on Hopper);
//  - tensor FLOP per clock per SM (dense): each part's datasheet peak divided
//    by its SM count and the clock the datasheet states (the host test
//    recomputes T4, A100, A40, L4 and H100 SXM from these columns);
//  - features: the PTX ISA's "Target ISA notes" of ldmatrix, mma (bf16, e4m3),
//    cp.async, mbarrier (expect-tx), cp.async.bulk.tensor, clusters, wgmma.
#include "steps/arch.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

namespace steps {

namespace {

using F = Feature;

ArchFacts facts(int major, int minor, const char* family, int fma, int fp16, int bf16, int tf32, int fp8,
                int int8, int blocks, int smem_kib, int optin_kib, std::vector<Feature> features) {
  const int threads = max_threads_per_sm_of(major * 10 + minor);
  return ArchFacts{major, minor, family,  fma,     fp16,    bf16,      tf32,     fp8,
                   int8,  threads, blocks, smem_kib, optin_kib, std::move(features)};
}

const std::vector<Feature> kTuring{F::ldmatrix};
const std::vector<Feature> kAmpere{F::ldmatrix, F::mma_bf16, F::cp_async};
const std::vector<Feature> kAda{F::ldmatrix, F::mma_bf16, F::cp_async, F::fp8_mma};
const std::vector<Feature> kHopper{F::ldmatrix, F::mma_bf16, F::cp_async, F::fp8_mma,
                                   F::mbarrier_tx, F::tma, F::clusters, F::wgmma};
const std::vector<Feature> kBlackwell{F::ldmatrix, F::mma_bf16, F::cp_async, F::fp8_mma,
                                      F::mbarrier_tx, F::tma, F::clusters};

} // namespace

const std::vector<ArchFacts>& known_arch_facts() {
  // Threads per SM come from max_threads_per_sm_of (arch.hpp).
  //                                               FP32  dense tensor FLOP per clock per SM     blocks  smem opt-in
  //                                               FMA    FP16   BF16   TF32    FP8   INT8      /SM    KiB   KiB
  static const std::vector<ArchFacts> t{
      facts(7, 0, "Volta: V100",                       64,  1024,     0,     0,     0,     0,    32,    96,    96, {}),
      facts(7, 5, "Turing: T4, RTX 20",                64,  1024,     0,     0,     0,  2048,    16,    64,    64, kTuring),
      facts(8, 0, "Ampere: A100, A30",                 64,  2048,  2048,  1024,     0,  4096,    32,   164,   163, kAmpere),
      facts(8, 6, "Ampere: A10, A40, RTX 30",         128,  1024,  1024,   512,     0,  2048,    16,   100,    99, kAmpere),
      facts(8, 7, "Ampere: Jetson Orin",              128,  1024,  1024,   512,     0,  2048,    16,   164,   163, kAmpere),
      facts(8, 9, "Ada: L4, L40, RTX 40",             128,  1024,  1024,   512,  2048,  2048,    24,   100,    99, kAda),
      facts(9, 0, "Hopper: H100, H200",               128,  4096,  4096,  2048,  8192,  8192,    32,   228,   227, kHopper),
      facts(10, 0, "Blackwell: B200",                 128,  8192,  8192,  4096, 16384, 16384,    32,   228,   227, kBlackwell),
      facts(12, 0, "Blackwell: RTX 50",               128,  1024,  1024,   512,  2048,  2048,    24,   100,    99, kBlackwell),
  };
  return t;
}

const std::vector<Feature>& all_features() {
  static const std::vector<Feature> all{F::ldmatrix, F::mma_bf16, F::cp_async, F::fp8_mma,
                                        F::mbarrier_tx, F::tma, F::clusters, F::wgmma};
  return all;
}

std::string feature_name(Feature f) {
  switch (f) {
  case F::ldmatrix: return "ldmatrix";
  case F::mma_bf16: return "BF16 mma.sync";
  case F::cp_async: return "cp.async";
  case F::fp8_mma: return "FP8 mma.sync";
  case F::mbarrier_tx: return "mbarrier transactions";
  case F::tma: return "TMA";
  case F::clusters: return "clusters";
  case F::wgmma: return "wgmma";
  }
  return "?";
}

std::string tensor_type_name(TensorType t) {
  switch (t) {
  case TensorType::fp16: return "FP16";
  case TensorType::bf16: return "BF16";
  case TensorType::tf32: return "TF32";
  case TensorType::fp8: return "FP8";
  case TensorType::int8: return "INT8";
  }
  return "?";
}

bool ArchFacts::has(Feature f) const { return std::find(features.begin(), features.end(), f) != features.end(); }

int ArchFacts::tensor_flop_per_clock(TensorType t) const {
  switch (t) {
  case TensorType::fp16: return tensor_fp16;
  case TensorType::bf16: return tensor_bf16;
  case TensorType::tf32: return tensor_tf32;
  case TensorType::fp8: return tensor_fp8;
  case TensorType::int8: return tensor_int8;
  }
  return 0;
}

const ArchFacts* find_arch_facts(int cc_major, int cc_minor) {
  for (const auto& a : known_arch_facts())
    if (a.cc_major == cc_major && a.cc_minor == cc_minor) return &a;
  return nullptr;
}

const ArchFacts& arch_facts(int cc_major, int cc_minor) {
  if (const ArchFacts* a = find_arch_facts(cc_major, cc_minor)) return *a;
  std::string known;
  for (const auto& a : known_arch_facts()) known += (known.empty() ? "" : ", ") + a.sm();
  throw std::invalid_argument("the architecture table has no entry for compute capability " +
                              std::to_string(cc_major) + "." + std::to_string(cc_minor) + " (sm_" +
                              std::to_string(cc_major) + std::to_string(cc_minor) + "); it knows " + known +
                              " (add it to common/src/arch.cpp from the CUDA Programming Guide's "
                              "per-compute-capability table and the GPU's datasheet)");
}

int first_arch_with(Feature f) {
  for (const auto& a : known_arch_facts())
    if (a.has(f)) return a.cc();
  return 0;
}

bool arch_specific(Feature f) { return f == F::wgmma; }

std::string code_target(Feature f) {
  return "sm_" + std::to_string(first_arch_with(f)) + (arch_specific(f) ? "a" : "");
}

double fp32_peak_tflops(const DeviceInfo& dev) {
  const ArchFacts* a = find_arch_facts(dev.cc_major, dev.cc_minor);
  if (!a) return 0;
  return dev.sm_count * double(a->fp32_fma_per_clock) * 2.0 * dev.sm_clock_khz * 1e3 / 1e12;
}

double tensor_peak_tflops(const DeviceInfo& dev, TensorType t) {
  const ArchFacts* a = find_arch_facts(dev.cc_major, dev.cc_minor);
  if (!a) return 0;
  return dev.sm_count * double(a->tensor_flop_per_clock(t)) * dev.sm_clock_khz * 1e3 / 1e12;
}

std::string Needs::describe() const {
  std::string s;
  std::string target;
  int best = 0;
  for (Feature f : features) {
    s += (s.empty() ? "" : ", ") + feature_name(f);
    const int first = first_arch_with(f) * 10 + (arch_specific(f) ? 1 : 0);
    if (first > best) {
      best = first;
      target = code_target(f);
    }
  }
  if (s.empty()) return "";
  return s + " (" + target + (target.back() == 'a' ? ")" : "+)");
}

std::string lacks(int cc_major, int cc_minor, const std::vector<Feature>& features) {
  if (features.empty()) return "";
  const std::string sm = "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
  const ArchFacts* a = find_arch_facts(cc_major, cc_minor);
  std::string missing;
  std::string target;
  for (Feature f : features) {
    if (a && a->has(f)) continue;
    missing += (missing.empty() ? "" : ", ") + feature_name(f);
    if (target.empty()) target = arch_specific(f) ? code_target(f) + " only" : code_target(f) + " or newer";
  }
  if (missing.empty()) return "";
  if (!a) return "needs " + missing + "; this GPU (" + sm + ") is not in the architecture table (common/src/arch.cpp)";
  return "needs " + missing + " (" + target + "); this GPU is " + sm;
}

std::string lacks(const DeviceInfo& dev, const std::vector<Feature>& features) {
  return lacks(dev.cc_major, dev.cc_minor, features);
}

std::string code_missing(const KernelCode& code, int cc_major, int cc_minor, const std::vector<Feature>& features) {
  const int device = cc_major * 10 + cc_minor;
  // The architecture the code must have been compiled for: the newest first
  // architecture among the features (exactly it, for an arch-specific one).
  int need = 0;
  bool exact = false;
  for (Feature f : features) {
    const int first = first_arch_with(f);
    if (first > need) need = first;
    exact = exact || arch_specific(f);
  }
  const std::string rebuild = std::to_string(exact ? need : device) + (exact ? "a" : "");
  if (!code.found)
    return "this binary has no code for this GPU (sm_" + std::to_string(device) + (code.error.empty() ? "" : ": " + code.error) +
           "); rebuild with CMAKE_CUDA_ARCHITECTURES=" + rebuild;
  if (code.ptx_arch < need || (exact && code.ptx_arch != need))
    return "built for sm_" + std::to_string(code.ptx_arch) + ", which compiles this kernel's body out; rebuild with CMAKE_CUDA_ARCHITECTURES=" +
           rebuild;
  return "";
}

KernelCode kernel_code(const void* kernel) {
  KernelCode code;
  cudaFuncAttributes attr{};
  const cudaError_t err = cudaFuncGetAttributes(&attr, kernel);
  if (err != cudaSuccess) {
    (void)cudaGetLastError(); // not sticky: clear it so that the next call does not report it
    code.error = cudaGetErrorName(err);
    return code;
  }
  code.found = true;
  code.ptx_arch = attr.ptxVersion;
  code.binary_arch = attr.binaryVersion;
  return code;
}

std::string unmet(const Needs& needs, const DeviceInfo& dev) {
  if (std::string why = lacks(dev, needs.features); !why.empty()) return why;
  if (needs.kernel == nullptr) return "";
  return code_missing(kernel_code(needs.kernel), dev.cc_major, dev.cc_minor, needs.features);
}

} // namespace steps
