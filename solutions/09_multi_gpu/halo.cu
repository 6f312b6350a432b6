// Exercise 09 (solution): a halo exchange between slices of a 1-D array, on
// any number of GPUs, several slices per GPU allowed.
//
// For each slice and each side, the ghost range is walked from left to
// right in runs: a run is the longest stretch that comes from one place
// (one owning slice, or the outside of a fixed boundary). Each run is one
// cudaMemcpyPeerAsync (or one fill), enqueued in the receiving slice's
// stream. Ordering, with events:
//   ready[s]  recorded in every slice's stream first: its owned cells as of
//             the call. A receiver waits for the ready event of every slice
//             it copies from (rule 1).
//   the copies run in the receiver's stream, so its later work sees them
//             (rule 2);
//   done[d]   recorded in every receiver's stream after its copies; every
//             slice it copied from waits for it before its later work may
//             overwrite the cells that were read (rule 3).
#include "given.cuh"
#include "halo.hpp"

#include "steps/error.hpp"
#include "steps/handle.hpp"
#include "steps/run.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace ex09 {

std::vector<Part> split(std::size_t n, int parts) {
  if (parts < 1) throw std::invalid_argument("split: parts must be >= 1");
  const std::size_t p = static_cast<std::size_t>(parts);
  std::vector<Part> out(p);
  std::size_t at = 0;
  for (std::size_t i = 0; i < p; ++i) {
    out[i].begin = at;
    out[i].count = n / p + (i < n % p ? 1 : 0);
    at += out[i].count;
  }
  return out;
}

namespace {

/// One stretch of a ghost range with a single source.
struct Run {
  std::size_t ghost_offset; ///< first ghost cell of the run, in the receiver's cells[]
  std::size_t length;       ///< cells
  int source;               ///< owning slice, or -1: the fixed boundary value
  std::size_t source_index; ///< first owned cell read, in the source's own numbering (0 = its begin)
};

/// The slice that owns global cell q (0 <= q < n): parts are contiguous and in order.
int owner_of(const std::vector<Slice>& slices, std::size_t q) {
  // The last slice whose begin is <= q and which is not empty.
  std::size_t lo = 0, hi = slices.size();
  while (hi - lo > 1) {
    const std::size_t mid = (lo + hi) / 2;
    if (slices[mid].part.begin <= q) lo = mid;
    else hi = mid;
  }
  while (slices[lo].part.count == 0 || q >= slices[lo].part.begin + slices[lo].part.count) --lo;
  return static_cast<int>(lo);
}

/// The runs that fill `halo` ghost cells starting at global position `first`
/// (may be negative), landing at cells[offset].
void runs_for(const std::vector<Slice>& slices, std::size_t n, std::int64_t first, std::size_t halo,
              std::size_t offset, Boundary boundary, std::vector<Run>& out) {
  const std::int64_t sn = static_cast<std::int64_t>(n);
  std::size_t done = 0;
  while (done < halo) {
    const std::int64_t p = first + static_cast<std::int64_t>(done);
    const std::size_t left = halo - done;
    if (p < 0 || p >= sn) {
      if (boundary == Boundary::fixed) {
        // Outside: up to the array's start (from the left) or to the end of the range.
        const std::size_t len = p < 0 ? std::min<std::size_t>(left, static_cast<std::size_t>(-p)) : left;
        out.push_back({offset + done, len, -1, 0});
        done += len;
        continue;
      }
    }
    // Inside, or periodic: the cell p mod n (p may be off by several n).
    const std::size_t q = static_cast<std::size_t>(((p % sn) + sn) % sn);
    const int s = owner_of(slices, q);
    const Part& part = slices[static_cast<std::size_t>(s)].part;
    std::size_t len = std::min(left, part.begin + part.count - q);
    // Fixed: never run past the array's end into "outside" positions.
    if (boundary == Boundary::fixed) len = std::min(len, static_cast<std::size_t>(sn - p));
    out.push_back({offset + done, len, s, q - part.begin});
    done += len;
  }
}

steps::RawEvent event_on(int device) {
  steps::DeviceScope scope(device);
  steps::RawEvent e;
  CUDA_CHECK(cudaEventCreateWithFlags(e.out(), cudaEventDisableTiming));
  return e;
}

} // namespace

void exchange_halos(const std::vector<Slice>& slices, std::size_t n, std::size_t halo, Boundary boundary,
                    float outside) {
  if (slices.empty() || halo == 0) return;
  if (n == 0) throw std::invalid_argument("exchange_halos: n must be >= 1");
  const std::size_t k = slices.size();

  // Rule 1: what each slice's stream has enqueued so far.
  std::vector<steps::RawEvent> ready, done;
  for (const auto& s : slices) {
    ready.push_back(event_on(s.device));
    steps::DeviceScope scope(s.device);
    CUDA_CHECK(cudaEventRecord(ready.back().get(), s.stream));
  }

  // readers[s]: the receivers that copied from slice s.
  std::vector<std::vector<std::size_t>> readers(k);
  for (std::size_t d = 0; d < k; ++d) {
    const Slice& dst = slices[d];
    std::vector<Run> runs;
    const std::int64_t begin = static_cast<std::int64_t>(dst.part.begin);
    const std::int64_t h = static_cast<std::int64_t>(halo);
    runs_for(slices, n, begin - h, halo, 0, boundary, runs);
    runs_for(slices, n, begin + static_cast<std::int64_t>(dst.part.count), halo, halo + dst.part.count, boundary,
             runs);

    steps::DeviceScope scope(dst.device);
    std::vector<bool> waited(k, false);
    for (const Run& r : runs) {
      if (r.source < 0) {
        fill_async(dst.device, dst.cells + r.ghost_offset, r.length, outside, dst.stream);
        continue;
      }
      const std::size_t s = static_cast<std::size_t>(r.source);
      if (!waited[s]) {
        waited[s] = true;
        CUDA_CHECK(cudaStreamWaitEvent(dst.stream, ready[s].get(), 0));
        readers[s].push_back(d);
      }
      const Slice& src = slices[s];
      CUDA_CHECK(cudaMemcpyPeerAsync(dst.cells + r.ghost_offset, dst.device, src.cells + halo + r.source_index,
                                     src.device, r.length * sizeof(float), dst.stream));
    }
    // Rule 2 holds: the copies are in dst.stream. Mark them for rule 3.
    done.push_back(event_on(dst.device));
    CUDA_CHECK(cudaEventRecord(done.back().get(), dst.stream));
  }

  // Rule 3: a slice's later work waits for every copy that read from it.
  for (std::size_t s = 0; s < k; ++s) {
    steps::DeviceScope scope(slices[s].device);
    for (const std::size_t d : readers[s])
      if (d != s) CUDA_CHECK(cudaStreamWaitEvent(slices[s].stream, done[d].get(), 0));
  }
  // The events may be destroyed now: a wait already enqueued keeps its record.
}

} // namespace ex09
