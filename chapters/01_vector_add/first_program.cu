// Chapter 01, the whole program: a vector add with the CUDA runtime alone,
// nothing from the course's library. The lesson shows it (between its
// snippet markers) and explains it line by line. Build and run it alone:
//   nvcc first_program.cu -o first_program && ./first_program
// or with the course's build: the target ch01_first_program (build/bin/).
// Exit code: 0 right, 1 wrong or a CUDA call failed, 77 no GPU.
// [snippet first_program]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

// The kernel: one call per thread. Each thread adds one element.
__global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;  // this thread's element
  if (i < n) c[i] = a[i] + b[i];                  // the last block may run past n
}

// Ends the program with a message when a CUDA call did not succeed.
void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    std::printf("first_program: %s failed: %s (%s)\n", what, cudaGetErrorName(err), cudaGetErrorString(err));
    std::exit(1);
  }
}

int main() {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    std::printf("first_program: no CUDA GPU found, nothing to run (skipped)\n");
    return 77;
  }
  const int n = 1 << 20;                  // 1048576 elements
  const size_t bytes = n * sizeof(float);

  // 1. The inputs, in host (CPU) memory.
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) {
    a[i] = float(i);
    b[i] = 2.0f * float(i);
  }

  // 2. Three arrays in device (GPU) memory.
  float *d_a = nullptr, *d_b = nullptr, *d_c = nullptr;
  check(cudaMalloc(&d_a, bytes), "cudaMalloc(a)");
  check(cudaMalloc(&d_b, bytes), "cudaMalloc(b)");
  check(cudaMalloc(&d_c, bytes), "cudaMalloc(c)");

  // 3. Copy the inputs to the GPU.
  check(cudaMemcpy(d_a, a.data(), bytes, cudaMemcpyHostToDevice), "copy a to the GPU");
  check(cudaMemcpy(d_b, b.data(), bytes, cudaMemcpyHostToDevice), "copy b to the GPU");

  // 4. Launch: blocks of 256 threads, enough blocks to cover n (rounded up).
  const int threads = 256;
  const int blocks = (n + threads - 1) / threads;
  add<<<blocks, threads>>>(d_a, d_b, d_c, n);
  check(cudaGetLastError(), "launch of add");     // was the launch itself valid?
  check(cudaDeviceSynchronize(), "kernel add");  // did the kernel run without a fault?

  // 5. Copy the result back to the host.
  check(cudaMemcpy(c.data(), d_c, bytes, cudaMemcpyDeviceToHost), "copy c to the host");

  // 6. Check every element against the CPU.
  float max_error = 0.0f;
  for (int i = 0; i < n; ++i) max_error = std::fmax(max_error, std::fabs(c[i] - (a[i] + b[i])));

  // 7. Free the device memory.
  check(cudaFree(d_a), "cudaFree(a)");
  check(cudaFree(d_b), "cudaFree(b)");
  check(cudaFree(d_c), "cudaFree(c)");

  const bool ok = max_error == 0.0f;
  std::printf("first_program: %d elements, max error %g, %s\n", n, max_error, ok ? "OK" : "WRONG");
  return ok ? 0 : 1;
}
// [/snippet first_program]
