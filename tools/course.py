"""The course manifest and what CMake configured: the one reader every Python tool uses.

  course.tsv (repository root): one line per chapter, tab-separated
      number  folder  status  title          ('#' lines are comments)
  <build>/course/chapters.tsv, exercises.tsv: written by CMake; the first line
      names the tab-separated columns, and readers look columns up by name.

Standard library only.
"""
import collections
import os
import re

Chapter = collections.namedtuple("Chapter", "number folder status title")
STATUSES = ("ready", "wip", "planned")


class CourseError(Exception):
    """A manifest that cannot be read: the message names the file and line."""


def chapters(root):
    """The chapters of course.tsv, in course order."""
    path = os.path.join(root, "course.tsv")
    out = []
    with open(path, encoding="utf-8") as f:
        for k, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("#") or not line.strip():
                continue
            fields = line.split("\t")
            if (len(fields) != 4 or not re.fullmatch(r"[0-9][0-9]", fields[0])
                    or not re.fullmatch(r"[0-9][0-9]_[A-Za-z0-9_]+", fields[1]) or fields[2] not in STATUSES):
                raise CourseError(f"course.tsv:{k}: expected 'number<TAB>folder<TAB>status<TAB>title', got '{line}'")
            out.append(Chapter(*fields))
    return out


def folders(root):
    """{number: folder} of every chapter in course.tsv."""
    return {c.number: c.folder for c in chapters(root)}


def build_table(path):
    """The rows of a build manifest (<build>/course/*.tsv) as dicts keyed by its header's column names."""
    with open(path, encoding="utf-8") as f:
        lines = [x.rstrip("\n") for x in f if x.strip()]
    if not lines:
        return []
    header = lines[0].split("\t")
    if "number" not in header:
        raise CourseError(f"{path}:1: no header line naming the columns (reconfigure: cmake -S . -B <build>)")
    rows = []
    for k, line in enumerate(lines[1:], 2):
        fields = line.split("\t")
        if len(fields) < len(header):
            raise CourseError(f"{path}:{k}: {len(fields)} columns, the header names {len(header)}")
        rows.append(dict(zip(header, fields)))
    return rows
