#!/usr/bin/env bash
# Test wrapper used by ctest (see StepsHelpers.cmake). Exit 77 means skipped.
#
#   steps_run_test.sh exit CODE REGEX -- CMD...
#       CMD must exit with CODE and its output must match REGEX (grep -E).
#       For CODE 2 the error must also be a single line. If CMD exits 77
#       (no GPU) while CODE is not 77, the test is skipped, not failed.
#   steps_run_test.sh grade PROBE FILTER -- GRADER...
#       Grades: runs GRADER; when it passes and PROBE finds a GPU (PROBE
#       "none": a CPU-graded exercise), runs it again under compute-sanitizer
#       memcheck and racecheck (or the tools in GRADER.sanitizers) on the
#       tests FILTER selects (its small shapes),
#       with STEPS_SANITIZE=1 (guard-free buffers: memcheck sees every access
#       past an end). A finding is a failure, reported with the sanitizer's
#       first line and a hint. Exit 0 passed, 1 not passed, 77 skipped.
#   steps_run_test.sh reject PROBE FILTER -- GRADER...
#       A mutant: grading it (as above) must FAIL with a message ("FAILED"),
#       not pass, not crash, not skip. A hang ended by the grader's watchdog
#       (exit code 3, with its message) counts as rejected.
#   steps_run_test.sh sanitize TOOL PROBE -- CMD...
#       Runs CMD under compute-sanitizer --tool TOOL; skipped (77) when the
#       sanitizer is missing or PROBE finds no usable GPU.
set -u
mode=$1; shift

run_capture() {  # run "$@", keep output in $out and status in $rc
  out=$("$@" 2>&1); rc=$?
}

find_sanitizer() {
  sanitizer=$(command -v compute-sanitizer || true)
  [ -z "$sanitizer" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] && sanitizer=/usr/local/cuda/bin/compute-sanitizer
}

# grade PROBE FILTER GRADER...: sets $out (what the learner sees) and
# $grader_rc; returns 0 passed, 1 not passed, 77 skipped.
grade() {
  local probe=$1 filter=$2; shift 2
  run_capture "$@"
  grader_rc=$rc
  [ "$rc" -eq 77 ] && return 77
  [ "$rc" -ne 0 ] && return 1
  [ "$probe" = none ] && return 0
  find_sanitizer
  if [ -z "$sanitizer" ] || ! "$probe" >/dev/null 2>&1; then
    out+=$'\n'"[note: compute-sanitizer not run here (no sanitizer or no GPU)]"
    return 0
  fi
  local passed=$out tool san tools="memcheck racecheck"
  # An exercise may leave a tool out, with its reason (steps_add_exercise
  # SANITIZE_TOOLS): then the build writes the tools to GRADER.sanitizers.
  [ -f "$1.sanitizers" ] && tools=$(cat "$1.sanitizers")
  for tool in $tools; do
    san=$(STEPS_SANITIZE=1 "$sanitizer" --tool "$tool" --error-exitcode 99 --print-limit 5 "$@" "$filter" 2>&1)
    if [ $? -ne 0 ]; then
      local first
      first=$(grep -m1 -E "^========= +(Invalid|Error|Race|Program hit|Uninitialized|Barrier|Warning)" <<<"$san")
      [ -z "$first" ] && first=$(grep -m1 "=========" <<<"$san")
      grader_rc=1
      out="$passed"$'\n'"FAILED: your results are right, but compute-sanitizer $tool found a problem on the small shapes:"
      out+=$'\n'"  $first"
      if [ "$tool" = memcheck ]; then
        out+=$'\n'"  Hint: a thread reads or writes outside an array (past its end, or before its start), even if the result does not show it: check every bound, the last block, the tails of vector loads and the padding of a matrix."
      else
        out+=$'\n'"  Hint: two threads touch the same shared-memory word without a __syncthreads() between them (a missing barrier, or one in the wrong place); the right answer was luck."
      fi
      out+=$'\n'"  (details: STEPS_SANITIZE=1 compute-sanitizer --tool $tool $* '$filter')"
      return 1
    fi
  done
  out+=$'\n'"[compute-sanitizer ${tools// / and }: clean on the small shapes]"
  return 0
}

case "$mode" in
  exit)
    want=$1; regex=$2; shift 3
    run_capture "$@"
    printf '%s\n' "$out"
    if [ "$rc" -eq 77 ] && [ "$want" -ne 77 ]; then
      echo "[skipped: the program reported no usable GPU]"; exit 77
    fi
    if [ "$rc" -ne "$want" ]; then
      echo "[FAIL: expected exit code $want, got $rc]"; exit 1
    fi
    if [ -n "$regex" ] && ! grep -Eq -- "$regex" <<<"$out"; then
      echo "[FAIL: output does not mention '$regex']"; exit 1
    fi
    if [ "$want" -eq 2 ] && [ "$(grep -c . <<<"$out")" -ne 1 ]; then
      echo "[FAIL: a usage error must be exactly one line]"; exit 1
    fi
    echo "[ok: exit code $rc as expected]"; exit 0 ;;
  grade)
    probe=$1; filter=$2; shift 3
    grade "$probe" "$filter" "$@"
    rc=$?
    printf '%s\n' "$out"
    exit $rc ;;
  reject)
    probe=$1; filter=$2; shift 3
    grade "$probe" "$filter" "$@"
    rc=$?
    printf '%s\n' "$out" | tail -n 40
    if [ "$rc" -eq 77 ]; then echo "[skipped: no GPU to run the mutant on]"; exit 77; fi
    [ "$rc" -eq 1 ] && rc=$grader_rc
    if [ "$rc" -eq 0 ]; then
      echo "[FAIL: the grader ACCEPTED this broken version: the grader is too weak]"; exit 1
    fi
    if [ "$rc" -gt 128 ]; then
      echo "[FAIL: the grader crashed (signal $((rc - 128))) instead of reporting the bug]"; exit 1
    fi
    if ! grep -q "FAILED" <<<"$out"; then
      echo "[FAIL: the grader exited $rc without a failed check]"; exit 1
    fi
    echo "[ok: the grader rejected the mutant]"; exit 0 ;;
  sanitize)
    tool=$1; probe=$2; shift 3
    find_sanitizer
    if [ -z "$sanitizer" ]; then echo "[skipped: compute-sanitizer not found]"; exit 77; fi
    if ! reason=$("$probe" 2>&1); then echo "[skipped: $reason]"; exit 77; fi
    run_capture env STEPS_SANITIZE=1 "$sanitizer" --tool "$tool" --error-exitcode 99 --print-limit 20 "$@"
    printf '%s\n' "$out" | tail -n 60
    if [ "$rc" -eq 77 ]; then echo "[skipped: the program itself skipped (exit 77)]"; exit 77; fi
    if [ "$rc" -ne 0 ]; then echo "[FAIL: compute-sanitizer $tool exited $rc]"; exit 1; fi
    echo "[ok: compute-sanitizer $tool clean]"; exit 0 ;;
  *)
    echo "steps_run_test.sh: unknown mode '$mode'" >&2; exit 2 ;;
esac
