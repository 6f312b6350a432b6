// Chapter 08: the copy-compute-copy pipeline, in one stream or in k.
//
// Idea: a GPU has separate engines for host-to-device copies, for
// device-to-host copies and for kernels. Work in ONE stream runs one
// operation at a time, so H2D, kernel and D2H of a large array take the sum
// of their times (the serial row). Cut the array into chunks and give
// consecutive chunks to different streams: while chunk c computes, chunk c+1
// comes in and chunk c-1 goes out, and the total approaches the slowest
// stage alone (the ideal bound) or, when both copies are long, what the link
// carries in both directions at once (the copy-engine bound).
//
//   stream 0 | H2D 0 | K 0 | D2H 0 |       | H2D 2 | K 2 | D2H 2 |
//   stream 1         | H2D 1 | K 1 | D2H 1 |       | H2D 3 | ...
//   (the H2D engine is busy back to back; so, one chunk later, is the D2H engine)
//
// Each chunk's three operations stay in one stream, so stream order alone
// makes its kernel wait for its input and its output copy wait for its
// kernel: no event is needed inside a chunk. The streams fork from the run's
// primary stream and join back into it (steps::Run), so the timing events and
// the caller see the whole pipeline.
#pragma once

#include "kernels.cuh"

#include "steps/handle.hpp"
#include "steps/math.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace ch08 {

/// Elements [begin, begin + count) of chunk c when n elements are cut into
/// `chunks` chunks of ceil(n / chunks) (the last one shorter; chunks past
/// the end are empty).
struct ChunkRange {
  std::size_t begin = 0, count = 0;
};
inline ChunkRange chunk_range(std::size_t n, int chunks, int c) {
  const std::size_t len = steps::ceil_div<std::size_t>(n, static_cast<std::size_t>(chunks));
  const std::size_t begin = std::min(n, len * static_cast<std::size_t>(c));
  return {begin, std::min(len, n - begin)};
}

/// Records, when asked, a timestamped event pair around every operation of
/// one pipeline run: the timeline picture (--timeline) is drawn from these.
class Timeline {
public:
  struct Mark {
    int lane, chunk;
    const char* op;
    cudaEvent_t start, end;
  };

  /// Arms recording for the next run of the pipeline.
  void arm() { armed_ = true; }
  bool armed() const { return armed_; }

  /// Starts a recording in `origin` (time zero).
  void begin(cudaStream_t origin) {
    marks_.clear();
    used_ = 0;
    CUDA_CHECK(cudaEventRecord(event(), origin));
  }
  /// Brackets one operation: `op` runs in `s` between start() and end().
  void start(int lane, int chunk, const char* op, cudaStream_t s) {
    marks_.push_back({lane, chunk, op, event(), nullptr});
    CUDA_CHECK(cudaEventRecord(marks_.back().start, s));
  }
  void end(cudaStream_t s) {
    marks_.back().end = event();
    CUDA_CHECK(cudaEventRecord(marks_.back().end, s));
  }
  void stop() { armed_ = false; }

  /// Appends the recorded marks of row `row` to `lines` (after the run has
  /// completed): row, lane, chunk, op, start and end in ms from time zero.
  void collect(const std::string& row, std::vector<std::string>& lines) const {
    if (marks_.empty()) return;
    for (const auto& m : marks_) {
      float a = 0, b = 0;
      CUDA_CHECK(cudaEventElapsedTime(&a, pool_[0].get(), m.start));
      CUDA_CHECK(cudaEventElapsedTime(&b, pool_[0].get(), m.end));
      char line[200];
      std::snprintf(line, sizeof line, "%s\t%d\t%d\t%s\t%.4f\t%.4f", row.c_str(), m.lane, m.chunk, m.op, a, b);
      lines.push_back(line);
    }
  }

private:
  cudaEvent_t event() {
    if (used_ == pool_.size()) {
      steps::RawEvent e;
      CUDA_CHECK(cudaEventCreate(e.out())); // with timing: these are timestamps
      pool_.push_back(std::move(e));
    }
    return pool_[used_++].get();
  }
  std::vector<steps::RawEvent> pool_;
  std::size_t used_ = 0;
  std::vector<Mark> marks_;
  bool armed_ = false;
};

/// What one pipeline run works on: pinned host input and output, device
/// buffers of n floats each (no staging: chunk c lives at its own offset).
struct PipelineData {
  const float* host_in;
  float* host_out;
  float* dev_in;
  float* dev_out;
  std::size_t n;
  int iters; ///< --work
};

/// H2D, kernel, D2H of every chunk, chunk c in lanes[c % lanes.size()];
/// with a Timeline that is armed, every operation is bracketed by events.
inline void pipeline(const PipelineData& d, int chunks, const std::vector<cudaStream_t>& lanes,
                     const steps::DeviceInfo& dev, Timeline* tl) {
  const int k = static_cast<int>(lanes.size());
  for (int c = 0; c < chunks; ++c) {
    const ChunkRange r = chunk_range(d.n, chunks, c);
    if (r.count == 0) break;
    const int lane = c % k;
    cudaStream_t s = lanes[static_cast<std::size_t>(lane)];
    const std::size_t bytes = r.count * sizeof(float);
    if (tl) tl->start(lane, c, "H2D", s);
    CUDA_CHECK(cudaMemcpyAsync(d.dev_in + r.begin, d.host_in + r.begin, bytes, cudaMemcpyHostToDevice, s));
    if (tl) tl->end(s);
    if (tl) tl->start(lane, c, "kernel", s);
    launch_work(d.dev_in + r.begin, d.dev_out + r.begin, r.count, d.iters, dev, s);
    if (tl) tl->end(s);
    if (tl) tl->start(lane, c, "D2H", s);
    CUDA_CHECK(cudaMemcpyAsync(d.host_out + r.begin, d.dev_out + r.begin, bytes, cudaMemcpyDeviceToHost, s));
    if (tl) tl->end(s);
  }
}

/// The same work with one stream per stage: every H2D in lanes[0], every
/// kernel in lanes[1], every D2H in lanes[2], so that each copy engine and the
/// SMs get their queue in chunk order. Events carry the dependencies inside a
/// chunk: kernel c waits for copied[c], D2H c waits for computed[c]. (In v3 a
/// chunk's D2H and the next chunks' H2D share a stream queue only through
/// the chunk's own kernel; here nothing but the data orders them.)
inline void pipeline_by_stage(const PipelineData& d, int chunks, const std::vector<cudaStream_t>& lanes,
                              const std::vector<cudaEvent_t>& copied, const std::vector<cudaEvent_t>& computed,
                              const steps::DeviceInfo& dev, Timeline* tl) {
  for (int c = 0; c < chunks; ++c) {
    const ChunkRange r = chunk_range(d.n, chunks, c);
    if (r.count == 0) break;
    const std::size_t bytes = r.count * sizeof(float);
    const std::size_t i = static_cast<std::size_t>(c);
    if (tl) tl->start(0, c, "H2D", lanes[0]);
    CUDA_CHECK(cudaMemcpyAsync(d.dev_in + r.begin, d.host_in + r.begin, bytes, cudaMemcpyHostToDevice, lanes[0]));
    if (tl) tl->end(lanes[0]);
    CUDA_CHECK(cudaEventRecord(copied[i], lanes[0]));
    CUDA_CHECK(cudaStreamWaitEvent(lanes[1], copied[i], 0));
    if (tl) tl->start(1, c, "kernel", lanes[1]);
    launch_work(d.dev_in + r.begin, d.dev_out + r.begin, r.count, d.iters, dev, lanes[1]);
    if (tl) tl->end(lanes[1]);
    CUDA_CHECK(cudaEventRecord(computed[i], lanes[1]));
    CUDA_CHECK(cudaStreamWaitEvent(lanes[2], computed[i], 0));
    if (tl) tl->start(2, c, "D2H", lanes[2]);
    CUDA_CHECK(cudaMemcpyAsync(d.host_out + r.begin, d.dev_out + r.begin, bytes, cudaMemcpyDeviceToHost, lanes[2]));
    if (tl) tl->end(lanes[2]);
  }
}

} // namespace ch08
