# Helpers that make a chapter or an exercise one call. CONTRIBUTING.md has the
# checklists; this file is the reference.
#
#   steps_add_chapter(SOURCES <files...>
#                     [TEST_ARGS <args...>] [SANITIZE_ARGS <args...>]
#                     [RACECHECK_ARGS <args...> RACECHECK_WHY <reason>]
#                     [CUDA_ARCHITECTURES <arch...>] [LIBRARIES <targets...>]
#                     [MIN_GPUS <n>] [TIMEOUT <seconds>])
#       The binary is "ch" + the folder name (ch05_transpose); number, binary
#       and title come from course.tsv and reach the program as
#       STEPS_CHAPTER_NUMBER / _BINARY / _TITLE. Every sanitizer runs the
#       program with SANITIZE_ARGS; racecheck with RACECHECK_ARGS instead
#       where given (a version racecheck cannot judge left out), with the
#       reason stated in RACECHECK_WHY.
#   steps_add_chapter_run(<name> [EXIT <code>] [MATCH <regex>] [LABEL <label>] ARGS <args...>)
#       Another run of the chapter program (default: label gpu, exit 0).
#   steps_add_exercise([ID <id>] SOURCES <files...> GRADER <file>
#                      [HOST] [HUGE] [TIMEOUT <seconds>] [SANITIZE_FILTER <catch2 spec>]
#                      [SANITIZE_TOOLS <tools...> SANITIZE_WHY <reason>]
#                      [CUDA_ARCHITECTURES <arch...>] [LIBRARIES <targets...>])
#       An exercise: exercises/NN_topic/ (no ID) or exercises/NN_topic/<id>/;
#       the solution mirrors it under solutions/, with mutants/*.mutant.
#       HOST: graded on the CPU (runs in CI; no GPU needed).
#       HUGE: the grader has hidden "[.huge]" cases (past 2^31 elements), run
#       alone after the others pass (./tutorial grade; test solution.<name>.huge).
#   steps_add_profile_test(<name> COMMAND <target> <args...>
#                          MEASURE <name=kernel_regex:metric_or_alias>... [VAR <k=v>...] EXPECT <expr>...)
#       Named profile.<NN_topic>.<name>.
#   steps_test(<name> <labels> <mode> <args...>)
#       A test through cmake/steps_run_test.sh (modes: exit, reject, sanitize).
#
# Test labels (ctest -L): every test carries at least one.
#   host     runs anywhere              gpu       needs a GPU (exit 77 = skipped)
#   solution reference solutions        grade     your exercises
#   mutants  graders reject broken code sanitize  compute-sanitizer tools
#   profile  Nsight Compute metrics     multigpu  needs several GPUs
# `./tutorial test` runs all but grade (the results of the reference code and
# the course's own checks: green on a correct clone); your grades run through
# ./tutorial grade and ./tutorial progress. Timing never decides a test.
#
# The build manifests, for ./tutorial and tools/check.sh: STEPS_MANIFEST_DIR
# holds chapters.tsv and exercises.tsv, tab-separated, whose first line names
# the columns (readers look columns up by that name; columns may be appended,
# never renamed). The top-level CMakeLists.txt writes the header lines.
set(STEPS_CHAPTERS_COLUMNS number folder binary)
set(STEPS_EXERCISES_COLUMNS number id name grader solution kind readme learner graders filter probe huge)

set(STEPS_TEST_RUNNER ${CMAKE_CURRENT_LIST_DIR}/steps_run_test.sh)
set(STEPS_SANITIZER_TOOLS memcheck racecheck initcheck synccheck)
# Where ./tutorial and tools/check.sh find what this configure built.
set(STEPS_MANIFEST_DIR ${PROJECT_BINARY_DIR}/course)

# Reads course.tsv into STEPS_COURSE_FOLDERS and, per folder,
# STEPS_COURSE_<folder>_NUMBER / _STATUS / _TITLE.
function(steps_read_course file)
  file(STRINGS ${file} lines)
  set(folders "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^#" OR line STREQUAL "")
      continue()
    endif()
    if(NOT line MATCHES "^([0-9][0-9])\t([0-9][0-9]_[A-Za-z0-9_]+)\t(ready|wip|planned)\t(.+)$")
      message(FATAL_ERROR "course.tsv: bad line '${line}' (number, folder, status, title; tab-separated)")
    endif()
    list(APPEND folders ${CMAKE_MATCH_2})
    set(STEPS_COURSE_${CMAKE_MATCH_2}_NUMBER ${CMAKE_MATCH_1} PARENT_SCOPE)
    set(STEPS_COURSE_${CMAKE_MATCH_2}_STATUS ${CMAKE_MATCH_3} PARENT_SCOPE)
    set(STEPS_COURSE_${CMAKE_MATCH_2}_TITLE "${CMAKE_MATCH_4}" PARENT_SCOPE)
  endforeach()
  set(STEPS_COURSE_FOLDERS ${folders} PARENT_SCOPE)
endfunction()

# The "NN_topic" folder the current source dir belongs to (chapters/NN_topic,
# exercises/NN_topic or exercises/NN_topic/<id>) -> NN and NN_topic.
function(_steps_chapter_id out_number out_slug)
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  if(NOT rel MATCHES "^(chapters|exercises|solutions)/(([0-9][0-9])_[^/]+)")
    message(FATAL_ERROR "cuda-steps: '${rel}' is not under chapters/NN_topic or exercises/NN_topic")
  endif()
  set(${out_number} ${CMAKE_MATCH_3} PARENT_SCOPE)
  set(${out_slug} ${CMAKE_MATCH_2} PARENT_SCOPE)
endfunction()

function(steps_test name labels)
  add_test(NAME ${name} COMMAND bash ${STEPS_TEST_RUNNER} ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" SKIP_RETURN_CODE 77)
endfunction()

# A Catch2 program of host tests (an exercise's grader helpers on hand-made
# input): test NAME, label host (no GPU needed), the program in bin/, the
# calling folder on its include path. Nothing without Catch2.
#   steps_add_host_test(NAME host.<where>.<what> TARGET <program> SOURCES ... [LIBRARIES ...])
function(steps_add_host_test)
  cmake_parse_arguments(PARSE_ARGV 0 HT "" "NAME;TARGET" "SOURCES;LIBRARIES")
  if(NOT (BUILD_TESTING AND STEPS_HAVE_CATCH2))
    return()
  endif()
  add_executable(${HT_TARGET} ${HT_SOURCES})
  target_link_libraries(${HT_TARGET} PRIVATE ${HT_LIBRARIES} steps_catch_host_main steps::warnings)
  target_include_directories(${HT_TARGET} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  set_target_properties(${HT_TARGET} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
  _steps_host_test(${HT_NAME} ${HT_TARGET})
endfunction()

# A test that needs no GPU: label host; exit 77 means skipped.
function(_steps_host_test name)
  add_test(NAME ${name} COMMAND ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS host SKIP_RETURN_CODE 77)
endfunction()

# A lesson's claim about the machine code (tools/sass.py; no GPU needed):
# runs a Python script of the calling folder with --nvcc and, where CMake
# found cuobjdump, --cuobjdump, then ARGS. Label host; exit 77 skips (no
# cuobjdump or nvdisasm, or no code for the architecture the claim is about).
#   steps_add_sass_test(NAME host.<where>.<what> SCRIPT <file.py> [ARGS ...])
function(steps_add_sass_test)
  cmake_parse_arguments(PARSE_ARGV 0 ST "" "NAME;SCRIPT" "ARGS")
  find_program(STEPS_CUOBJDUMP cuobjdump HINTS ${CUDAToolkit_BIN_DIR})
  if(STEPS_CUOBJDUMP)
    list(PREPEND ST_ARGS --cuobjdump ${STEPS_CUOBJDUMP})
  endif()
  if(BUILD_TESTING AND Python3_Interpreter_FOUND)
    _steps_host_test(${ST_NAME} ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/${ST_SCRIPT}
                     --nvcc ${CMAKE_CUDA_COMPILER} ${ST_ARGS})
  endif()
endfunction()

function(_steps_sanitize_tests prefix tools)
  foreach(tool IN LISTS tools)
    steps_test(sanitize.${prefix}.${tool} "sanitize"
      sanitize ${tool} $<TARGET_FILE:steps_gpu_probe> -- ${ARGN})
  endforeach()
endfunction()

# Architecture list for targets that need a special one (chapter 10: 90a).
# "90a" becomes -gencode arch=compute_90a,code=sm_90a: the arch-specific
# instructions (wgmma, setmaxnreg) exist only in that form.
function(_steps_set_architectures target)
  if(NOT ARGN)
    return()
  endif()
  set(plain "")
  set(gencode "")
  foreach(arch IN LISTS ARGN)
    if(arch MATCHES "^([0-9]+)a$")
      list(APPEND gencode "-gencode=arch=compute_${CMAKE_MATCH_1}a,code=sm_${CMAKE_MATCH_1}a")
    else()
      list(APPEND plain ${arch})
    endif()
  endforeach()
  if(plain)
    set_property(TARGET ${target} PROPERTY CUDA_ARCHITECTURES ${plain})
  else()
    set_property(TARGET ${target} PROPERTY CUDA_ARCHITECTURES OFF)
  endif()
  if(gencode)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${gencode}>)
  endif()
endfunction()

function(steps_add_chapter)
  cmake_parse_arguments(PARSE_ARGV 0 CH "" "MIN_GPUS;TIMEOUT;RACECHECK_WHY"
    "SOURCES;TEST_ARGS;SANITIZE_ARGS;RACECHECK_ARGS;CUDA_ARCHITECTURES;LIBRARIES")
  if(CH_RACECHECK_ARGS AND NOT CH_RACECHECK_WHY)
    message(FATAL_ERROR "cuda-steps: RACECHECK_ARGS needs RACECHECK_WHY (why racecheck runs other arguments)")
  endif()
  _steps_chapter_id(number slug)
  set(binary ch${slug})
  add_executable(${binary} ${CH_SOURCES})
  target_link_libraries(${binary} PRIVATE steps::common steps::warnings ${CH_LIBRARIES})
  target_compile_definitions(${binary} PRIVATE
    STEPS_CHAPTER_NUMBER="${number}" STEPS_CHAPTER_BINARY="${binary}"
    STEPS_CHAPTER_TITLE="${STEPS_COURSE_${slug}_TITLE}")
  set_target_properties(${binary} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
  _steps_set_architectures(${binary} ${CH_CUDA_ARCHITECTURES})
  # The learner's own exercise code shows up as "yours" rows: every exercise
  # of this chapter that built a learner library.
  get_property(learners GLOBAL PROPERTY STEPS_LEARNERS_${number})
  if(learners)
    target_link_libraries(${binary} PRIVATE ${learners})
    target_compile_definitions(${binary} PRIVATE STEPS_WITH_EXERCISE=1)
    get_property(ids GLOBAL PROPERTY STEPS_EXERCISE_IDS_${number})
    foreach(id IN LISTS ids)
      string(TOUPPER ${id} ID)
      target_compile_definitions(${binary} PRIVATE STEPS_WITH_EXERCISE_${ID}=1)
    endforeach()
  endif()
  set_property(GLOBAL APPEND PROPERTY STEPS_BINARIES ${binary})
  file(APPEND ${STEPS_MANIFEST_DIR}/chapters.tsv "${number}\t${slug}\t${binary}\n")

  if(NOT BUILD_TESTING)
    return()
  endif()
  set(exe $<TARGET_FILE:${binary}>)
  # The command line contract: help and list work anywhere; bad input is a
  # one-line error with exit code 2, before any GPU work.
  steps_test(host.${binary}.help "host" exit 0 "Usage: ${binary}" -- ${exe} --help)
  steps_test(host.${binary}.list "host" exit 0 ".*" -- ${exe} --list)
  steps_test(host.${binary}.bad_size_text "host" exit 2 "--size" -- ${exe} --size abc)
  steps_test(host.${binary}.bad_size_negative "host" exit 2 "--size" -- ${exe} --size -5)
  steps_test(host.${binary}.bad_iters "host" exit 2 "--iters" -- ${exe} --iters 0)
  steps_test(host.${binary}.unknown_option "host" exit 2 "--frobnicate" -- ${exe} --frobnicate)
  steps_test(host.${binary}.unknown_variant "host" exit 2 "no_such_version" -- ${exe} --variant no_such_version)
  steps_test(host.${binary}.json_unwritable "host" exit 2 "--json" -- ${exe} --json /nonexistent-dir/x.json)
  # On a GPU: every version verifies; a size far beyond the GPU's memory is a
  # clean error (exit 1), not a crash. Without a GPU both skip (exit 77).
  set(labels "gpu")
  if(CH_MIN_GPUS AND CH_MIN_GPUS GREATER 1)
    set(labels "gpu;multigpu")
  endif()
  steps_test(gpu.${binary} "${labels}" exit 0 ".*" -- ${exe} ${CH_TEST_ARGS})
  steps_test(gpu.${binary}.too_big "gpu" exit 1 "does not fit" -- ${exe} --size 1T)
  if(CH_TIMEOUT)
    set_tests_properties(gpu.${binary} PROPERTIES TIMEOUT ${CH_TIMEOUT})
  endif()
  if(CH_SANITIZE_ARGS)
    if(CH_RACECHECK_ARGS)
      set(tools ${STEPS_SANITIZER_TOOLS})
      list(REMOVE_ITEM tools racecheck)
      _steps_sanitize_tests(${binary} "${tools}" ${exe} ${CH_SANITIZE_ARGS})
      _steps_sanitize_tests(${binary} racecheck ${exe} ${CH_RACECHECK_ARGS})
    else()
      _steps_sanitize_tests(${binary} "${STEPS_SANITIZER_TOOLS}" ${exe} ${CH_SANITIZE_ARGS})
    endif()
  endif()
endfunction()

function(steps_add_chapter_run name)
  cmake_parse_arguments(PARSE_ARGV 1 RUN "" "EXIT;MATCH;LABEL" "ARGS")
  if(NOT BUILD_TESTING)
    return()
  endif()
  _steps_chapter_id(number slug)
  if(NOT DEFINED RUN_EXIT)
    set(RUN_EXIT 0)
  endif()
  if(NOT RUN_MATCH)
    set(RUN_MATCH ".*")
  endif()
  if(NOT RUN_LABEL)
    set(RUN_LABEL gpu)
  endif()
  steps_test(${RUN_LABEL}.ch${slug}.${name} "${RUN_LABEL}" exit ${RUN_EXIT} "${RUN_MATCH}" --
    $<TARGET_FILE:ch${slug}> ${RUN_ARGS})
endfunction()

# Writes a mutant: one solution source with exactly one edit, described by a
# .mutant file:
#   line 1: what the mutant gets wrong (one line, for people)
#   [--- file <name>]   which solution source to edit (default: the first)
#   [--- args <args>]   grader arguments that catch it (e.g. "[.huge]": a
#                       32-bit overflow shows only past 2^31 elements); such
#                       a mutant's test runs alone
#   --- find            the exact text, which must occur exactly once
#   --- replace         the new text
#   --- end
# Returns the edited file's name in out_name.
function(_steps_make_mutant solution_dir default_src mutant_file out_dir out_name out_args)
  file(READ ${mutant_file} spec)
  set(args "")
  if(spec MATCHES "\n--- args ([^\n]+)\n")
    string(STRIP "${CMAKE_MATCH_1}" args)
  endif()
  set(${out_args} "${args}" PARENT_SCOPE)
  set(src ${default_src})
  if(spec MATCHES "\n--- file ([^\n]+)\n")
    string(STRIP "${CMAKE_MATCH_1}" src)
  endif()
  set(solution ${solution_dir}/${src})
  if(NOT EXISTS ${solution})
    message(FATAL_ERROR "${mutant_file}: names '${src}', which is not in ${solution_dir}")
  endif()
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
  file(WRITE ${out_dir}/${src}.tmp "${head}${replace_text}${tail}")
  configure_file(${out_dir}/${src}.tmp ${out_dir}/${src} COPYONLY)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${mutant_file} ${solution})
  set(${out_name} ${src} PARENT_SCOPE)
endfunction()

# A grader's own objects, compiled once per exercise: the grader source
# (Catch2 tests, the slow part of a build) against the exercise's headers.
# The learner's grader, the solution's and every mutant link these objects
# with their own implementation sources, so a mutant costs only its one
# edited file. A definition that must reach the grader's compile (such as
# exercise 10 ring's STEPS_RING_CHECKED) goes on this target as well.
function(_steps_grader_objects target grader ex_dir host archs libs)
  add_library(${target} OBJECT ${grader})
  _steps_grader_links(${target} "${ex_dir}" "${host}" "${libs}")
  _steps_set_architectures(${target} ${archs})
endfunction()

# What a grader's objects and executable both link: the shared library, the
# test main (GPU: exits 77 without one; HOST: runs anywhere), the exercise's
# folder for its headers.
function(_steps_grader_links target ex_dir host libs)
  if(host)
    target_link_libraries(${target} PRIVATE steps::common steps_catch_host_main steps::warnings ${libs})
  else()
    target_link_libraries(${target} PRIVATE steps::common steps_catch_gpu_main steps::warnings ${libs})
  endif()
  target_include_directories(${target} PRIVATE ${ex_dir})
endfunction()

# One grader executable: the grader's objects (_steps_grader_objects), the
# implementation under test, the shared library and a test main (GPU: exits
# 77 without one; HOST: runs anywhere).
function(_steps_grader target grader_objects ex_dir host archs libs)
  add_executable(${target} ${ARGN})
  target_link_libraries(${target} PRIVATE ${grader_objects})
  _steps_grader_links(${target} "${ex_dir}" "${host}" "${libs}")
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/graders)
  _steps_set_architectures(${target} ${archs})
endfunction()

function(steps_add_exercise)
  cmake_parse_arguments(PARSE_ARGV 0 EX "HOST;HUGE" "ID;GRADER;SANITIZE_FILTER;TIMEOUT;SANITIZE_WHY"
    "SOURCES;CUDA_ARCHITECTURES;LIBRARIES;SANITIZE_TOOLS")
  # The compute-sanitizer tools of the solution's sanitize tests and of the
  # grade (memcheck and racecheck among them); fewer than all only with the
  # reason in SANITIZE_WHY, which the exercise's CMakeLists.txt states.
  set(sanitize_tools ${STEPS_SANITIZER_TOOLS})
  if(EX_SANITIZE_TOOLS)
    if(NOT EX_SANITIZE_WHY)
      message(FATAL_ERROR "cuda-steps: SANITIZE_TOOLS needs SANITIZE_WHY (why a tool is left out)")
    endif()
    foreach(tool IN LISTS EX_SANITIZE_TOOLS)
      if(NOT tool IN_LIST STEPS_SANITIZER_TOOLS)
        message(FATAL_ERROR "cuda-steps: SANITIZE_TOOLS: unknown tool '${tool}' (${STEPS_SANITIZER_TOOLS})")
      endif()
    endforeach()
    set(sanitize_tools ${EX_SANITIZE_TOOLS})
  endif()
  set(grade_tools "")
  foreach(tool memcheck racecheck)
    if(tool IN_LIST sanitize_tools)
      list(APPEND grade_tools ${tool})
    endif()
  endforeach()
  _steps_chapter_id(number slug)
  set(ex_dir ${CMAKE_CURRENT_SOURCE_DIR})
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR}/exercises ${ex_dir})
  set(solution_dir ${PROJECT_SOURCE_DIR}/solutions/${rel})
  if(EX_ID)
    # The layout is the contract (./tutorial hint reads it without a
    # configure): exercise <ID> lives in exercises/NN_topic/<ID>/.
    if(NOT rel STREQUAL "${slug}/${EX_ID}")
      message(FATAL_ERROR "cuda-steps: exercise ID '${EX_ID}' must live in exercises/${slug}/${EX_ID}/ (it is in exercises/${rel})")
    endif()
    set(id ${EX_ID})
    set(name ${slug}_${EX_ID})
  else()
    string(REGEX REPLACE "^[0-9][0-9]_" "" id ${slug})
    set(name ${slug})
  endif()
  if(NOT EX_TIMEOUT)
    set(EX_TIMEOUT 600)
  endif()
  set(learner_sources "")
  set(solution_sources "")
  foreach(src IN LISTS EX_SOURCES)
    list(APPEND learner_sources ${ex_dir}/${src})
    if(NOT EXISTS ${solution_dir}/${src})
      message(FATAL_ERROR "cuda-steps: exercise ${name} has ${src} but solutions/${rel}/${src} is missing")
    endif()
    list(APPEND solution_sources ${solution_dir}/${src})
  endforeach()

  # The learner's code as a library, so the chapter program can show it as a
  # row. A learner's syntax error must not break the chapter program: the
  # library is built only when it compiles (see ./tutorial, which builds
  # exercises separately and says which one does not compile).
  set(learner steps_ex${number}_${id}_learner)
  add_library(${learner} STATIC ${learner_sources})
  target_link_libraries(${learner} PUBLIC steps::common ${EX_LIBRARIES} PRIVATE steps::warnings)
  target_include_directories(${learner} PUBLIC ${ex_dir})
  _steps_set_architectures(${learner} ${EX_CUDA_ARCHITECTURES})
  if(NOT learner IN_LIST STEPS_BROKEN_EXERCISES)
    set_property(GLOBAL APPEND PROPERTY STEPS_LEARNERS_${number} ${learner})
    set_property(GLOBAL APPEND PROPERTY STEPS_EXERCISE_IDS_${number} ${id})
  endif()

  set(kind gpu)
  if(EX_HOST)
    set(kind host)
  endif()
  set(readme ${ex_dir}/README.md)
  file(RELATIVE_PATH readme_rel ${PROJECT_SOURCE_DIR} ${readme})
  # What a passing grade is then run on under compute-sanitizer ("~[.]"
  # keeps hidden tests such as [.speed] out: with Catch2 v2, a filter made only
  # of exclusions such as "~[large]" would otherwise select them too).
  set(filter "${EX_SANITIZE_FILTER}~[.]")
  set(probe $<TARGET_FILE:steps_gpu_probe>)
  set(probe_path ${PROJECT_BINARY_DIR}/bin/steps_gpu_probe)
  if(EX_HOST)
    set(probe none)
    set(probe_path none)
  endif()
  set(graders no)
  if(BUILD_TESTING AND STEPS_HAVE_CATCH2)
    set(graders yes)
  endif()
  set(huge no)
  if(EX_HUGE)
    set(huge yes)
  endif()
  # In the order of STEPS_EXERCISES_COLUMNS: number, id, name, grader
  # target, solution target, host|gpu, README, learner library, graders built
  # (yes|no), sanitizer filter, probe, has [.huge] cases (yes|no).
  file(APPEND ${STEPS_MANIFEST_DIR}/exercises.tsv
    "${number}\t${id}\t${name}\tgrade_${name}\tsolution_${name}\t${kind}\t${readme_rel}\t${learner}\t${graders}\t${filter}\t${probe_path}\t${huge}\n")

  if(NOT BUILD_TESTING OR NOT STEPS_HAVE_CATCH2)
    return()
  endif()
  set(grader ${ex_dir}/${EX_GRADER})
  set(labels_extra "")
  if(EX_HOST)
    set(labels_extra ";host")
  endif()

  set(grader_objects steps_grader_${name})
  _steps_grader_objects(${grader_objects} ${grader} ${ex_dir} "${EX_HOST}" "${EX_CUDA_ARCHITECTURES}"
    "${EX_LIBRARIES}")
  _steps_grader(grade_${name} ${grader_objects} ${ex_dir} "${EX_HOST}" "${EX_CUDA_ARCHITECTURES}" "${EX_LIBRARIES}"
    ${learner_sources})
  # Your grader is built on demand (./tutorial grade, progress): an exercise
  # you are in the middle of must not break the build of everything else.
  set_target_properties(grade_${name} PROPERTIES EXCLUDE_FROM_ALL TRUE)
  add_test(NAME grade.${name} COMMAND grade_${name})
  set_tests_properties(grade.${name} PROPERTIES LABELS "grade" SKIP_RETURN_CODE 77 TIMEOUT ${EX_TIMEOUT})

  _steps_grader(solution_${name} ${grader_objects} ${ex_dir} "${EX_HOST}" "${EX_CUDA_ARCHITECTURES}" "${EX_LIBRARIES}"
    ${solution_sources})
  add_test(NAME solution.${name} COMMAND solution_${name})
  set_tests_properties(solution.${name} PROPERTIES LABELS "solution${labels_extra}" SKIP_RETURN_CODE 77
    TIMEOUT ${EX_TIMEOUT})

  if(EX_HUGE)
    add_test(NAME solution.${name}.huge COMMAND solution_${name} "[.huge]")
    set_tests_properties(solution.${name}.huge PROPERTIES LABELS "solution" SKIP_RETURN_CODE 77
      TIMEOUT ${EX_TIMEOUT} RUN_SERIAL TRUE)
  endif()
  if(NOT EX_HOST)
    _steps_sanitize_tests(solution.${name} "${sanitize_tools}" $<TARGET_FILE:solution_${name}> ${filter})
  endif()
  # The grade's tools, where they are not the usual two (steps_run_test.sh
  # reads GRADER.sanitizers next to each grader: yours, the solution, mutants).
  set(sanitizers_files "")
  if(NOT grade_tools STREQUAL "memcheck;racecheck")
    string(REPLACE ";" " " grade_tools_text "${grade_tools}")
    set(sanitizers_files grade_${name} solution_${name})
  endif()

  # Mutants: broken copies of the solution that the grader must reject. Each
  # differs from the solution in one edit, so the solution stays the one copy.
  file(GLOB mutant_files CONFIGURE_DEPENDS ${solution_dir}/mutants/*.mutant)
  if(NOT mutant_files)
    message(FATAL_ERROR "cuda-steps: exercise ${name} has no solutions/${rel}/mutants/*.mutant")
  endif()
  # A mutant named NAME.profile.mutant computes the right result but breaks a
  # performance property (e.g. bank conflicts): the grader cannot reject it,
  # so only its target is built here and the exercise adds a profile test on
  # mutant_<name>_<NAME> (see steps_add_profile_test).
  list(GET EX_SOURCES 0 first_src)
  foreach(mutant_file IN LISTS mutant_files)
    get_filename_component(mutant ${mutant_file} NAME_WE)
    set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/mutants/${mutant})
    _steps_make_mutant(${solution_dir} ${first_src} ${mutant_file} ${out_dir} edited margs)
    set(sources "")
    foreach(src IN LISTS EX_SOURCES)
      if(src STREQUAL edited)
        list(APPEND sources ${out_dir}/${src})
      else()
        list(APPEND sources ${solution_dir}/${src})
      endif()
    endforeach()
    _steps_grader(mutant_${name}_${mutant} ${grader_objects} ${ex_dir} "${EX_HOST}" "${EX_CUDA_ARCHITECTURES}"
      "${EX_LIBRARIES}" ${sources})
    if(sanitizers_files)
      list(APPEND sanitizers_files mutant_${name}_${mutant})
    endif()
    if(NOT mutant_file MATCHES "\\.profile\\.mutant$")
      steps_test(mutants.${name}.${mutant} "mutants${labels_extra}"
        reject ${probe} "${filter}" -- $<TARGET_FILE:mutant_${name}_${mutant}> ${margs})
      set_tests_properties(mutants.${name}.${mutant} PROPERTIES TIMEOUT ${EX_TIMEOUT})
      if(margs)
        set_tests_properties(mutants.${name}.${mutant} PROPERTIES RUN_SERIAL TRUE)
      endif()
    endif()
  endforeach()
  foreach(target IN LISTS sanitizers_files)
    file(WRITE ${PROJECT_BINARY_DIR}/graders/${target}.sanitizers "${grade_tools_text}\n")
  endforeach()
endfunction()

# The MEASURE arguments of one kernel: `out` = <prefix>_<name>=<kernel>:<metric>
# for each <name>:<metric> that follows (a profile test's several values of
# the same kernels).
function(steps_measures out prefix kernel)
  set(measures "")
  foreach(pair IN LISTS ARGN)
    string(REPLACE ":" "=${kernel}:" measure "${prefix}_${pair}")
    list(APPEND measures "${measure}")
  endforeach()
  set(${out} ${measures} PARENT_SCOPE)
endfunction()


# A profile test (label profile): runs COMMAND under Nsight Compute and checks
# EXPECT expressions over MEASURE values (tools/profile_check.py explains the
# syntax and lists the metric aliases: ld_requests, ld_sectors, st_requests,
# st_sectors, dram_read, dram_write, dram_pct (DRAM throughput, % of peak),
# shared_ld_conflicts, shared_ld_wavefronts,
# shared_st_conflicts, sass_shared_ld, sass_shared_ld_wavefronts, sass_ldsm
# (ldmatrix instructions: LDSM, not counted by sass_shared_ld),
# sass_ldsm_wavefronts). A chapter
# program gets "--iters 1 --warmup 0 --no-verify" added. Runs alone
# (RUN_SERIAL) so other tests do not disturb the counters. Named
# profile.<NN_topic>.<name>. With STEPS_PROFILE_OUT set (./tutorial bench
# --profile), it also writes its measured values there, for the lessons.
find_package(Python3 COMPONENTS Interpreter QUIET)
function(steps_add_profile_test name)
  cmake_parse_arguments(PARSE_ARGV 1 P "" "" "COMMAND;MEASURE;VAR;EXPECT")
  if(NOT BUILD_TESTING OR NOT Python3_Interpreter_FOUND)
    return()
  endif()
  _steps_chapter_id(number slug)
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
  # A grader, solution or mutant exists only where Catch2 was found: without
  # it, the profile tests on them are left out with the graders.
  if(NOT STEPS_HAVE_CATCH2 AND NOT TARGET ${target} AND target MATCHES "^(grade|solution|mutant)_")
    return()
  endif()
  if(target MATCHES "^ch[0-9][0-9]_")
    list(APPEND P_COMMAND --iters 1 --warmup 0 --no-verify)
  endif()
  add_test(NAME profile.${slug}.${name}
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/profile_check.py
                   --probe $<TARGET_FILE:steps_gpu_probe> --name profile.${slug}.${name} ${args}
                   -- $<TARGET_FILE:${target}> ${P_COMMAND})
  set_tests_properties(profile.${slug}.${name} PROPERTIES LABELS profile SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
endfunction()
