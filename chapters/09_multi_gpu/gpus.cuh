// Chapter 09: what the machine has (GPUs, which pairs can reach each
// other's memory, how good each link is), and what rows need from it.
//
// report_topology runs once before the rows (ChapterInfo::before): it notes
// the GPUs of the run, the peer-access pairs and their link ranks (lines
// under the table and in the JSON's "notes"), turns peer access on for every
// pair that allows it, and says in one line when there is nothing to
// exchange (one GPU). A Need says what a row or a whole problem needs ("2
// GPUs", "peer access between GPU 0 and 1"); where it is not met the rows
// are listed as skipped with the reason (steps::Row::unavailable,
// steps::GroupOptions::unavailable), so a 1-GPU run still runs every
// single-GPU row and exits 0, and a goal that needs a skipped row reads
// "not measured (skipped: ...)" (or n/a, when it needs more GPUs than the
// run has) instead of failing.
#pragma once

#include "steps/chapter.hpp"
#include "steps/error.hpp"
#include "steps/run.hpp"

#include <cuda_runtime.h>

#include <functional>
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

/// `row`, run only where `need` is met: elsewhere it is listed as skipped
/// with the reason (asked after its problem is built).
template <class P>
steps::Row<P> needing(Need need, steps::Row<P> row) {
  row.unavailable = [need](const P&, const steps::Run& run) { return need(run); };
  return row;
}

/// Options of a group whose problem can only be built where `need` is met
/// (it allocates on the second GPU, say): elsewhere its rows are listed as
/// skipped with the reason, and the problem is never built.
inline steps::GroupOptions group_needing(Need need) {
  steps::GroupOptions o;
  o.unavailable = [need](const steps::Options&, const steps::Run& run) { return need(run); };
  return o;
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

/// The topology report (ChapterInfo::before, once before the rows): the
/// GPUs of the run, then for each GPU the GPUs whose memory it can map
/// (cudaDeviceCanAccessPeer), with the link's performance rank
/// (cudaDevP2PAttrPerformanceRank: 0 = the best link this machine has) and
/// whether atomics work natively over it; then enables peer access. All of
/// it as notes of the run: printed under the table, kept in the JSON.
inline void report_topology(const steps::Options&, steps::Run& run) {
  const int n = run.gpus();
  int visible = 0;
  CUDA_CHECK(cudaGetDeviceCount(&visible));
  run.note("GPUs in this run: " + std::to_string(n) + " of " + std::to_string(visible) + " visible (from --device " +
           std::to_string(run.ordinal(0)) + " on)");
  if (n == 1) {
    run.note("One GPU: nothing to exchange between GPUs. The single-GPU rows run (stencil_bands and "
             "stencil_bands_overlap: the split's schedules over bands of this GPU); the peer-copy, multi-GPU "
             "stencil and all-reduce rows are skipped (run on a machine with 2 or more GPUs).");
    return;
  }
  for (int a = 0; a < n; ++a) {
    std::string line = "peer access from GPU " + std::to_string(run.ordinal(a)) + " (link rank, native atomics):";
    const char* separator = " GPU ";
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      line += separator + std::to_string(run.ordinal(b));
      separator = ", GPU ";
      if (!can_access(run.ordinal(a), run.ordinal(b))) {
        line += " no";
        continue;
      }
      int rank = 0, atomics = 0;
      CUDA_CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, run.ordinal(a), run.ordinal(b)));
      CUDA_CHECK(cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, run.ordinal(a),
                                           run.ordinal(b)));
      line += " yes (rank " + std::to_string(rank) + (atomics ? ", atomics)" : ", no atomics)");
    }
    run.note(line);
  }
  run.note("link rank: cudaDevP2PAttrPerformanceRank, lower is better (0 = the best link of this machine)");
  enable_peer_access(run);
  run.note("Peer access enabled for every pair that allows it (cudaDeviceEnablePeerAccess).");
}

} // namespace ch09
