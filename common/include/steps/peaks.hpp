// The compute peaks a chapter's table and charts divide by (ChapterInfo::peak),
// from the architecture table (steps/arch.hpp) and the GPU's SM count and
// boost clock.
#pragma once

#include "steps/arch.hpp"
#include "steps/summary.hpp"

#include <string>

namespace steps {

/// Dense tensor cores on `operands` ("BF16", "E4M3") of type `t`: SMs x FLOP
/// per clock per SM x the SM boost clock, labelled `label` ("BF16 tensor").
/// No peak (0, with the reason) where the table gives this GPU none.
inline Peak tensor_peak(const DeviceInfo& dev, TensorType t, const std::string& label, const std::string& operands) {
  const ArchFacts* a = find_arch_facts(dev.cc_major, dev.cc_minor);
  const int per_clock = a ? a->tensor_flop_per_clock(t) : 0;
  if (per_clock == 0) return {label, 0, "this GPU has no " + operands + " tensor cores in the architecture table"};
  return {label, tensor_peak_tflops(dev, t),
          std::to_string(dev.sm_count) + " SMs x " + std::to_string(per_clock) + " FLOP/clock (dense " + operands +
              " tensor cores) x " + std::to_string(dev.sm_clock_khz / 1000) + " MHz (the boost clock)"};
}

} // namespace steps
