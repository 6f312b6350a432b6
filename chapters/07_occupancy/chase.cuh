// Chapter 07, part 2: a latency-bound kernel, a pointer chase.
//
// Each thread follows a linked list: p = p->next, `hops` times. Every load
// needs the result of the one before, so a thread has one load in flight at
// a time and waits a full DRAM latency for each. The nodes link in a random
// permutation of 2^k of them (8 bytes each, 1 GiB by default: about 17 times
// the H200's L2), so almost every load misses the caches. The speed is then
// (loads in flight) / latency: with one chain per thread, loads in flight =
// resident threads, and occupancy is everything -- until enough loads are in
// flight to saturate the memory system with random 32-byte sectors.
//
//   pointer_chase          one chain per thread; block size and a shared-
//                          memory pad set the occupancy
//   chase_max_l1           pointer_chase preferring the largest L1 (every
//                          other kernel here prefers the largest shared part)
//   chase_ilp4             4 chains per thread: 4 loads in flight per thread
//   chase_ilp20*           20 chains per thread: 96 registers with no budget,
//                          48 under __maxnreg__(48)
//   chase_ilp32*           32 chains per thread: 32 pointers of 2 registers
//                          each, so more than 64 registers with no budget;
//                          with __launch_bounds__(256, 4) or __maxnreg__(32)
//                          the compiler must fit them in 64 or 32 registers
//                          and spills the rest to local memory
#pragma once

#include "steps/error.hpp"
#include "steps/launch.cuh"
#include "steps/math.hpp"
#include "steps/random.hpp"

#include <cstddef>
#include <cstdint>

namespace ch07::chase {

using steps::global_index;
using steps::grid_size;

/// Threads per block of the ILP kernels (their launch bounds assume it).
constexpr int kIlpBlock = 256;

/// One node of the list: where to go next.
struct Node {
  const Node* next;
};

/// The links: a bijection of [0, 2^bits) built from steps that are each
/// invertible modulo 2^bits (multiplying by an odd number, x ^= x >> s), so
/// that every entry is the successor of exactly one other. The CPU
/// reference follows a chain by calling it, without the nodes.
STEPS_HD inline std::uint32_t next_index(std::uint32_t i, int bits) {
  const std::uint32_t mask = bits >= 32 ? 0xFFFFFFFFu : (1u << bits) - 1u;
  std::uint32_t x = (i * 0x9E3779B1u) & mask;
  x ^= x >> ((bits + 1) / 2);
  x = (x * 0x85EBCA77u) & mask;
  x ^= x >> ((bits + 2) / 3);
  return (x * 0xC2B2AE3Du) & mask;
}

/// Where chain `c` starts: a hash of c, any node.
STEPS_HD inline std::uint32_t chain_start(std::uint64_t c, int bits) {
  const std::uint32_t mask = bits >= 32 ? 0xFFFFFFFFu : (1u << bits) - 1u;
  return static_cast<std::uint32_t>(steps::splitmix64(c)) & mask;
}

/// nodes[i].next = &nodes[next_index(i)] for every node.
__global__ void build_list(Node* nodes, std::size_t entries, int bits) {
  for (std::size_t i = global_index(); i < entries; i += grid_size())
    nodes[i].next = nodes + next_index(static_cast<std::uint32_t>(i), bits);
}

/// One chain per thread: `hops` dependent loads, then the index of the node
/// the chain ends at.
__device__ __forceinline__ void chase_one(const Node* nodes, std::uint32_t* out, std::size_t chains, int hops,
                                          int bits) {
  const std::size_t c = global_index();
  if (c >= chains) return;
  const Node* p = nodes + chain_start(c, bits);
  for (int h = 0; h < hops; ++h) p = p->next; // each load waits for the previous one
  out[c] = static_cast<std::uint32_t>(p - nodes);
}

__global__ void pointer_chase(const Node* nodes, std::uint32_t* out, std::size_t chains, int hops, int bits) {
  chase_one(nodes, out, chains, hops, bits);
}

/// The same code as a separate kernel, so that it can prefer the largest
/// L1 (the L1/shared split is a property of the kernel, not of a launch).
__global__ void chase_max_l1(const Node* nodes, std::uint32_t* out, std::size_t chains, int hops, int bits) {
  chase_one(nodes, out, chains, hops, bits);
}

/// kChains chains per thread, grid-stride: thread t owns chains t, t + T,
/// t + 2T, ... (T = threads in the grid), so the final stores are coalesced.
/// The kChains loads of one hop are independent: all in flight together.
template <int kChains>
__device__ __forceinline__ void chase_ilp_body(const Node* nodes, std::uint32_t* out, std::size_t chains, int hops,
                                               int bits) {
  const std::size_t threads = grid_size();
  for (std::size_t first = global_index(); first < chains; first += kChains * threads) {
    const Node* p[kChains];
#pragma unroll
    for (int k = 0; k < kChains; ++k) {
      const std::size_t c = first + k * threads;
      p[k] = nodes + chain_start(c < chains ? c : 0, bits); // a chain past the end walks, unwritten
    }
    for (int h = 0; h < hops; ++h) {
#pragma unroll
      for (int k = 0; k < kChains; ++k) p[k] = p[k]->next;
    }
#pragma unroll
    for (int k = 0; k < kChains; ++k) {
      const std::size_t c = first + k * threads;
      if (c < chains) out[c] = static_cast<std::uint32_t>(p[k] - nodes);
    }
  }
}

__global__ void chase_ilp4(const Node* nodes, std::uint32_t* out, std::size_t chains, int hops, int bits) {
  chase_ilp_body<4>(nodes, out, chains, hops, bits);
}

/// 20 chains per thread, no register budget: nvcc 13 gives it 96 registers
/// on sm_90 (ptxas -v), 25% occupancy in 256-thread blocks.
__global__ void chase_ilp20(const Node* nodes, std::uint32_t* out, std::size_t chains, int hops, int bits) {
  chase_ilp_body<20>(nodes, out, chains, hops, bits);
}

/// The same, at most 48 registers (__maxnreg__(48)): 62.5% occupancy, with
/// spills (40 pointer registers alone do not fit with the loop's own).
__global__ __maxnreg__(48) void chase_ilp20_maxnreg48(const Node* nodes, std::uint32_t* out, std::size_t chains,
                                                      int hops, int bits) {
  chase_ilp_body<20>(nodes, out, chains, hops, bits);
}

/// No register budget: 32 pointers (64 registers) and the loop's own.
__global__ void chase_ilp32(const Node* nodes, std::uint32_t* out, std::size_t chains, int hops, int bits) {
  chase_ilp_body<32>(nodes, out, chains, hops, bits);
}

/// At least 4 blocks of 256 threads per SM: at most 64 registers.
__global__ __launch_bounds__(kIlpBlock, 4) void chase_ilp32_lb4(const Node* nodes, std::uint32_t* out,
                                                                std::size_t chains, int hops, int bits) {
  chase_ilp_body<32>(nodes, out, chains, hops, bits);
}

/// At most 32 registers, said directly (__maxnreg__, CUDA 12.4 and later):
/// full occupancy for 256-thread blocks, and spills.
__global__ __maxnreg__(32) void chase_ilp32_maxnreg32(const Node* nodes, std::uint32_t* out, std::size_t chains,
                                                      int hops, int bits) {
  chase_ilp_body<32>(nodes, out, chains, hops, bits);
}

} // namespace ch07::chase
