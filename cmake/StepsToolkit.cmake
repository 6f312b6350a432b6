# The CUDA Toolkit the course needs, checked once at configure time.
#
# 12.8 is the oldest toolkit the course compiles with: chapters 01-09 and
# chapter 10's own kernels. Chapter 10's cuBLASLt block-scaled row needs
# cuBLAS 12.9 (its Hopper block-scale modes); with 12.8 that row is skipped
# with its reason (v0_cublaslt.cuh, lt_block_scales_missing).
set(STEPS_MIN_CUDA_VERSION 12.8)

# Fails the configure, in one line, when `version` is older than the minimum.
# (A function, so that a script can try it: see the end of this file.)
function(steps_check_toolkit version)
  if(version VERSION_LESS STEPS_MIN_CUDA_VERSION)
    message(FATAL_ERROR "cuda-steps needs CUDA Toolkit ${STEPS_MIN_CUDA_VERSION} or newer; found ${version} "
                        "(nvcc: ${CMAKE_CUDA_COMPILER}). Install a newer toolkit, or put its bin/ first on PATH.")
  endif()
endfunction()

# As a script, the check alone (the host test host.cmake.toolkit_too_old):
#   cmake -DSTEPS_CHECK_VERSION=12.4 -P cmake/StepsToolkit.cmake
if(CMAKE_SCRIPT_MODE_FILE AND DEFINED STEPS_CHECK_VERSION)
  set(CMAKE_CUDA_COMPILER "nvcc")
  steps_check_toolkit("${STEPS_CHECK_VERSION}")
endif()
