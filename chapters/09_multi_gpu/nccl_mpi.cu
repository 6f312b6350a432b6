// Chapter 09: one process per GPU, the model that scales past one machine.
//
// Start it with mpirun, one rank per GPU:
//     mpirun -n 2 build/bin/ch09_nccl_mpi            (add --allow-run-as-root as root with Open MPI)
// Each rank takes GPU (rank mod GPUs on its node), rank 0 makes an NCCL
// unique id and MPI_Bcast sends it to the others, every rank joins the
// communicator with ncclCommInitRank, and each runs ncclAllReduce on its own
// buffer in its own stream: no rank knows the others' pointers. MPI carries
// only the id (and the timing results); NCCL moves the data over NVLink,
// PCIe or the network.
//
// Prints, on rank 0, the bus bandwidth of an all-reduce of --size floats
// (median of --iters, each timed by events on every rank; the slowest rank's
// time counts) and checks the sum exactly (integer inputs). Exit codes as
// the chapter programs: 0 verified, 1 wrong or failed, 2 usage, 77 skipped.
#include "steps/compare.hpp"
#include "steps/device.hpp"
#include "steps/error.hpp"
#include "steps/memory.hpp"
#include "steps/nccl.hpp"
#include "steps/random.hpp"
#include "steps/report.hpp"
#include "steps/timing.hpp"

#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

// The same integers as the chapter's all-reduce: nonzero, in [-8, 8], so
// sums over up to 2^21 ranks are exact in float.
__host__ __device__ inline float integer_at(std::uint64_t seed, std::size_t i) {
  const float k = floorf(steps::uniform_at(seed, i, 0.0f, 16.0f));
  return k < 8.0f ? k - 8.0f : k - 7.0f;
}

__global__ void fill_integers(float* x, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    x[i] = integer_at(seed, i);
}

struct Args {
  std::size_t size = std::size_t{1} << 28;
  int iters = 20;
  int warmup = 3;
  bool count_gpus = false;
};

const char* kUsage =
    "Usage: ch09_nccl_mpi [--size N] [--iters N] [--warmup N] [--count-gpus] [--help]\n"
    "Chapter 09: NCCL all-reduce with one process per GPU. Start it with one rank per GPU:\n"
    "  mpirun -n <gpus> ch09_nccl_mpi        (Open MPI as root: add --allow-run-as-root)\n"
    "  --size N      floats per rank (default 2^28 = 1 GiB)\n"
    "  --iters N     timed all-reduces (default 20)\n"
    "  --warmup N    untimed all-reduces first (default 3)\n"
    "  --count-gpus  print the number of visible GPUs and exit (no MPI): for the test script\n";

// Parses the command line; returns -1 to go on, else an exit code.
int parse(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::int64_t min) -> std::int64_t {
      if (i + 1 >= argc) throw std::runtime_error(arg + " needs a value");
      const std::string v = argv[++i];
      char* end = nullptr;
      const long long x = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || x < min) throw std::runtime_error(arg + ": bad value '" + v + "'");
      return x;
    };
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (arg == "--size") {
      a.size = static_cast<std::size_t>(value(1));
    } else if (arg == "--iters") {
      a.iters = static_cast<int>(value(1));
    } else if (arg == "--warmup") {
      a.warmup = static_cast<int>(value(0));
    } else if (arg == "--count-gpus") {
      a.count_gpus = true;
    } else {
      throw std::runtime_error("unknown option " + arg);
    }
  }
  return -1;
}

} // namespace

int main(int argc, char** argv) {
  Args args;
  try {
    if (const int code = parse(argc, argv, args); code >= 0) return code;
  } catch (const std::exception& e) {
    std::cerr << "ch09_nccl_mpi: error: " << e.what() << " (see --help)\n";
    return 2;
  }
  if (args.count_gpus) {
    std::string reason;
    int count = 0;
    if (steps::gpu_available(&reason)) CUDA_CHECK(cudaGetDeviceCount(&count));
    std::cout << count << "\n";
    return 0;
  }

  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int rc = 0;
  try {
    std::string reason;
    int usable = steps::gpu_available(&reason) ? 1 : 0, all_usable = 0;
    MPI_Allreduce(&usable, &all_usable, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_usable) {
      if (rank == 0) std::cerr << "ch09_nccl_mpi: skipped: a rank has no usable GPU (" << reason << ")\n";
      MPI_Finalize();
      return 77;
    }
    int gpus = 0;
    CUDA_CHECK(cudaGetDeviceCount(&gpus));
    // Ranks on one node share its GPUs: rank r takes GPU r mod gpus (one
    // node here; on several, the node-local rank would be used).
    const int device = rank % gpus;
    CUDA_CHECK(cudaSetDevice(device));
    const steps::DeviceInfo dev = steps::query_device(device);

    ncclUniqueId id;
    if (rank == 0) NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t comm = nullptr;
    NCCL_CHECK(ncclCommInitRank(&comm, ranks, id, rank));

    const std::size_t n = args.size;
    steps::DeviceBuffer<float> send(n), recv(n);
    fill_integers<<<1024, 256>>>(send.data(), n, 2024 + static_cast<std::uint64_t>(rank));
    CUDA_CHECK_LAUNCH();
    steps::Stream stream;
    CUDA_CHECK(cudaDeviceSynchronize());

    // Verification run: every rank checks its own result exactly.
    recv.fill_bytes(0xFF, stream);
    NCCL_CHECK(ncclAllReduce(send.data(), recv.data(), n, ncclFloat, ncclSum, comm, stream));
    stream.synchronize();
    std::vector<float> got = recv.to_host();
    std::size_t bad = 0, first_bad = n;
    float expected_first = 0, got_first = 0;
    for (std::size_t i = 0; i < n; ++i) {
      float want = 0;
      for (int r = 0; r < ranks; ++r) want += integer_at(2024 + static_cast<std::uint64_t>(r), i);
      if (std::memcmp(&want, &got[i], sizeof want) != 0 && bad++ == 0) {
        first_bad = i;
        expected_first = want;
        got_first = got[i];
      }
    }
    unsigned long long bad_all = 0, bad_mine = bad;
    MPI_Allreduce(&bad_mine, &bad_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (bad)
      std::cerr << "ch09_nccl_mpi: rank " << rank << " (GPU " << device << "): all-reduce FAILED verification: "
                << bad << " of " << n << " wrong, first [" << first_bad << "]: expected "
                << steps::format_value(expected_first) << ", got " << steps::format_value(got_first) << "\n";

    // Timing: events on every rank; the slowest rank's time is the all-reduce's.
    steps::TimingOptions t;
    t.iters = args.iters;
    t.warmup = args.warmup;
    const steps::Stats ms = steps::time_gpu(
        [&](cudaStream_t s) { NCCL_CHECK(ncclAllReduce(send.data(), recv.data(), n, ncclFloat, ncclSum, comm, s)); },
        t, stream);
    double median = ms.median, slowest = 0;
    MPI_Reduce(&median, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      const double bytes = 4.0 * static_cast<double>(n);
      const double algbw = steps::gbps(bytes, slowest);
      const double busbw = algbw * 2.0 * (ranks - 1) / ranks;
      std::printf("Chapter 09: NCCL all-reduce, one process per GPU (%d ranks; rank 0 on GPU %d: %s)\n", ranks,
                  device, dev.name.c_str());
      std::printf("all-reduce of %zu floats (%s) per rank: median %.4f ms (slowest rank), algbw %.1f GB/s, "
                  "busbw %.1f GB/s (algbw x 2 (n-1)/n), verified: %s\n",
                  n, steps::format_bytes(bytes).c_str(), slowest, algbw, busbw, bad_all ? "NO" : "yes");
      if (ranks == 1) std::printf("One rank: nothing to exchange (start it with mpirun -n <gpus>).\n");
    }
    NCCL_CHECK(ncclCommDestroy(comm));
    rc = bad_all ? 1 : 0;
  } catch (const std::exception& e) {
    std::cerr << "ch09_nccl_mpi: rank " << rank << ": error: " << e.what() << "\n";
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
  MPI_Finalize();
  return rc;
}
