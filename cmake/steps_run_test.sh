#!/usr/bin/env bash
# Test wrapper used by ctest (see StepsHelpers.cmake). Exit 77 means skipped.
#
#   steps_run_test.sh exit CODE REGEX -- CMD...
#       CMD must exit with CODE and its output must match REGEX (grep -E).
#       For CODE 2 the error must also be a single line. If CMD exits 77
#       (no GPU) while CODE is not 77, the test is skipped, not failed.
#   steps_run_test.sh reject -- GRADER...
#       A mutant grader: it must FAIL through a test assertion (Catch2 prints
#       "FAILED"), not pass, not crash, not skip.
#   steps_run_test.sh sanitize TOOL PROBE -- CMD...
#       Runs CMD under compute-sanitizer --tool TOOL; skipped (77) when the
#       sanitizer is missing or PROBE finds no usable GPU.
set -u
mode=$1; shift

run_capture() {  # run "$@", keep output in $out and status in $rc
  out=$("$@" 2>&1); rc=$?
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
  reject)
    shift 1
    run_capture "$@"
    printf '%s\n' "$out" | tail -n 40
    if [ "$rc" -eq 77 ]; then echo "[skipped: no GPU to run the mutant on]"; exit 77; fi
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
    sanitizer=$(command -v compute-sanitizer || true)
    [ -z "$sanitizer" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] && sanitizer=/usr/local/cuda/bin/compute-sanitizer
    if [ -z "$sanitizer" ]; then echo "[skipped: compute-sanitizer not found]"; exit 77; fi
    if ! reason=$("$probe" 2>&1); then echo "[skipped: $reason]"; exit 77; fi
    run_capture "$sanitizer" --tool "$tool" --error-exitcode 99 --print-limit 20 "$@"
    printf '%s\n' "$out" | tail -n 60
    if [ "$rc" -eq 77 ]; then echo "[skipped: the program itself skipped (exit 77)]"; exit 77; fi
    if [ "$rc" -ne 0 ]; then echo "[FAIL: compute-sanitizer $tool exited $rc]"; exit 1; fi
    echo "[ok: compute-sanitizer $tool clean]"; exit 0 ;;
  *)
    echo "steps_run_test.sh: unknown mode '$mode'" >&2; exit 2 ;;
esac
