"""Run files of the chapter programs (docs/results.md describes their JSON): schema check, merge, the goal table.

Everything here reads what a run states (its metric, peak, roles, goals and
each row's ratios and % of peak, decided by the C++ summary); nothing is
recomputed or guessed. Standard library only.
"""
import json
import os
import re


# The versions of the run JSON this module reads (docs/results.md): the
# chapter programs write SCHEMA (steps::kResultsSchema); older committed files
# keep theirs. Any other version is refused, not read with gaps.
SCHEMA = 4
READABLE = (2, 3, 4)


class SchemaError(Exception):
    pass


def check_run(r, where):
    """Refuses a run whose schema this module does not know, or that lacks a field its schema has."""
    v = r.get("schema")
    if v not in READABLE:
        raise SchemaError(f"{where}: schema {v!r} is not one this tool reads ({', '.join(map(str, READABLE))})")
    need = ["chapter", "binary", "title", "date", "gpu", "gpu_count", "metric", "rows", "goals", "exit_code"]
    if v >= 3:
        need += ["notes", "options"]
    if v >= 4:
        need += ["machine"]
    missing = [k for k in need if k not in r]
    if missing:
        raise SchemaError(f"{where}: schema {v} run lacks {', '.join(missing)}")
    return r


def load(path):
    """A run file or a machine's merged file, checked against its schema."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if "chapters" in data:  # docs/results/MACHINE.json: {gpu, gpu_count, chapters: {key: run}}
        for k, r in data["chapters"].items():
            check_run(r, f"{path} [{k}]")
    elif "rows" in data:  # one run of one chapter program
        check_run(data, path)
    return data


def save(path, data):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
        f.write("\n")


def key(r):
    """A run's key in its machine's file: the chapter number, or "NN@LABEL" for a labelled shape run."""
    return r["chapter"] + ("@" + r["label"] if r.get("label") else "")


def machine(r):
    """The results file a run belongs to ("H200", "2xH200"), as the program named it (steps::machine_name)."""
    return r["machine"]


def merge(out_dir, inputs):
    by_machine = {}
    for path in inputs:
        r = load(path)
        by_machine.setdefault(machine(r), []).append(r)
    if not by_machine:
        print("results: no result files to merge (did every chapter skip?)")
        return 1
    for name, runs in by_machine.items():
        out = os.path.join(out_dir, name + ".json")
        merged = load(out) if os.path.exists(out) else {"gpu": None, "chapters": {}}
        for r in runs:
            merged["gpu"] = r["gpu"]
            merged["gpu_count"] = r.get("gpu_count", 1)
            merged["chapters"][key(r)] = r
        merged["chapters"] = dict(sorted(merged["chapters"].items()))
        os.makedirs(out_dir, exist_ok=True)
        save(out, merged)
        print(f"results: wrote {out} ({len(merged['chapters'])} chapters)")
    return 0


def goal_list(r):
    """The goals of a run, as its summary decided them."""
    return r.get("goals") or []


def fmt(x, digits=3):
    return "-" if x is None else f"{x:.{digits}f}"


def peak_of(r):
    """The chapter's peak as the run states it ({label, value, unit, how}), or None."""
    p = r.get("peak")
    return p if p and p.get("value") else None


def bound_ms(r, row):
    """The row's lower-bound time at the chapter's peak, in ms: its median scaled by the % of peak the run
    states (for a rate, work / peak; for a time, the peak time). None without a peak or a timing."""
    pct, ms = row.get("pct_of_peak"), row.get("median_ms")
    if not peak_of(r) or not pct or ms is None:
        return None
    return ms * pct / 100


def in_course_order(chapters):
    """The runs of a machine file ({key: run}) as (key, run), in course.tsv's chapter order (the numbers
    name chapters, course.tsv orders them: 11 may come before 10), keys in order within a chapter."""
    import course
    order = {c.number: i for i, c in enumerate(course.chapters(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))}
    return sorted(chapters.items(), key=lambda kv: (order.get(kv[1]["chapter"], len(order)), kv[0]))


def goals(path):
    """Prints the goal table of one machine's results; 1 when a goal is not met."""
    data = load(path)
    count = data.get("gpu_count", 1)
    gpus = (f"{count} x " if count > 1 else "") + data["gpu"]["name"]
    print(f"\nGoal table, {gpus} (ratios measured in the same run):")
    rows = [("chapter", "row", "ratio", "of", "goal", "met")]
    all_met = True
    for _, r in in_course_order(data["chapters"]):
        title = f"{r['chapter']} {r['title']}" + (f", {r['label']}" if r.get("label") else "")
        for g in goal_list(r):
            ratio = fmt(g.get("ratio")) + "x"
            shaped = bool(g.get("shape"))  # a goal set at one bench shape, judged in that shape's run only
            if shaped and g.get("at_shape") is False:
                continue  # another shape's goal: its own run's line judges it
            if r.get("label") and not shaped:  # an extra shape: its ratio, for information; the goal is the default problem's
                rows.append((title, g.get("numerator_row") or "-", ratio, g.get("denominator") or "-",
                             "(other shape)", "-"))
                continue
            if g.get("applicable") is False:  # needs more GPUs than the run had, or the run was of another problem
                few = count < g.get("min_gpus", 1)
                rows.append((title, g.get("numerator_row") or "-", "-", g.get("denominator") or "-",
                             g.get("text", ""), f"n/a ({g.get('min_gpus')} GPUs)" if few else "n/a (another problem)"))
                continue
            met = bool(g.get("met"))
            all_met &= met
            rows.append((title, g.get("numerator_row") or "-", ratio, g.get("denominator") or "-",
                         g.get("text", ""), "yes" if met else "NO"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for k, row in enumerate(rows):
        print("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if k == 0:
            print("  " + "-" * (sum(widths) + 2 * (len(widths) - 1)))
    return 0 if all_met else 1
