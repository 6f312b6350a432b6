#!/usr/bin/env bash
# Course consistency check (./tutorial check), like rustlings' dev check.
#
# Without a GPU: every chapter has its lesson headings, program and build
# file; every exercise has TODOs, a README with task and escalating hints, a
# grader, a solution mirroring each source file (with no TODO left) and at
# least four mutants. The mutants must apply to the solution (configuring
# fails otherwise).
# With a GPU, also: every unsolved stub FAILS its grader with a readable
# message, and every solution PASSES.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
cd "$ROOT" || exit 1
errors=0
ok() { printf '  ok    %s\n' "$*"; }
bad() { printf '  FAIL  %s\n' "$*"; errors=$((errors + 1)); }

headings=("What you will learn" "The idea" "The code, version by version" "Measured results"
          "Profile it" "Pitfalls" "Exercises" "Further reading")

# Chapters in progress (STEPS_WIP_CHAPTERS in CMakeLists.txt) are not checked yet.
wip=$(sed -n '/^set(STEPS_WIP_CHAPTERS/,/^)/p' CMakeLists.txt | grep -v "set(\|)" | tr -d ' ')
is_wip() { grep -qx "$1" <<<"$wip"; }

echo "Chapters:"
listed=$(sed -n '/^set(STEPS_CHAPTERS/,/^)/p' CMakeLists.txt)
for d in chapters/[0-9][0-9]_*/; do
  slug=$(basename "$d")
  if is_wip "$slug"; then echo "  skip  $slug (work in progress)"; continue; fi
  problems=""
  for f in README.md main.cu CMakeLists.txt; do [ -f "$d$f" ] || problems+=" missing $f;"; done
  for h in "${headings[@]}"; do
    grep -q "^## $h" "${d}README.md" 2>/dev/null || problems+=" lesson lacks heading '## $h';"
  done
  grep -qw "$slug" <<<"$listed" || problems+=" not listed in STEPS_CHAPTERS;"
  grep -qE "(^|[^_[:alnum:]])assert\(" "$d"*.cu* 2>/dev/null && problems+=" uses assert() (vanishes in Release);"
  grep -qE "(MEASURE|PROFILE)\(" "${d}README.md" 2>/dev/null && problems+=" lesson has unfilled MEASURE(...)/PROFILE(...) placeholders;"
  [ -z "$problems" ] && ok "$slug" || bad "$slug:$problems"
done

echo "Exercises:"
for d in exercises/[0-9][0-9]_*/; do
  slug=$(basename "$d")
  if is_wip "$slug"; then echo "  skip  $slug (work in progress)"; continue; fi
  sol="solutions/$slug"
  problems=""
  [ -f "${d}README.md" ] || problems+=" missing README.md;"
  for s in "## Task" "## Hints" "### Hint 1" "### Hint 2"; do
    grep -q "^$s" "${d}README.md" 2>/dev/null || problems+=" README lacks '$s';"
  done
  ls "$d"grade_*.cpp >/dev/null 2>&1 || problems+=" no grader (grade_*.cpp);"
  grep -rq "TODO" "$d" --include='*.cu' --include='*.cuh' --include='*.cpp' --include='*.hpp' \
    || problems+=" no TODO marker in the stub;"
  [ -d "$sol" ] || problems+=" no $sol;"
  for f in "$d"*.cu "$d"*.cuh; do
    [ -e "$f" ] || continue
    name=$(basename "$f")
    [ -f "$sol/$name" ] || problems+=" $sol/$name missing;"
    grep -q "TODO" "$sol/$name" 2>/dev/null && problems+=" $sol/$name still has a TODO;"
  done
  n_mut=$(ls "$sol"/mutants/*.mutant 2>/dev/null | wc -l)
  [ "$n_mut" -ge 4 ] || problems+=" only $n_mut mutants (at least 4);"
  [ -z "$problems" ] && ok "$slug ($n_mut mutants)" || bad "$slug:$problems"
done

echo "Build (mutants must apply to their solutions):"
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  mkdir -p "$BUILD"
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >"$BUILD/check-configure.log" 2>&1
fi
if cmake --build "$BUILD" -j "${STEPS_JOBS:-$(nproc)}" >/dev/null 2>&1; then ok "configured and built"; else bad "build failed"; fi

echo "Graders on a GPU:"
if probe=$("$BUILD/bin/steps_gpu_probe" 2>&1); then
  for d in exercises/[0-9][0-9]_*/; do
    slug=$(basename "$d")
    is_wip "$slug" && continue
    out=$("$BUILD/graders/grade_$slug" 2>&1); rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ $rc -lt 128 ] && grep -q FAILED <<<"$out"; then
      ok "$slug: the unsolved stub fails its grader; the learner sees:"
      grep -m1 -A8 -E "FAILED:|explicitly with message" <<<"$out" | sed 's/^/          /'
    else
      bad "$slug: the stub did not fail its grader cleanly (exit $rc)"
    fi
    if "$BUILD/graders/solution_$slug" >/dev/null 2>&1; then ok "$slug: the solution passes"
    else bad "$slug: the solution FAILS its grader"; fi
  done
else
  echo "  skip  no GPU ($probe): stubs and solutions are not run"
fi

echo
if [ $errors -eq 0 ]; then echo "check: all consistent"; exit 0; fi
echo "check: $errors problem(s)"; exit 1
