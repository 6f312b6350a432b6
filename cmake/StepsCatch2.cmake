# Catch2: version 3 when installed, else version 2 (Debian 12 and Ubuntu 22.04
# ship 2.13). Both are used through common/include/steps/catch.hpp, so test
# code never sees the difference. Nothing is downloaded.

set(STEPS_HAVE_CATCH2 OFF)
set(_steps_catch2 "off")
if(STEPS_BUILD_TESTS AND BUILD_TESTING)
  find_package(Catch2 3 QUIET CONFIG)
  if(NOT Catch2_FOUND)
    find_package(Catch2 2 QUIET CONFIG)
  endif()
  if(Catch2_FOUND)
    string(REGEX MATCH "^[0-9]+" STEPS_CATCH2_MAJOR "${Catch2_VERSION}")
    set(STEPS_HAVE_CATCH2 ON)
    set(_steps_catch2 "found ${Catch2_VERSION}")
    message(STATUS "cuda-steps: Catch2 ${Catch2_VERSION} found")
  else()
    set(_steps_catch2 "missing")
    message(WARNING "cuda-steps: Catch2 (v3 or v2) not found: the graders, mutants and unit tests are not built "
                    "(the chapters are). Install it (Debian/Ubuntu: apt-get install catch2).")
  endif()
endif()
# For ./tutorial: "found <version>", "missing" (it says so after `test` and
# configures again when a grading command runs), or "off" (no tests asked for).
set(STEPS_CATCH2 "${_steps_catch2}" CACHE INTERNAL "Catch2 as the last configure found it")
