#!/usr/bin/env python3
"""Results of the chapter programs: merge, goal table, lesson tables, charts.

  results.py merge --dir docs/results build/results/*.json
      Merges per-chapter JSON files (written by `chNN_* --json FILE`) into one
      file per machine, docs/results/<machine>.json, keeping chapters that
      were not re-run. The machine is the GPU's short name, with the GPU
      count in front when a run used several ("2xH200"), so results of a
      2-GPU machine are stored apart from the 1-GPU ones.
  results.py machines FILE...
      Prints the machine names of the given run files, one per line.
  results.py goals docs/results/H200.json
      Prints the goal table: every goal of every chapter, a ratio of two rows
      measured in the same run, against its threshold. Exits 1 if one is not met.
  results.py lesson FILE [--root ROOT] [--machine NAME]
      Prints one lesson rendered for another GPU's results file (./tutorial
      docs, for a learner who ran ./tutorial bench): its numbers, GPU names
      and results table read docs/results/NAME.json instead of the reference.
  results.py render ROOT [--check]
      Regenerates, from docs/results/*.json, the measured-results tables in the
      lessons, the marked numbers of lessons and code banners and, when
      matplotlib is installed, the charts in docs/figures/ (a chapter's own
      charts through its figures.py hook). --check writes nothing and exits 1
      when something differs.

The JSON says what each number is (docs/results.md): the metric and its unit,
each row's role, the chapter's peak, the goals with their rows. Nothing here
guesses. Jobs: runs.py (schema check, merge, goals), tables.py (lesson tables),
marks.py (marked numbers), charts.py and hooks.py (figures), render.py.
Standard library only, except matplotlib for charts.
"""
import argparse
import sys

import runs
from marks import MarkError, Results, evaluate  # noqa: F401  (the tests reach them through this module)
from render import render, render_for
from tables import markdown_table  # noqa: F401


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("merge")
    m.add_argument("--dir", required=True)
    m.add_argument("inputs", nargs="+")
    g = sub.add_parser("goals")
    g.add_argument("file")
    mc = sub.add_parser("machines")
    mc.add_argument("inputs", nargs="+")
    lf = sub.add_parser("lesson")
    lf.add_argument("file")
    lf.add_argument("--root", default=".")
    lf.add_argument("--machine", default="")
    r = sub.add_parser("render")
    r.add_argument("root")
    r.add_argument("--check", action="store_true", help="only check that the lessons are up to date")
    a = p.parse_args()
    if a.cmd == "merge":
        return runs.merge(a.dir, a.inputs)
    if a.cmd == "machines":
        print("\n".join(sorted({runs.machine(runs.load(x)) for x in a.inputs})))
        return 0
    if a.cmd == "lesson":
        sys.stdout.write(render_for(a.root, a.file, a.machine or None))
        return 0
    if a.cmd == "goals":
        return runs.goals(a.file)
    return render(a.root, a.check)


if __name__ == "__main__":
    sys.exit(main())
