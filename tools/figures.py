#!/usr/bin/env python3
"""Pictures that need no results (which thread touches which data), for the lessons.

  /usr/bin/python3 tools/figures.py ROOT     writes docs/figures/*.png

Calls the diagrams(out_dir, kit) hook of every chapter of course.tsv that has
one in chapters/NN_topic/figures.py (tools/hooks.py). The chapters draw them
from the index arithmetic of their kernels, not from measurements. Needs
matplotlib.
"""
import os
import sys

import charts
import course
import hooks


def main(argv):
    if len(argv) != 1:
        print(__doc__.strip())
        return 2
    root = argv[0]
    plt = charts.pyplot()
    if plt is None:
        print("figures: matplotlib not found (Debian/Ubuntu: apt-get install python3-matplotlib; run /usr/bin/python3)")
        return 2
    out_dir = os.path.join(root, "docs", "figures")
    os.makedirs(out_dir, exist_ok=True)
    kit = hooks.Kit(plt)
    for c in course.chapters(root):
        for path in hooks.call(hooks.load(root, c.folder), "diagrams", f"chapters/{c.folder}/figures.py",
                               out_dir, kit) or []:
            print("wrote", os.path.relpath(path, root))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
