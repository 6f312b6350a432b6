# NCCL and MPI, for the multi-GPU chapter. Both are optional: without them the
# chapter builds and says which parts it skipped.
#
#   STEPS_HAVE_NCCL  steps::nccl (imported target: header and library)
#   STEPS_HAVE_MPI   MPI::MPI_CXX, MPIEXEC_EXECUTABLE (one process per GPU)
#
# FindCUDAToolkit has no NCCL target: NCCL ships either inside the toolkit
# (/usr/local/cuda/include/nccl.h) or as a system package (/usr/include/nccl.h).
set(STEPS_HAVE_NCCL OFF)
find_path(STEPS_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}/include)
find_library(STEPS_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib64)
if(STEPS_NCCL_INCLUDE_DIR AND STEPS_NCCL_LIBRARY)
  add_library(steps_nccl INTERFACE)
  target_include_directories(steps_nccl INTERFACE ${STEPS_NCCL_INCLUDE_DIR})
  target_link_libraries(steps_nccl INTERFACE ${STEPS_NCCL_LIBRARY})
  add_library(steps::nccl ALIAS steps_nccl)
  set(STEPS_HAVE_NCCL ON)
  message(STATUS "cuda-steps: NCCL found (${STEPS_NCCL_LIBRARY})")
else()
  message(STATUS "cuda-steps: NCCL not found: the multi-GPU chapter builds without its NCCL parts")
endif()

set(STEPS_HAVE_MPI OFF)
find_package(MPI COMPONENTS CXX QUIET)
if(MPI_CXX_FOUND)
  set(STEPS_HAVE_MPI ON)
  message(STATUS "cuda-steps: MPI found (${MPIEXEC_EXECUTABLE})")
else()
  message(STATUS "cuda-steps: MPI not found: the one-process-per-GPU runs are skipped")
endif()
