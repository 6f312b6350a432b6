#!/usr/bin/env bash
# One full pass on a GPU machine, for course authors: configure, build with
# all cores, run the test suite, the course check, the grader on the stubs and
# the benchmark. Logs go to $OUT (default build/logs), at most 8 files:
# session.log test.log check.log bench.log, results.tar.gz (docs/results, the
# rendered lessons and charts) and extra.tar.gz (ctest's full log, the build
# and grade logs, the profile values).
#   OUT=dir [PHASES="build test check grade bench"] bash tools/gpu_session.sh [extra commands]
# PHASES splits the pass over several calls of a machine whose calls are
# limited in time (the build directory is kept between them).
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/logs}
mkdir -p "$OUT"
STEPS_JOBS=$(nproc)
export STEPS_JOBS
start=$(date +%s)
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv
  cmake --version | head -1; nvcc --version | tail -1
} 2>&1 | tee "$OUT/session.log"
PHASES=${PHASES:-build test check grade bench}
step() { echo "== $* ($(($(date +%s) - start)) s)" | tee -a "$OUT/session.log"; }
want() { [[ " $PHASES " == *" $1 "* ]]; }
if want build; then
  step build;  ./tutorial test -N >/dev/null 2>&1
  cp build/tutorial-build.log build/logs-build.log 2>/dev/null
  grep -E "error|warning" build/tutorial-build.log | head -40 | tee -a "$OUT/session.log"
fi
if want test; then
  step test;   ./tutorial test 2>&1 | tee "$OUT/test.log" | grep -E "tests passed|Failed|\*\*\*|Skipped|Timeout" | tee -a "$OUT/session.log"
fi
if want check; then
  step check;  ./tutorial check 2>&1 | tee "$OUT/check.log" | tail -n 3 | tee -a "$OUT/session.log"
fi
want grade && step grade && while IFS=$'\t' read -r num folder status title; do
  case "$num" in '#'*|'') continue ;; esac
  [ "$status" = planned ] && continue
  [ -d "exercises/$folder" ] || continue
  ./tutorial grade "$num"
done < course.tsv > build/logs-grade.log 2>&1
if want bench; then
  step bench;  ./tutorial bench --profile 2>&1 | tee "$OUT/bench.log" | tail -n 30 | tee -a "$OUT/session.log"
fi
if [ $# -gt 0 ]; then step extra; bash -c "$*" >> "$OUT/session.log" 2>&1; fi
tar czf "$OUT/results.tar.gz" docs/results chapters/*/README.md docs/figures 2>/dev/null
tar czf "$OUT/extra.tar.gz" build/Testing/Temporary/LastTest.log build/logs-*.log build/profile build/results 2>/dev/null
step finished
