# Helpers that make a chapter or an exercise one call.
#
#   steps_add_chapter(<binary> SOURCES <files...>
#                     [TEST_ARGS <args...>] [SANITIZE_ARGS <args...>])
#   steps_add_exercise(SOURCES <files...> GRADER <file>
#                      [SANITIZE_FILTER <catch2 test spec>])
#
# Test names and labels (see DESIGN.md, "Tests"):
#   host.*      runs anywhere              gpu.*       needs a GPU (exit 77 = skipped)
#   solution.*  reference solutions        grade.*     your exercises
#   mutants.*   graders reject broken code sanitize.*  compute-sanitizer tools

set(STEPS_TEST_RUNNER ${CMAKE_CURRENT_LIST_DIR}/steps_run_test.sh)
set(STEPS_SANITIZER_TOOLS memcheck racecheck initcheck synccheck)

# Folder name "NN_topic" of the current source dir -> NN and topic.
function(_steps_chapter_id out_number out_slug)
  get_filename_component(_dir "${CMAKE_CURRENT_SOURCE_DIR}" NAME)
  if(NOT _dir MATCHES "^([0-9][0-9])_(.+)$")
    message(FATAL_ERROR "cuda-steps: folder '${_dir}' is not named NN_topic")
  endif()
  set(${out_number} ${CMAKE_MATCH_1} PARENT_SCOPE)
  set(${out_slug} ${_dir} PARENT_SCOPE)
endfunction()

# One ctest test that runs through steps_run_test.sh. MODE is exit, reject or
# sanitize (the script's header explains each).
function(_steps_wrapped_test name labels)
  add_test(NAME ${name} COMMAND bash ${STEPS_TEST_RUNNER} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" SKIP_RETURN_CODE 77)
endfunction()

function(_steps_sanitize_tests prefix)
  foreach(tool IN LISTS STEPS_SANITIZER_TOOLS)
    _steps_wrapped_test(sanitize.${prefix}.${tool} "sanitize"
      sanitize ${tool} $<TARGET_FILE:steps_gpu_probe> -- ${ARGN})
  endforeach()
endfunction()

function(steps_add_chapter binary)
  cmake_parse_arguments(PARSE_ARGV 1 CH "" "" "SOURCES;TEST_ARGS;SANITIZE_ARGS")
  _steps_chapter_id(number slug)
  add_executable(${binary} ${CH_SOURCES})
  target_link_libraries(${binary} PRIVATE steps::common)
  set_target_properties(${binary} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
  if(TARGET steps_ex${number}_learner)
    # The learner's own exercise code shows up as the "yours" row.
    target_link_libraries(${binary} PRIVATE steps_ex${number}_learner)
    target_compile_definitions(${binary} PRIVATE STEPS_WITH_EXERCISE=1)
  endif()

  if(NOT BUILD_TESTING)
    return()
  endif()
  set(exe $<TARGET_FILE:${binary}>)
  # The command line contract: help and list work anywhere; bad input is a
  # one-line error with exit code 2, before any GPU work.
  _steps_wrapped_test(host.${binary}.help "host" exit 0 "Usage: ${binary}" -- ${exe} --help)
  _steps_wrapped_test(host.${binary}.list "host" exit 0 ".*" -- ${exe} --list)
  _steps_wrapped_test(host.${binary}.bad_size_text "host" exit 2 "--size" -- ${exe} --size abc)
  _steps_wrapped_test(host.${binary}.bad_size_negative "host" exit 2 "--size" -- ${exe} --size -5)
  _steps_wrapped_test(host.${binary}.bad_iters "host" exit 2 "--iters" -- ${exe} --iters 0)
  _steps_wrapped_test(host.${binary}.unknown_option "host" exit 2 "--frobnicate" -- ${exe} --frobnicate)
  _steps_wrapped_test(host.${binary}.unknown_variant "host" exit 2 "no_such_version" -- ${exe} --variant no_such_version)
  # On a GPU: every version verifies; a size far beyond the GPU's memory is a
  # clean error (exit 1), not a crash. Without a GPU both skip (exit 77).
  _steps_wrapped_test(gpu.${binary} "gpu" exit 0 ".*" -- ${exe} ${CH_TEST_ARGS})
  _steps_wrapped_test(gpu.${binary}.too_big "gpu" exit 1 "does not fit" -- ${exe} --size 1T)
  if(CH_SANITIZE_ARGS)
    _steps_sanitize_tests(${binary} ${exe} ${CH_SANITIZE_ARGS})
  endif()
endfunction()

# A further GPU run of a chapter program with other arguments (label gpu):
# it must exit 0 (every version verified).
function(steps_add_chapter_run binary name)
  if(BUILD_TESTING)
    _steps_wrapped_test(gpu.${binary}.${name} "gpu" exit 0 ".*" -- $<TARGET_FILE:${binary}> ${ARGN})
  endif()
endfunction()

# Writes a mutant: the solution source with exactly one edit, described by a
# .mutant file (first line: what the mutant gets wrong; then "--- find",
# the exact text, "--- replace", the new text, "--- end").
function(_steps_make_mutant solution mutant_file out_file)
  file(READ ${mutant_file} spec)
  file(READ ${solution} source)
  string(FIND "${spec}" "\n--- find\n" f)
  string(FIND "${spec}" "\n--- replace\n" r)
  string(FIND "${spec}" "\n--- end" e)
  if(f EQUAL -1 OR r EQUAL -1 OR e EQUAL -1 OR NOT f LESS r OR NOT r LESS e)
    message(FATAL_ERROR "${mutant_file}: needs '--- find', '--- replace' and '--- end' sections, in that order")
  endif()
  math(EXPR f_begin "${f} + 10")
  math(EXPR f_len "${r} - ${f_begin} + 1")
  math(EXPR r_begin "${r} + 13")
  math(EXPR r_len "${e} - ${r_begin} + 1")
  if(r_len LESS 0)
    set(r_len 0)
  endif()
  string(SUBSTRING "${spec}" ${f_begin} ${f_len} find_text)
  string(SUBSTRING "${spec}" ${r_begin} ${r_len} replace_text)
  string(FIND "${source}" "${find_text}" at)
  string(FIND "${source}" "${find_text}" last REVERSE)
  if(at EQUAL -1)
    message(FATAL_ERROR "${mutant_file}: its 'find' text is not in ${solution} (did the solution change?)")
  endif()
  if(NOT at EQUAL last)
    message(FATAL_ERROR "${mutant_file}: its 'find' text appears more than once in ${solution}")
  endif()
  string(LENGTH "${find_text}" find_len)
  string(SUBSTRING "${source}" 0 ${at} head)
  math(EXPR tail_begin "${at} + ${find_len}")
  string(SUBSTRING "${source}" ${tail_begin} -1 tail)
  # Write through a temporary so an unchanged mutant is not rebuilt.
  file(WRITE ${out_file}.tmp "${head}${replace_text}${tail}")
  configure_file(${out_file}.tmp ${out_file} COPYONLY)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${mutant_file} ${solution})
endfunction()

# One grader executable: the grader source, the implementation under test,
# the shared library and the test main that skips (77) without a GPU.
function(_steps_grader target grader)
  add_executable(${target} ${grader} ${ARGN})
  target_link_libraries(${target} PRIVATE steps::common steps_catch_gpu_main)
  target_include_directories(${target} PRIVATE ${STEPS_EX_DIR})
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/graders)
endfunction()

function(steps_add_exercise)
  cmake_parse_arguments(PARSE_ARGV 0 EX "" "GRADER;SANITIZE_FILTER" "SOURCES")
  _steps_chapter_id(number slug)
  set(STEPS_EX_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  set(solution_dir ${PROJECT_SOURCE_DIR}/solutions/${slug})
  set(learner_sources "")
  set(solution_sources "")
  foreach(src IN LISTS EX_SOURCES)
    list(APPEND learner_sources ${CMAKE_CURRENT_SOURCE_DIR}/${src})
    if(NOT EXISTS ${solution_dir}/${src})
      message(FATAL_ERROR "cuda-steps: exercise ${slug} has ${src} but solutions/${slug}/${src} is missing")
    endif()
    list(APPEND solution_sources ${solution_dir}/${src})
  endforeach()

  # The learner's code as a library, so the chapter program can show it as a row.
  add_library(steps_ex${number}_learner STATIC ${learner_sources})
  target_link_libraries(steps_ex${number}_learner PUBLIC steps::common)
  target_include_directories(steps_ex${number}_learner PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})

  if(NOT BUILD_TESTING OR NOT STEPS_HAVE_CATCH2)
    return()
  endif()
  set(grader ${CMAKE_CURRENT_SOURCE_DIR}/${EX_GRADER})

  _steps_grader(grade_${slug} ${grader} ${learner_sources})
  add_test(NAME grade.${slug} COMMAND grade_${slug})
  set_tests_properties(grade.${slug} PROPERTIES LABELS "grade" SKIP_RETURN_CODE 77)

  _steps_grader(solution_${slug} ${grader} ${solution_sources})
  add_test(NAME solution.${slug} COMMAND solution_${slug})
  set_tests_properties(solution.${slug} PROPERTIES LABELS "solution" SKIP_RETURN_CODE 77)

  # "~[.]" keeps hidden tests ([.speed]) out: with Catch2 v2, a filter made
  # only of exclusions such as "~[large]" would otherwise select them too.
  set(filter "${EX_SANITIZE_FILTER}~[.]")
  _steps_sanitize_tests(solution.${slug} $<TARGET_FILE:solution_${slug}> ${filter})

  # Mutants: broken copies of the solution that the grader must reject. Each
  # differs from the solution in one edit, so the solution stays the one copy.
  list(LENGTH solution_sources n_sources)
  if(NOT n_sources EQUAL 1)
    message(FATAL_ERROR "cuda-steps: mutants assume one solution source per exercise (${slug})")
  endif()
  file(GLOB mutant_files CONFIGURE_DEPENDS ${solution_dir}/mutants/*.mutant)
  if(NOT mutant_files)
    message(FATAL_ERROR "cuda-steps: exercise ${slug} has no solutions/${slug}/mutants/*.mutant")
  endif()
  # A mutant named NAME.profile.mutant computes the right result but breaks a
  # performance property (e.g. bank conflicts): the grader cannot reject it,
  # so only its target is built here and the exercise adds a profile test on
  # mutant_<slug>_<NAME> (see steps_add_profile_test).
  list(GET EX_SOURCES 0 src_name)
  foreach(mutant_file IN LISTS mutant_files)
    get_filename_component(mutant ${mutant_file} NAME_WE)
    set(out ${CMAKE_CURRENT_BINARY_DIR}/mutants/${mutant}/${src_name})
    _steps_make_mutant(${solution_sources} ${mutant_file} ${out})
    _steps_grader(mutant_${slug}_${mutant} ${grader} ${out})
    if(NOT mutant_file MATCHES "\\.profile\\.mutant$")
      _steps_wrapped_test(mutants.${slug}.${mutant} "mutants"
        reject -- $<TARGET_FILE:mutant_${slug}_${mutant}>)
    endif()
  endforeach()
endfunction()

# A profile test (label profile): runs COMMAND under Nsight Compute and checks
# EXPECT expressions over MEASURE values (tools/profile_check.py explains the
# syntax). Runs alone (RUN_SERIAL) so other tests do not disturb the counters.
#
#   steps_add_profile_test(<name> COMMAND <target> <args...>
#                          MEASURE <name=kernel_regex:metric>... VAR <k=v>... EXPECT <expr>...)
find_package(Python3 COMPONENTS Interpreter QUIET)
function(steps_add_profile_test name)
  cmake_parse_arguments(PARSE_ARGV 1 P "" "" "COMMAND;MEASURE;VAR;EXPECT")
  if(NOT BUILD_TESTING OR NOT Python3_Interpreter_FOUND)
    return()
  endif()
  set(args "")
  foreach(m IN LISTS P_MEASURE)
    list(APPEND args --measure ${m})
  endforeach()
  foreach(v IN LISTS P_VAR)
    list(APPEND args --var ${v})
  endforeach()
  foreach(e IN LISTS P_EXPECT)
    list(APPEND args --expect ${e})
  endforeach()
  list(POP_FRONT P_COMMAND target)
  add_test(NAME profile.${name}
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/profile_check.py
                   --probe $<TARGET_FILE:steps_gpu_probe> ${args} -- $<TARGET_FILE:${target}> ${P_COMMAND})
  set_tests_properties(profile.${name} PROPERTIES LABELS profile SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
endfunction()
