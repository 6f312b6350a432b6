#!/usr/bin/env bash
# One full pass on a GPU machine, for course authors: configure, build with
# all cores, run the test suite, the course check, the grader on the stubs and
# the benchmark. Logs go to $OUT (default build/logs).
#   bash tools/gpu_session.sh [extra commands to run at the end]
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-build/logs}
mkdir -p "$OUT"
export STEPS_JOBS=$(nproc)
start=$(date +%s)
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
  cmake --version | head -1; nvcc --version | tail -1
} 2>&1 | tee "$OUT/session.log"
step() { echo "== $* ($(($(date +%s) - start)) s)" | tee -a "$OUT/session.log"; }
step build;  ./tutorial test -N >/dev/null 2>&1 || true
cat build/tutorial-build.log > "$OUT/build.log" 2>/dev/null
step test;   ./tutorial test 2>&1 | tee "$OUT/test.log" | grep -E "tests passed|Failed|\*\*\*|Skipped" | tee -a "$OUT/session.log"
step check;  ./tutorial check 2>&1 | tee "$OUT/check.log" | tee -a "$OUT/session.log" >/dev/null
step grade;  for d in exercises/[0-9][0-9]_*/; do n=$(basename "$d"); ./tutorial grade "${n%%_*}"; done > "$OUT/grade.log" 2>&1
step bench;  ./tutorial bench 2>&1 | tee "$OUT/bench.log" | tee -a "$OUT/session.log" >/dev/null
cp docs/results/*.json "$OUT/" 2>/dev/null
if [ $# -gt 0 ]; then step extra; bash -c "$*" 2>&1 | tee "$OUT/extra.log" >/dev/null; fi
step done
