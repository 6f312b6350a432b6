// Chapter 09: several GPUs in one program.
//
// One process drives every GPU it was given (--device and the ones after
// it). What runs:
//   topology               the GPUs, which pairs have peer access, link ranks
//   peer copies (2 GPUs)   cudaMemcpyPeerAsync one way and both ways (the
//                          baseline), and a copy kernel that pushes into or
//                          pulls from the other GPU's memory (v1)
//   stencil                a 2-D Jacobi grid on one GPU, then cut into bands
//                          across all GPUs with halo exchange, without and
//                          with overlap of the exchange and compute (v2):
//                          its scaling over one GPU in the same run; and the
//                          same two schedules over --bands bands of the first
//                          GPU, which one GPU can run
//   all-reduce (2+ GPUs)   NCCL (one process, all GPUs: ncclCommInitAll and a
//                          group call) and a ring written by hand over peer
//                          copies (v3), reported as bus bandwidth
//   yours                  exercise 09: your halo exchange in a 1-D stencil
// The one-process-per-GPU model (MPI + NCCL) is the separate program
// ch09_nccl_mpi (nccl_mpi.cu), built when MPI and NCCL are found.
//
// On one GPU: the rows that need two GPUs are listed as skipped, with the
// reason; the one-GPU stencil, its bands rows (and your exercise) run.
//
// Run: ./tutorial run 09    (or build/bin/ch09_multi_gpu --help)
#include "allreduce_problem.cuh"
#include "peer_problem.cuh"
#include "stencil_problem.cuh"
#include "support.cuh"

#if STEPS_WITH_EXERCISE
#include "yours.cuh"
#endif

#include <cstdint>
#include <string>
#include <vector>

namespace ch09 {

std::vector<steps::GroupPtr> registry() {
  std::vector<steps::GroupPtr> groups{peer_group(), stencil_group(), allreduce_group()};
#if STEPS_WITH_EXERCISE
  groups.push_back(yours_group());
#endif
  return groups;
}

steps::ChapterInfo info() {
  steps::ChapterInfo i;
  i.summary = "Drives every GPU from --device on: the peer-access matrix and link ranks; peer copies with "
              "cudaMemcpyPeerAsync (the baseline) and with a kernel that writes or reads the other GPU's memory; a "
              "2-D stencil cut into bands across all GPUs with halo exchange, with and without overlap, against "
              "the same grid on one GPU, and the same schedules over --bands bands of one GPU; all-reduce through "
              "NCCL and through a hand-written ring. On one GPU the single-GPU rows run, the others are listed as "
              "skipped with the reason. "
#if STEPS_HAVE_NCCL
              "NCCL: built in."
#else
              "NCCL: not found when this was built: the nccl_allreduce row is left out."
#endif
#if STEPS_HAVE_MPI
              " One process per GPU: ch09_nccl_mpi (mpirun -n <gpus>)."
#else
              " MPI: not found when this was built: the one-process-per-GPU program ch09_nccl_mpi is not built."
#endif
      ;
  i.metric = steps::Metric::bandwidth;
  // 2^28 floats = 1 GiB per peer copy and per GPU for the all-reduce (the
  // size the vendors quote bus bandwidth at); the stencil grid is 1 GiB too.
  i.default_size = std::int64_t{1} << 28;
  i.size_help = "floats: of each peer copy, of each GPU's all-reduce buffer, and of the stencil grid (rounded "
                "up to whole rows of --width)";
  i.work_note = "GB/s: peer copies: bytes copied (both ways: both directions' bytes); stencil: 8 bytes per cell "
                "per step (read once, written once); all-reduce: bus bandwidth, bytes x 2 (G - 1) / G. "
                "1 GB = 1e9 B. speedup: of the stencil over stencil_one_gpu (its scaling).";
  i.baseline = "memcpy_peer";
  steps::Goal push{"peer_push", "memcpy_peer", 0.90, ">= 0.90x cudaMemcpyPeerAsync, one way"};
  steps::Goal both{"peer_push_both_ways", "memcpy_peer_both_ways", 0.90,
                   ">= 0.90x cudaMemcpyPeerAsync, both ways at once"};
  steps::Goal scale{"stencil_split_overlap", "stencil_one_gpu", 1.80, ">= 1.8x one GPU (the goal for 2 GPUs)"};
  // What overlap itself gains: the same bands, with and without it.
  steps::Goal overlap{"stencil_split_overlap", "stencil_split", 1.03,
                      ">= 1.03x the same split without overlap (what overlap hides)"};
  for (auto* g : {&push, &both, &scale, &overlap}) g->min_gpus = 2;
  i.goals = {push, both, scale, overlap};
  // No hardware peak: the CUDA runtime does not report a link's bandwidth
  // (the lesson quotes the vendor's NVLink figure).
  i.peak = [](const steps::DeviceInfo&) { return steps::Peak{}; };
  i.min_gpus = 1;
  i.max_gpus = 64; // every GPU from --device on
  i.timeout_s = 300;
  i.before = report_topology; // the GPUs and their links, as notes; peer access on
  i.int_options.push_back({"--width", "W", "columns of the stencil grid", 8192, 1, std::int64_t{1} << 24});
  i.int_options.push_back({"--steps", "K", "stencil steps per run", 8, 1, 1000});
  i.int_options.push_back({"--bands", "B", "bands of the first GPU in the stencil_bands rows (the split's schedule "
                                           "on one GPU)", 4, 1, 64});
  return i;
}

} // namespace ch09

int main(int argc, char** argv) { return steps::run_chapter(argc, argv, ch09::info(), ch09::registry()); }
