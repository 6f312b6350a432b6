/// @file arch.hpp
/// @brief The one table of GPU architecture facts: arithmetic rates per clock,
///        per-SM limits and the features a kernel may need, per compute
///        capability; and the one way for a row, an exercise or a test to say
///        what it needs and to learn why it cannot run here.
///
/// Nothing else in the course holds a per-architecture constant. A chapter's
/// "% of peak" reads its rate from here and multiplies by the GPU's own SM
/// count and clock; a row that needs TMA says `Feature::tma` and is skipped
/// with the reason on a GPU without it:
/// @code
/// const steps::ArchFacts& h100 = steps::arch_facts(9, 0);
/// h100.fp32_fma_per_clock;                 // 128 per SM
/// h100.tensor_flop_per_clock(steps::TensorType::fp8);   // 8192 per SM (dense)
/// steps::lacks(dev, {steps::Feature::tma});   // "" on sm_90, else the reason
/// @endcode
///
/// A GPU that has a feature still runs the row only if the binary holds the
/// row's code for it: a build for sm_80 run on an sm_89 GPU carries an sm_80
/// copy of an FP8 kernel whose body was compiled out. code_missing() reads the
/// code the CUDA runtime picked for a kernel (cudaFuncGetAttributes) and
/// names the architecture to rebuild for.
#pragma once

#include "steps/device.hpp"

#include <initializer_list>
#include <string>
#include <vector>

namespace steps {

/// Something a kernel may need from the GPU (and from the code it was compiled to).
enum class Feature {
  ldmatrix,    ///< ldmatrix and mma.sync m16n8k8 on FP16 (sm_75)
  mma_bf16,    ///< mma.sync m16n8k16 on BF16/FP16 with FP32 accumulators (sm_80)
  cp_async,    ///< cp.async global -> shared copies (sm_80)
  fp8_mma,     ///< mma.sync on FP8 (e4m3/e5m2) operands (sm_89)
  mbarrier_tx, ///< mbarrier with transaction counts, try_wait (sm_90)
  tma,         ///< the Tensor Memory Accelerator: cp.async.bulk.tensor (sm_90)
  clusters,    ///< thread-block clusters, distributed shared memory (sm_90)
  wgmma,       ///< warpgroup MMA, wgmma.mma_async (sm_90a: Hopper only)
};

/// Resident threads per SM of compute capability `cc` (x 10: 75, 86, 90):
/// 1024 on sm_75, 1536 on sm_86, 87, 89 and 120, 2048 elsewhere. The one
/// place this number is written; the table's max_threads_per_sm reads it, and
/// device code can too, at compile time (`max_threads_per_sm_of(__CUDA_ARCH__
/// / 10)`, for a launch bound that must fit the SM it is compiled for).
#ifdef __CUDACC__
__host__ __device__
#endif
constexpr int max_threads_per_sm_of(int cc) {
  return cc == 75 ? 1024 : (cc == 86 || cc == 87 || cc == 89 || cc == 120) ? 1536 : 2048;
}

/// Every feature, in the order above.
const std::vector<Feature>& all_features();
/// "cp.async", "TMA", "wgmma", ...
std::string feature_name(Feature f);

/// Tensor-core operand types, for tensor_flop_per_clock().
enum class TensorType { fp16, bf16, tf32, fp8, int8 };
/// "FP16", "BF16", "TF32", "FP8", "INT8"
std::string tensor_type_name(TensorType t);

/// The facts of one GPU architecture (one compute capability). Rates are per
/// SM per clock, dense (no sparsity), for the data-centre parts of the
/// family: GeForce parts of sm_86/89/120 run FP16/BF16 with FP32
/// accumulators at half the listed tensor rate.
struct ArchFacts {
  int cc_major = 0;                  ///< compute capability, major
  int cc_minor = 0;                  ///< compute capability, minor
  std::string family;                ///< "Hopper: H100, H200"
  /// FP32 fused multiply-adds per clock per SM (2 FLOP each).
  int fp32_fma_per_clock = 0;
  /// Dense tensor-core FLOP per clock per SM: FP16, BF16, TF32, FP8, INT8
  /// (INT8: operations); 0 where the architecture has no such MMA.
  int tensor_fp16 = 0, tensor_bf16 = 0, tensor_tf32 = 0, tensor_fp8 = 0, tensor_int8 = 0;
  int max_threads_per_sm = 0;        ///< resident threads per SM
  int max_blocks_per_sm = 0;         ///< resident blocks per SM
  int smem_per_sm_kib = 0;           ///< shared memory per SM at the largest carveout, KiB
  int smem_per_block_optin_kib = 0;  ///< per block after opting in (static + dynamic), KiB
  std::vector<Feature> features;     ///< what it has
  /// "sm_90"
  std::string sm() const { return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor); }
  int cc() const { return cc_major * 10 + cc_minor; } ///< 90
  int max_warps_per_sm() const { return max_threads_per_sm / 32; } ///< resident warps per SM
  bool has(Feature f) const;         ///< the architecture has it
  int tensor_flop_per_clock(TensorType t) const; ///< 0 when it has none of that type
};

/// Every architecture the table knows (sm_70 to the newest), oldest first.
const std::vector<ArchFacts>& known_arch_facts();
/// The facts of `cc_major`.`cc_minor`; throws std::invalid_argument naming the
/// architectures it knows for any other.
const ArchFacts& arch_facts(int cc_major, int cc_minor);
/// The facts of this GPU's architecture, or nullptr when the table has none.
const ArchFacts* find_arch_facts(int cc_major, int cc_minor);

/// The first architecture (cc x 10: 80) that has `f`.
int first_arch_with(Feature f);
/// The code a kernel using `f` must be compiled to: "sm_80", or "sm_90a" for
/// the features of one architecture only (wgmma).
std::string code_target(Feature f);
/// True for features that exist in one architecture only (compiled for "sm_90a").
bool arch_specific(Feature f);

/// Peak FP32 rate in TFLOP/s: SMs x FMA per clock x 2 x clock. 0 if unknown.
double fp32_peak_tflops(const DeviceInfo& dev);
/// Peak dense tensor rate in TFLOP/s for type `t`; 0 where the GPU has none.
double tensor_peak_tflops(const DeviceInfo& dev, TensorType t);

/// What a row, an exercise or a test needs to run: features of the GPU, and
/// a kernel whose code must be in the binary for this GPU. Empty = anything.
struct Needs {
  std::vector<Feature> features; ///< what the GPU (and the kernel's code) must have
  const void* kernel = nullptr;  ///< a kernel of the row (its code is checked), or nullptr
  bool empty() const { return features.empty() && kernel == nullptr; }
  /// "TMA, wgmma (sm_90a)": for --list; "" when empty.
  std::string describe() const;
};

/// Why a GPU of this compute capability lacks one of `features` ("" if none
/// is missing): "needs wgmma (sm_90a, Hopper only); this GPU is sm_89".
/// Pure: host-tested.
std::string lacks(int cc_major, int cc_minor, const std::vector<Feature>& features);
/// The same for a device.
std::string lacks(const DeviceInfo& dev, const std::vector<Feature>& features);

/// What the CUDA runtime picked for one kernel on the current device (from
/// cudaFuncGetAttributes).
struct KernelCode {
  bool found = false;      ///< the binary has code that runs on this GPU
  int ptx_arch = 0;        ///< virtual architecture the code was compiled for (80 = compute_80)
  int binary_arch = 0;     ///< the SASS it runs (80 = sm_80)
  std::string error;       ///< why none was found (the CUDA error's name), when !found
};
/// Asks the runtime which code of `kernel` runs on the current device.
KernelCode kernel_code(const void* kernel);

/// Why the kernel's code cannot serve `features` on this GPU ("" if it can):
/// "built for sm_80; rebuild with CMAKE_CUDA_ARCHITECTURES=89". The code was
/// compiled for `code.ptx_arch`; a feature first in architecture A needs
/// ptx_arch >= A (exactly A for arch-specific features). Pure: host-tested.
std::string code_missing(const KernelCode& code, int cc_major, int cc_minor,
                         const std::vector<Feature>& features);

/// The whole decision for a device: lacks() first, then the kernel's code.
/// "" when the row can run.
std::string unmet(const Needs& needs, const DeviceInfo& dev);

/// Why this build has no code that runs on `dev` at all ("" when it has):
/// asked of a kernel of the shared library, compiled for the build's
/// CMAKE_CUDA_ARCHITECTURES like every program and grader ("this binary has
/// no code for this GPU (sm_90: ...); rebuild with CMAKE_CUDA_ARCHITECTURES=90",
/// from an 80-real build: machine code for sm_80 and no PTX to compile).
/// Chapter programs and graders skip (77) with it. Makes `dev` current.
std::string build_code_missing(const DeviceInfo& dev);

} // namespace steps
