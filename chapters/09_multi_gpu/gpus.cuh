// Chapter 09: what the machine has (GPUs, which pairs can reach each
// other's memory, how good each link is), and rows that need more than one
// GPU.
//
// The topology report is a group without rows: it runs first, prints the
// device list, the peer-access matrix and the link ranks, turns peer access
// on for every pair that allows it, and says in one line when there is
// nothing to exchange (one GPU). A GatedGroup is a group whose rows each
// name what they need ("2 GPUs", "peer access between GPU 0 and 1"): the
// rows a machine cannot run are left out of the run with one line that says
// why, so a 1-GPU run still runs every single-GPU row and exits 0, and the
// goals of the rows it left out read "not measured" instead of failing.
#pragma once

#include "steps/chapter.hpp"
#include "steps/error.hpp"
#include "steps/run.hpp"

#include <cuda_runtime.h>

#include <cstdio>
#include <functional>
#include <iostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ch09 {

/// "" when `run` can run a row, else why not (one clause: "needs 2 GPUs").
using Need = std::function<std::string(const steps::Run&)>;

/// Rows that need at least `n` GPUs.
inline Need gpus(int n) {
  return [n](const steps::Run& run) {
    return run.gpus() >= n ? std::string() : "needs " + std::to_string(n) + " GPUs (this run has " +
                                                 std::to_string(run.gpus()) + ")";
  };
}

/// True when GPU `a` may map GPU `b`'s memory (CUDA ordinals).
inline bool can_access(int a, int b) {
  int ok = 0;
  CUDA_CHECK(cudaDeviceCanAccessPeer(&ok, a, b));
  return ok != 0;
}

/// Rows that need 2 GPUs and direct access between the first two, both ways
/// (a kernel on one dereferences a pointer into the other).
inline Need peer_pair() {
  return [](const steps::Run& run) {
    if (run.gpus() < 2) return gpus(2)(run);
    if (!can_access(run.ordinal(0), run.ordinal(1)) || !can_access(run.ordinal(1), run.ordinal(0)))
      return "needs peer access between GPU " + std::to_string(run.ordinal(0)) + " and GPU " +
             std::to_string(run.ordinal(1)) + " (cudaDeviceCanAccessPeer says no: no NVLink or PCIe P2P)";
    return std::string();
  };
}

/// Rows that need peer access between every pair of neighbours in the ring.
inline Need peer_ring() {
  return [](const steps::Run& run) {
    if (run.gpus() < 2) return gpus(2)(run);
    for (int g = 0; g < run.gpus(); ++g) {
      const int h = (g + 1) % run.gpus();
      if (!can_access(run.ordinal(g), run.ordinal(h)) || !can_access(run.ordinal(h), run.ordinal(g)))
        return "needs peer access between neighbours GPU " + std::to_string(run.ordinal(g)) + " and GPU " +
               std::to_string(run.ordinal(h));
    }
    return std::string();
  };
}

/// A row and what it needs (empty Need: runs anywhere).
template <class P>
struct Gated {
  steps::Row<P> row;
  Need need;
};

/// A group whose rows run only where their Need is met; the others are left
/// out of this run (no row in the table, "not measured" in the goals), each
/// named on stdout with the reason (on one GPU, only when asked for by
/// --variant: the topology report's one line covers the rest).
template <class P>
class GatedGroup final : public steps::GroupBase {
public:
  explicit GatedGroup(std::vector<Gated<P>> rows) : rows_(std::move(rows)) {}

  std::vector<steps::RowName> names() const override {
    std::vector<steps::RowName> out;
    for (const auto& r : rows_) out.push_back({r.row.name, r.row.what, r.row.role});
    return out;
  }

  bool run(const steps::Options& opts, const steps::ChapterInfo& info, steps::Run& run,
           std::vector<steps::RowResult>& rows, std::vector<std::string>& problems) const override {
    std::vector<steps::Row<P>> runnable;
    for (const auto& r : rows_) {
      const std::string why = r.need ? r.need(run) : std::string();
      if (why.empty()) {
        runnable.push_back(r.row);
      } else if (steps::selected(opts, r.row.name, r.row.role) && (run.gpus() > 1 || !opts.variants.empty())) {
        // On one GPU the topology report has said it once for all rows;
        // a row asked for by name, or skipped for another reason, says why.
        std::cout << "skipped '" << r.row.name << "': " << why << "\n";
      }
    }
    if (runnable.empty()) return true;
    return steps::group<P>(std::move(runnable))->run(opts, info, run, rows, problems);
  }

private:
  std::vector<Gated<P>> rows_;
};

template <class P>
steps::GroupPtr gated(std::vector<Gated<P>> rows) {
  return std::make_shared<GatedGroup<P>>(std::move(rows));
}

/// Turns on peer access from every GPU of the run to every other one that
/// allows it (once per process: a second call finds it on already).
inline void enable_peer_access(const steps::Run& run) {
  // Enabled once per pair and process: a second cudaDeviceEnablePeerAccess
  // fails (cudaErrorPeerAccessAlreadyEnabled), which compute-sanitizer
  // reports as an API error even when the program clears it.
  static std::set<std::pair<int, int>> enabled;
  for (int a = 0; a < run.gpus(); ++a)
    for (int b = 0; b < run.gpus(); ++b) {
      if (a == b || !can_access(run.ordinal(a), run.ordinal(b))) continue;
      if (!enabled.insert({run.ordinal(a), run.ordinal(b)}).second) continue;
      steps::DeviceScope scope(run.ordinal(a));
      const cudaError_t e = cudaDeviceEnablePeerAccess(run.ordinal(b), 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError(); // not an error: clear it so it is not reported later
        continue;
      }
      CUDA_CHECK(e);
    }
}

/// The topology report: a group with no rows that prints what the machine
/// has before the other groups run, and enables peer access.
class Topology final : public steps::GroupBase {
public:
  std::vector<steps::RowName> names() const override { return {}; }

  bool run(const steps::Options&, const steps::ChapterInfo& info, steps::Run& run, std::vector<steps::RowResult>&,
           std::vector<std::string>&) const override {
    const int n = run.gpus();
    int visible = 0;
    CUDA_CHECK(cudaGetDeviceCount(&visible));
    std::cout << "GPUs in this run: " << n << " of " << visible << " visible (from --device " << run.ordinal(0)
              << " on)\n";
    if (n == 1) {
      std::cout << "One GPU: nothing to exchange. The single-GPU rows run; the peer-copy, multi-GPU stencil and "
                   "all-reduce rows are skipped (run on 2 or more GPUs, e.g. " << info.binary << " on a 2-GPU "
                   "machine).\n\n";
      return true;
    }
    // Peer access: can GPU row map GPU column's memory?
    std::cout << "Peer access (row GPU can read/write column GPU's memory; cudaDeviceCanAccessPeer):\n     ";
    for (int b = 0; b < n; ++b) std::printf("%6d", run.ordinal(b));
    std::printf("\n");
    for (int a = 0; a < n; ++a) {
      std::printf("  %3d", run.ordinal(a));
      for (int b = 0; b < n; ++b)
        std::printf("%6s", a == b ? "-" : can_access(run.ordinal(a), run.ordinal(b)) ? "yes" : "no");
      std::printf("\n");
    }
    // Link ranks: cudaDevP2PAttrPerformanceRank, 0 = the best link this
    // machine has; native atomics over the link.
    std::cout << "Link rank (cudaDevP2PAttrPerformanceRank: lower is better) / native atomics over the link:\n     ";
    for (int b = 0; b < n; ++b) std::printf("%8d", run.ordinal(b));
    std::printf("\n");
    for (int a = 0; a < n; ++a) {
      std::printf("  %3d", run.ordinal(a));
      for (int b = 0; b < n; ++b) {
        if (a == b) {
          std::printf("%8s", "-");
          continue;
        }
        int rank = 0, atomics = 0;
        CUDA_CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, run.ordinal(a), run.ordinal(b)));
        CUDA_CHECK(
            cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, run.ordinal(a), run.ordinal(b)));
        char cell[16];
        std::snprintf(cell, sizeof cell, "%d/%s", rank, atomics ? "yes" : "no");
        std::printf("%8s", cell);
      }
      std::printf("\n");
    }
    enable_peer_access(run);
    std::cout << "Peer access enabled for every pair that allows it (cudaDeviceEnablePeerAccess).\n\n";
    return true;
  }
};

} // namespace ch09
