# Catch2: version 3 when installed, else version 2 (Debian 12 and Ubuntu 22.04
# ship 2.13). Both are used through common/include/steps/catch.hpp, so test
# code never sees the difference. Nothing is downloaded.

set(STEPS_HAVE_CATCH2 OFF)
if(STEPS_BUILD_TESTS)
  find_package(Catch2 3 QUIET CONFIG)
  if(NOT Catch2_FOUND)
    find_package(Catch2 2 QUIET CONFIG)
  endif()
  if(Catch2_FOUND)
    string(REGEX MATCH "^[0-9]+" STEPS_CATCH2_MAJOR "${Catch2_VERSION}")
    set(STEPS_HAVE_CATCH2 ON)
    message(STATUS "cuda-steps: Catch2 ${Catch2_VERSION} found")
  else()
    message(WARNING "cuda-steps: Catch2 (v3 or v2) not found: tests and graders are not built. "
                    "Install it (Debian/Ubuntu: apt-get install catch2).")
  endif()
endif()
