#!/usr/bin/env bash
# Course consistency check (./tutorial check), like rustlings' dev check.
#
# Reads the course manifest (course.tsv) and what the build configured
# (<build>/course/*.tsv, columns looked up by the names of their header
# line). Without a GPU: every ready chapter has its lesson headings, program
# and build file, no assert(), no unfilled MEASURE(...) placeholder, lesson
# results blocks and marked numbers (in lessons and kernel banners:
# tools/marks.py) equal to what docs/results gives, results and a chart;
# no measurement-looking number without a source (tools/lint_numbers.py);
# nothing links outside the repository and the README course map agrees with
# course.tsv (tools/repo_checks.py); every row name used outside a chapter's
# registry is in it, and tools/ names no chapter or row (tools/names.py);
# every profile test's expectations, as built now, hold on the values each
# GPU's docs/results/<machine>.profile.json recorded (tools/profile_check.py);
# every exercise (a folder with a grade_*.cpp) has TODOs, a README with task
# and escalating hints, a grader, a solution mirroring each source file (with
# no TODO left) and at least four mutants, which must apply to the solution
# (configuring fails otherwise). CPU-graded exercises: the stub fails its
# grader, the solution passes. With a GPU, also the GPU-graded ones.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-${STEPS_BUILD_DIR:-$ROOT/build}}
cd "$ROOT" || exit 1
errors=0
ok() { printf '  ok    %s\n' "$*"; }
bad() { printf '  FAIL  %s\n' "$*"; errors=$((errors + 1)); }

headings=("What you will learn" "The idea" "The code, version by version" "Measured results"
          "Profile it" "Pitfalls" "Exercises" "Further reading")

# number folder status title, for every chapter of the manifest
mapfile -t course < <(grep -v '^#' course.tsv | grep -v '^$')

echo "Chapters (course.tsv):"
declare -A status_of=()
for line in "${course[@]}"; do
  IFS=$'\t' read -r num folder status title <<<"$line"
  status_of[$folder]=$status
  d="chapters/$folder/"
  case "$status" in
    planned) echo "  skip  $num $title (planned)"; [ -d "$d" ] && bad "$folder: planned, but chapters/$folder exists"; continue ;;
    wip) echo "  skip  $num $title (work in progress)"; continue ;;
  esac
  problems=""
  for f in README.md main.cu CMakeLists.txt; do [ -f "$d$f" ] || problems+=" missing $f;"; done
  for h in "${headings[@]}"; do
    grep -q "^## $h" "${d}README.md" 2>/dev/null || problems+=" lesson lacks heading '## $h';"
  done
  grep -qE "(^|[^_[:alnum:]])assert\(" "$d"*.cu* 2>/dev/null && problems+=" uses assert() (vanishes in Release);"
  grep -qE "(MEASURE|PROFILE)\(" "${d}README.md" 2>/dev/null && problems+=" lesson has unfilled MEASURE(...)/PROFILE(...) placeholders;"
  grep -q "chapters/$folder/README.md" README.md || problems+=" not linked from the README course map;"
  [ -z "$problems" ] && ok "$num $folder" || bad "$folder:$problems"
done
if python3 tools/results.py render --check "$ROOT" >/dev/null 2>&1; then
  ok "lesson results blocks and marked numbers match docs/results"
else
  bad "lesson results blocks or marked numbers differ from docs/results (fix: python3 tools/results.py render .):"
  python3 tools/results.py render --check "$ROOT" 2>&1 | sed 's/^/        /'
fi

if python3 tools/snippets.py render --check "$ROOT" >/dev/null 2>&1; then
  ok "lesson code excerpts match their sources"
else
  bad "lesson code excerpts differ from their sources:"; python3 tools/snippets.py render --check "$ROOT" | sed 's/^/        /'
fi

echo "Numbers in lessons and code banners (tools/lint_numbers.py):"
python3 tools/lint_numbers.py "$ROOT"; rc=$?
[ $rc -eq 0 ] || bad "measurement-looking numbers without a marker or a source (listed above)"

echo "Repository (tools/repo_checks.py):"
python3 tools/repo_checks.py "$ROOT"; rc=$?
[ $rc -eq 0 ] || bad "repository checks (listed above)"

is_ready() { [ "${status_of[$1]:-}" = ready ]; }

echo "Exercises:"
for grader in exercises/[0-9][0-9]_*/grade_*.cpp exercises/[0-9][0-9]_*/*/grade_*.cpp; do
  [ -e "$grader" ] || continue
  d=$(dirname "$grader")/
  rel=${d#exercises/}
  folder=${rel%%/*}
  is_ready "$folder" || { echo "  skip  ${rel%/} (chapter not ready)"; continue; }
  sol="solutions/$rel"
  problems=""
  [ -f "${d}README.md" ] || problems+=" missing README.md;"
  for s in "## Task" "## Hints" "### Hint 1" "### Hint 2"; do
    grep -q "^$s" "${d}README.md" 2>/dev/null || problems+=" README lacks '$s';"
  done
  grep -rq "TODO" "$d" --include='*.cu' --include='*.cuh' --include='*.cpp' --include='*.hpp' \
    || problems+=" no TODO marker in the stub;"
  [ -d "$sol" ] || problems+=" no $sol;"
  for f in "$d"*.cu "$d"*.cuh "$d"*.cpp; do
    [ -e "$f" ] || continue
    name=$(basename "$f")
    case "$name" in grade_*|given.*|given_*|test_*) continue ;; esac  # given.*, given_*: shared, not the learner's to edit; test_*: host tests of the grader's helpers
    [ -f "$sol$name" ] || problems+=" $sol$name missing;"
    grep -q "TODO" "$sol$name" 2>/dev/null && problems+=" $sol$name still has a TODO;"
  done
  n_mut=$(ls "$sol"mutants/*.mutant 2>/dev/null | wc -l)
  [ "$n_mut" -ge 4 ] || problems+=" only $n_mut mutants (at least 4);"
  [ -z "$problems" ] && ok "${rel%/} ($n_mut mutants)" || bad "${rel%/}:$problems"
done

echo "Build (mutants must apply to their solutions):"
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  mkdir -p "$BUILD"
  cmake --preset default -S "$ROOT" -B "$BUILD" >"$BUILD/check-configure.log" 2>&1
fi
if cmake --build "$BUILD" -j "${STEPS_JOBS:-$(nproc)}" >"$BUILD/check-build.log" 2>&1; then ok "configured and built"
else bad "build failed (log: $BUILD/check-build.log)"; fi

echo "Row names (tools/names.py: each chapter program's --list is its registry):"
python3 tools/names.py "$ROOT" "$BUILD"; rc=$?
[ $rc -eq 0 ] || bad "row names (listed above)"

echo "Profile expectations (tools/profile_check.py verify: each test's, on every GPU's recorded values):"
python3 tools/profile_check.py verify --build "$BUILD" --dir docs/results; rc=$?
[ $rc -eq 0 ] || bad "profile expectations that a measured GPU's values contradict (listed above; re-run the test there, or reword the expectation and the lesson)"

echo "Graders (stubs must fail with a message, solutions must pass):"
have_gpu=0
probe_out=$("$BUILD/bin/steps_gpu_probe" 2>&1) && have_gpu=1
[ $have_gpu -eq 1 ] || echo "  note  no GPU ($probe_out): only the CPU-graded exercises are run"
# exercises.tsv: the first line names the columns; they are looked up by name.
manifest="$BUILD/course/exercises.tsv"
declare -A col=()
header=()
[ -f "$manifest" ] && IFS=$'\t' read -r -a header < "$manifest"
for i in "${!header[@]}"; do col[${header[$i]}]=$i; done
for c in name grader solution kind graders; do
  [ -n "${col[$c]:-}" ] || { bad "$manifest: its header line names no column '$c' (reconfigure: cmake -S . -B $BUILD)"; break; }
done
[ -n "${col[name]:-}" ] && [ -n "${col[graders]:-}" ] && [ -n "${col[kind]:-}" ] && [ -n "${col[grader]:-}" ] \
  && [ -n "${col[solution]:-}" ] || manifest=/dev/null
while IFS=$'\t' read -r -a f; do
  [ ${#f[@]} -gt 0 ] || continue
  name=${f[${col[name]}]} grader=${f[${col[grader]}]} solution=${f[${col[solution]}]}
  kind=${f[${col[kind]}]} graders=${f[${col[graders]}]}
  if [ "$graders" != yes ]; then bad "$name: graders not built (Catch2 missing?)"; continue; fi
  if [ "$kind" = gpu ] && [ $have_gpu -eq 0 ]; then echo "  skip  $name (needs a GPU)"; continue; fi
  cmake --build "$BUILD" --target "$grader" >/dev/null 2>&1 || { bad "$name: the stub does not compile"; continue; }
  out=$("$BUILD/graders/$grader" 2>&1); rc=$?
  if [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ $rc -lt 128 ] && grep -q FAILED <<<"$out"; then
    ok "$name: the unsolved stub fails its grader; the learner sees:"
    grep -m1 -A8 -E "FAILED:|explicitly with message" <<<"$out" | sed 's/^/          /'
  else
    bad "$name: the stub did not fail its grader cleanly (exit $rc)"
  fi
  if out=$("$BUILD/graders/$solution" 2>&1); then
    ok "$name: the solution passes ($(grep -oE '[0-9]+ assertions? in [0-9]+ test cases?' <<<"$out" | head -n1))"
  else bad "$name: the solution FAILS its grader"; fi
done < <(tail -n +2 "$manifest")

echo
if [ $errors -eq 0 ]; then echo "check: all consistent"; exit 0; fi
echo "check: $errors problem(s)"; exit 1
