# GPU architecture selection, in this order:
#   1. the user's CMAKE_CUDA_ARCHITECTURES (or the CUDAARCHS environment variable);
#   2. the GPU(s) on this machine, read with nvidia-smi;
#   3. a default list that compiles every chapter (machines with no GPU, such as CI).
# Chapter 10 adds its own sm_90a target (wgmma and setmaxnreg need it) on top.
#
# This file is included before project(), because enabling CUDA fills
# CMAKE_CUDA_ARCHITECTURES with the compiler's default.

set(STEPS_DEFAULT_CUDA_ARCHITECTURES "75-real;80-real;90"
    CACHE STRING "Architectures used when none is given and no GPU is found")

# A value this file chose on an earlier configure (detected, the default
# list, or CUDAARCHS) is not the user's: it is chosen again each time, so a
# GPU change, or an option taken out of the command line, is seen.
if(DEFINED STEPS_ARCH_CHOSEN AND "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "${STEPS_ARCH_CHOSEN}")
  unset(CMAKE_CUDA_ARCHITECTURES CACHE)
  unset(CMAKE_CUDA_ARCHITECTURES)
endif()
unset(STEPS_ARCH_CHOSEN CACHE)

if(DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT CMAKE_CUDA_ARCHITECTURES STREQUAL "")
  set(STEPS_ARCH_SOURCE "given by you")
elseif(DEFINED ENV{CUDAARCHS})
  set(STEPS_ARCH_SOURCE "from the CUDAARCHS environment variable")
  set(STEPS_ARCH_CHOSEN "$ENV{CUDAARCHS}" CACHE INTERNAL "CUDA architectures this file chose")
else()
  find_program(STEPS_NVIDIA_SMI nvidia-smi)
  set(_steps_found "")
  if(STEPS_NVIDIA_SMI)
    execute_process(
      COMMAND ${STEPS_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
      OUTPUT_VARIABLE _steps_caps RESULT_VARIABLE _steps_rc ERROR_QUIET
      OUTPUT_STRIP_TRAILING_WHITESPACE TIMEOUT 20)
    if(_steps_rc EQUAL 0)
      string(REPLACE "\n" ";" _steps_caps "${_steps_caps}")
      foreach(_cap IN LISTS _steps_caps)
        string(STRIP "${_cap}" _cap)
        if(_cap MATCHES "^([0-9]+)\\.([0-9]+)$")
          list(APPEND _steps_found "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
        endif()
      endforeach()
      list(REMOVE_DUPLICATES _steps_found)
    endif()
  endif()
  if(_steps_found)
    set(CMAKE_CUDA_ARCHITECTURES "${_steps_found}" CACHE STRING "CUDA architectures")
    set(STEPS_ARCH_SOURCE "detected on this machine")
  else()
    set(CMAKE_CUDA_ARCHITECTURES "${STEPS_DEFAULT_CUDA_ARCHITECTURES}" CACHE STRING "CUDA architectures")
    set(STEPS_ARCH_SOURCE "default list (no GPU found)")
  endif()
  set(STEPS_ARCH_CHOSEN "${CMAKE_CUDA_ARCHITECTURES}" CACHE INTERNAL "CUDA architectures this file chose")
endif()

function(steps_report_architectures)
  message(STATUS "cuda-steps: CUDA architectures ${CMAKE_CUDA_ARCHITECTURES} (${STEPS_ARCH_SOURCE})")
endfunction()
