#!/usr/bin/env python3
"""Results of the chapter programs: merge, goal table, lesson tables, charts.

  results.py merge --dir docs/results build/results/*.json
      Merges per-chapter JSON files (written by `chNN_* --json FILE`) into one
      file per machine, docs/results/<machine>.json, keeping chapters that
      were not re-run. The machine is the GPU's short name, with the GPU
      count in front when a run used several ("2xH200"), so results of a
      2-GPU machine are stored apart from the 1-GPU ones.
  results.py goals docs/results/H200.json
      Prints the goal table: every goal of every chapter, a ratio of two rows
      measured in the same run, against its threshold. Exits 1 if one is not met.
  results.py label FILE TEXT
      Marks one program run as an extra problem shape of its chapter (from the
      chapter's bench_shapes file): merged under "NN@TEXT", shown in the goal
      table and in the lesson's shapes table, not in its main table.
  results.py render ROOT
      Regenerates, from docs/results/*.json, the measured-results tables in the
      lessons (between <!-- results:NN:<machine>:begin --> and
      <!-- results:NN:<machine>:end -->) and, when matplotlib is installed, the
      charts in docs/figures/.

The JSON says what each number is (schema 2): the metric and its unit, each
row's role (baseline, version, reference, ...), the chapter's peak with its
label, the goals with their numerator and denominator rows. Nothing here
guesses. Chapters are found through course.tsv, the course manifest.
Standard library only, except matplotlib for charts.
"""
import argparse
import glob
import json
import os
import re
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def course(root):
    """{number: folder} from course.tsv."""
    out = {}
    with open(os.path.join(root, "course.tsv"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            number, folder, _status, _title = line.rstrip("\n").split("\t")
            out[number] = folder
    return out


def key(r):
    return r["chapter"] + ("@" + r["label"] if r.get("label") else "")


def machine(r):
    """The results file a run belongs to: "H200", or "2xH200" for a 2-GPU run."""
    name = re.sub(r"^NVIDIA ", "", r["gpu"]["name"])
    slug = re.sub(r"[^A-Za-z0-9_-]", "_", name)
    count = r.get("gpu_count", 1)
    return (f"{count}x" if count > 1 else "") + slug


def label(path, text):
    r = load(path)
    r["label"] = text
    with open(path, "w", encoding="utf-8") as f:
        json.dump(r, f, indent=2)
        f.write("\n")


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
        with open(out, "w", encoding="utf-8") as f:
            json.dump(merged, f, indent=2)
            f.write("\n")
        print(f"results: wrote {out} ({len(merged['chapters'])} chapters)")
    return 0


def goal_list(r):
    """The goals of a run (schema 2), or the one goal of a schema-1 run."""
    if "goals" in r:
        return r["goals"]
    if not r.get("goal"):
        return []
    return [{"numerator": "best", "numerator_row": r.get("best"), "denominator": r.get("baseline"),
             "threshold": r["goal"], "text": r.get("goal_text", ""), "ratio": r.get("best_ratio"),
             "met": bool(r.get("goal_met"))}]


def fmt(x, digits=3):
    return "-" if x is None else f"{x:.{digits}f}"


def goals(path):
    data = load(path)
    count = data.get("gpu_count", 1)
    gpus = (f"{count} x " if count > 1 else "") + data["gpu"]["name"]
    print(f"\nGoal table, {gpus} (ratios measured in the same run):")
    rows = [("chapter", "row", "ratio", "of", "goal", "met")]
    all_met = True
    for num, r in data["chapters"].items():
        for g in goal_list(r):
            ratio = fmt(g.get("ratio")) + "x"
            if r.get("label"):  # an extra shape: its ratio, for information; the goal is the default problem's
                rows.append((f"{r['chapter']} {r['title']}, {r['label']}", g.get("numerator_row") or "-", ratio,
                             g.get("denominator") or "-", "(other shape)", "-"))
                continue
            if g.get("applicable") is False:  # needs more GPUs than this machine's run had
                rows.append((f"{num} {r['title']}", g.get("numerator_row") or "-", "-", g.get("denominator") or "-",
                             g.get("text", ""), f"n/a ({g.get('min_gpus')} GPUs)"))
                continue
            met = bool(g.get("met"))
            all_met &= met
            rows.append((f"{num} {r['title']}", g.get("numerator_row") or "-", ratio, g.get("denominator") or "-",
                         g.get("text", ""), "yes" if met else "NO"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for k, row in enumerate(rows):
        print("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if k == 0:
            print("  " + "-" * (sum(widths) + 2 * (len(widths) - 1)))
    return 0 if all_met else 1


def peak_of(r):
    """The chapter's peak as the run states it ({label, value, how}), or None."""
    p = r.get("peak")
    return p if p and p.get("value") else None


def markdown_table(r):
    unit = r["metric"]
    base = r.get("baseline") or "baseline"
    peak = peak_of(r)
    digits = 0 if unit == "GB/s" else 1 if unit == "TFLOP/s" else 2
    head = f"| version | median ms | {unit} | % of {base} |" + (f" {peak['label']} bound ms | % of bound |" if peak else "")
    head += " verified |\n|---|---:|---:|---:|" + ("---:|---:|" if peak else "") + "---|\n"
    lines = []
    for row in r["rows"]:
        if row["role"] in ("mistake", "yours"):
            continue
        ratio = row.get("ratio_to_baseline")
        name = row["name"] + (" (reference)" if row["role"] == "reference" else "")
        if row.get("same_as"):
            name += f" (= {row['same_as']})"
        line = (f"| {name} | {fmt(row.get('median_ms'), 4)} | {fmt(row.get('value'), digits)}"
                f" | {fmt(None if ratio is None else 100 * ratio, 1)} |")
        if peak:
            bound = work_of(r, row)
            ms = row.get("median_ms")
            line += f" {fmt(bound, 4)} | {fmt(None if not bound or not ms else 100 * bound / ms, 1)} |"
        lines.append(line + f" {row['verified']} |")
    if peak:
        lines.append(f"| {peak['label']} peak | - | {fmt(peak['value'], digits)} | - | - | 100.0 | - |")
    met = [g for g in goal_list(r) if g.get("applicable") is not False]
    goal_text = "; ".join(f"{g.get('numerator_row')} {fmt(g.get('ratio'))}x {g.get('denominator')} "
                          f"(goal {g.get('text')}: {'met' if g.get('met') else 'not met'})" for g in met)
    problem = "; ".join(r.get("problems") or [r.get("problem") or ""])
    note = (f"\n*{r['gpu']['name']}, `{r['binary']}` defaults ({problem}), {r['date'][:10]}; "
            f"median of {r['iters']} runs." + (f" {goal_text}." if goal_text else "") + "*\n")
    if peak:
        note += f"\n*{peak['label']} peak: {peak['how']}.*\n"
        note += budget_line(r, peak, base)
    return head + "\n".join(lines) + "\n" + note


def budget_line(r, peak, base):
    """The lower-bound time of the problem at the hardware peak, and how close the best version and the
    baseline come to it: the speed of light beside the vendor library."""
    rows = {x["name"]: x for x in r["rows"]}
    best, b = rows.get(r.get("best") or ""), rows.get(r.get("baseline") or "")
    if not best or not work_of(r, best) or not best.get("median_ms"):
        return ""
    unit = peak.get("unit", r["metric"])
    work = f"{best['bytes'] / 1e9:.2f} GB moved" if unit == "GB/s" else f"{best['flops'] / 1e12:.2f} TFLOP"
    bound = work_of(r, best)
    text = (f"\n*Budget: `{best['name']}`'s problem ({work}) at the {peak['label']} peak "
            f"({fmt(peak['value'], 0 if unit == 'GB/s' else 1)} {unit}) takes at least {fmt(bound, 4)} ms; "
            f"`{best['name']}` takes {fmt(best['median_ms'], 4)} ms, {fmt(100 * bound / best['median_ms'], 1)}% of that bound")
    if b and b is not best and work_of(r, b) and b.get("median_ms") and best.get("ratio_to_baseline") is not None:
        text += (f" and {fmt(100 * best['ratio_to_baseline'], 1)}% of {base}, which itself reaches "
                 f"{fmt(100 * work_of(r, b) / b['median_ms'], 1)}% of its own bound")
    return text + ". Bound ms: each row's work at the peak; % of bound: that bound over the row's median.*\n"


def shapes_table(runs):
    """One row per problem shape: the baseline, the best version and its ratio."""
    unit = runs[0]["metric"]
    base = runs[0].get("baseline") or "baseline"
    out = f"| problem | {base} {unit} | best version | its {unit} | ratio |\n|---|---:|---|---:|---:|\n"
    for r in runs:
        rows = {x["name"]: x for x in r["rows"]}
        b = rows.get(r.get("baseline") or "", {})
        best = rows.get(r.get("best") or "", {})
        shape = re.search(r"M x N x K = ([0-9]+ x [0-9]+ x [0-9]+)", r["problem"])
        name = r.get("label") or (shape.group(1) if shape else "default") + " (default)"
        out += (f"| {name} | {fmt(b.get('value'), 1)} | "
                f"{r.get('best') or '-'} | {fmt(best.get('value'), 1)} | {fmt(best.get('ratio_to_baseline'), 2)}x |\n")
    r = runs[0]
    return out + f"\n*{r['gpu']['name']}, `{r['binary']}`, {r['date'][:10]}; all rows from one `./tutorial bench`.*\n"


def save_chart(fig, ax, out_png):
    """The charts' common ending: no top or right frame, tight, saved, closed."""
    import matplotlib.pyplot as plt

    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    fig.savefig(out_png)
    plt.close(fig)


def chart(r, out_png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [x for x in r["rows"] if x["role"] in ("baseline", "version", "reference") and x.get("value") is not None]
    names = [x["name"] for x in rows]
    values = [x["value"] for x in rows]
    colors = ["#888888" if x["role"] == "baseline" else "#bbbbbb" if x["role"] == "reference" else "#2a7ab0"
              for x in rows]
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(rows) + 1.4), dpi=110)
    ax.barh(names[::-1], values[::-1], color=colors[::-1])
    for i, v in enumerate(values[::-1]):
        ax.text(v, i, f" {v:.0f}", va="center", fontsize=9)
    peak = peak_of(r)
    if peak and r["metric"] != "us":
        ax.axvline(peak["value"], color="#c0392b", linestyle="--", linewidth=1)
        ax.text(peak["value"], len(rows) - 0.5, f" {peak['label']} peak", color="#c0392b", fontsize=8, va="bottom",
                ha="right")
        ax.set_xlim(0, max([peak["value"]] + values) * 1.12)
    else:
        ax.set_xlim(0, max(values) * 1.15)
    ax.set_xlabel(r["metric"])
    ax.set_title(f"Chapter {r['chapter']}: {r['title']} on {r['gpu']['name']}", fontsize=10)
    save_chart(fig, ax, out_png)


def littles_law_chart(r, out_png):
    """Chapter 01's Little's-law run (--littles-law): GB/s against the bytes in
    flight per SM, with the line latency x bandwidth predicts from the
    pointer chase measured in the same run, and the DRAM peak."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    chase = [x for x in r["rows"] if x["name"] == "pointer_chase" and x.get("median_ms")]
    points = [x for x in r["rows"] if "KiB in flight/SM" in (x.get("extras") or {}) and x.get("value")]
    if not chase or not points:
        return False
    loads = (chase[0].get("extras") or {}).get("chase loads/run")
    if not loads:
        return False
    latency_ns = chase[0]["median_ms"] * 1e6 / loads
    sms = r["gpu"]["sms"]
    peak = peak_of(r)
    fig, ax = plt.subplots(figsize=(7.5, 4.6), dpi=110)
    for width, marker, color in ((4, "o", "#2a7ab0"), (16, "s", "#e07b39")):
        for few in (False, True):
            sel = [x for x in points if x["extras"].get("bytes/load") == width
                   and (x["extras"].get("blocks/SM", 8) < 8) == few]
            if sel:
                ax.scatter([x["extras"]["KiB in flight/SM"] for x in sel], [x["value"] for x in sel],
                           marker=marker, facecolors="none" if few else color, edgecolors=color, s=42,
                           label=f"{width}-byte loads" + (", fewer than 8 blocks/SM" if few else ""))
    xs = sorted({x["extras"]["KiB in flight/SM"] for x in points})
    lo, hi = min(xs) / 1.5, max(xs) * 1.5
    line = [lo * (hi / lo) ** (i / 50) for i in range(51)]
    cap = peak["value"] if peak else None
    ax.plot(line, [min(k * 1024 * sms / latency_ns, cap or 1e18) for k in line], color="#555", linestyle="--",
            linewidth=1, label=f"Little's law: bytes in flight / {latency_ns:.0f} ns latency")
    if cap:
        ax.axhline(cap, color="#c0392b", linestyle=":", linewidth=1, label=f"{peak['label']} peak")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bytes in flight per SM (KiB)")
    ax.set_ylabel("GB/s read")
    ax.set_ylim(0, (cap or max(x["value"] for x in points)) * 1.12)
    ax.set_title(f"Bandwidth needs bytes in flight: {r['gpu']['name']}, DRAM latency {latency_ns:.0f} ns", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    save_chart(fig, ax, out_png)
    return True


def stages_chart(runs, out_png):
    """Chapter 10's pipeline-depth sweep (bench_shapes "pipeline depth N
    stages"): v4's TFLOP/s against the stages of its ring, with cuBLASLt's
    block-scaled baseline measured in each of the same runs."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = []
    for r in runs:
        m = re.match(r"pipeline depth ([0-9]+) stages", r.get("label", ""))
        rows = {x["name"]: x for x in r["rows"]}
        if m and rows.get("warp_specialized", {}).get("value") and rows.get("cublaslt", {}).get("value"):
            points.append((int(m.group(1)), rows["warp_specialized"]["value"], rows["cublaslt"]["value"]))
    if len(points) < 2:
        return False
    points.sort()
    fig, ax = plt.subplots(figsize=(6.5, 4.0), dpi=110)
    xs = [p[0] for p in points]
    ax.plot(xs, [p[1] for p in points], marker="o", color="#2a7ab0", label="v4 warp_specialized")
    ax.plot(xs, [p[2] for p in points], marker="s", color="#888888", linestyle="--",
            label="cuBLASLt block-scaled (same run)")
    for x, v, _ in points:
        ax.annotate(f"{v:.0f}", (x, v), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
    ax.set_xticks(xs)
    ax.set_xlabel("stages in the ring (32.5 KB each: A, B and A's scales)")
    ax.set_ylabel("TFLOP/s")
    ax.set_ylim(0, max(max(p[1], p[2]) for p in points) * 1.15)
    r = runs[0]
    shape = re.search(r"M x N x K = ([0-9]+ x [0-9]+ x [0-9]+)", r["problem"])
    ax.set_title(f"Pipeline depth: {shape.group(1) if shape else ''} on {r['gpu']['name']}", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    save_chart(fig, ax, out_png)
    return True


# ---------------------------------------------------------------------------
# Marked numbers: every measured number in a lesson's prose or in a kernel
# file's banner comment is generated from docs/results, so it cannot drift.
#
# Where a number goes:
#   Markdown (chapters/*/README.md and the course map in README.md): an HTML
#   comment right before its number,
#   invisible on GitHub and in Doxygen 1.9 (which drops the comment):
#       v3 reaches <!--n:01:float4:gbps-->4112 GB/s
#   (No closing comment: Doxygen also drops the blank after a comment, which
#   would glue "4112GB/s". Not right after a '*' or '**' that opens emphasis:
#   Doxygen then prints the asterisks; write **v3 at <!--n:...-->4112** instead.
#   Not at the start of a line: CommonMark (GitHub) then reads the whole line
#   as a raw HTML block. The check refuses both.)
#   C++ comments (chapters/*/*.cu, *.cuh, *.hpp, *.cpp): the marker follows
#   its number on the same line, with no other digit between them:
#       // v3: 4112 GB/s {n:01:float4:gbps}, 0.99x {n:01:float4:base} memcpy
#   `render` rewrites the text (the number only; units are plain text);
#   `render --check` prints one line per number that differs and exits 1.
#
# What a marker may say (EXPR), a small expression language:
#   EXPR    := SUM ['|' FORMAT]
#   SUM     := PRODUCT (('+' | '-') PRODUCT)*
#   PRODUCT := ATOM (('*' | '/') ATOM)*
#   ATOM    := NUMBER | REF | '(' SUM ')'
#   REF     := [MACHINE '/'] RUN ':' ROW ':' FIELD      a row's value
#            | [MACHINE '/'] RUN ':' CHAPTERFIELD       the run's own
#   RUN     := NN | NN '@' LABEL     NN: chapter; LABEL: a shape run of
#              bench_shapes, named by its label or a unique prefix of it
#              ("10@6144" for "10@6144 x 6144 x 1280"); no spaces (write '_'
#              for one: "10@DeepSeek-V3_128_x_2112"), ':' or '()'
#   MACHINE := the results file, docs/results/MACHINE.json (default: H200)
#   FIELD   := value    the row's metric (GB/s, TFLOP/s, ...)
#            | gbps | tflops   bytes / time, flops / time (any chapter)
#            | ms | median     median time in ms;  us: in microseconds
#            | min | max      fastest / slowest run, ms
#            | base     ratio to the baseline row (x)
#            | pbase    % of the baseline (100 x base)
#            | peak     % of the chapter's hardware peak
#            | bound    the row's lower-bound time at the peak (work / peak), ms
#            | speedup  over the chapter's first version
#            | moved    GB/s the hardware moved (hw_bytes / time)
#            | err      relative L2 error
#            | bytes | flops | gb (bytes / 1e9) | hw_bytes
#            | x.NAME   an extra column (x.regs, x.occ_%: '_' stands for ' ',
#                     '~' for '/': x.KiB_in_flight~SM)
#            | [MACHINE '/'] 'prof:' TEST ':' NAME    a value a profile test
#              measured (docs/results/MACHINE.profile.json, written by
#              ./tutorial bench --profile): TEST is the test's name without
#              "profile." (06_reduction.atomics), NAME one of its MEASUREs
#   CHAPTERFIELD := peak          the peak's value (4814.3 GB/s)
#            | goal | goal.ROW     a goal's ratio (the first, or the one whose
#                                  numerator row is ROW)
#            | iters | gpu.FIELD   (gpu.sms, gpu.sm_clock_khz, gpu.l2_bytes ...)
#   FORMAT  := a Python format spec: .0f, .1f, ,.0f (thousands with commas),
#              .3g ...; without it, the field's own: GB/s values .0f, TFLOP/s
#              .1f, ms .2f, us .1f, base/speedup/goal .2f, pbase/peak .1f,
#              bound .4f, anything computed .2f.
# Examples: 01:float4:base|.3f  ·  (02:float4_one_per_thread:ms/02:stride_1:ms)
#   ·  03:vectorized:value/03:blocktile_2d:value|.2f  ·  10@6144:warp_specialized:base
#   ·  (1 - 02:offset:value/02:stride_1:value)*100|.0f  ·  01:peak|.0f
# ---------------------------------------------------------------------------
NUMBER_RE = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?"
MD_MARK = re.compile(r"<!--n:(?P<expr>.*?)-->(?P<text>" + NUMBER_RE + ")?")
CODE_MARK = re.compile(r"\{n:(?P<expr>[^{}]*)\}")
NUMBER = re.compile(r"(?<![\w.])" + NUMBER_RE)
CODE_EXT = (".cu", ".cuh", ".hpp", ".cpp", ".h")


class MarkError(Exception):
    pass


class Results:
    """The runs of every docs/results/*.json, to resolve markers against."""

    def __init__(self, root):
        self.machines = {}
        self.profiles = {}
        for path in sorted(glob.glob(os.path.join(root, "docs", "results", "*.json"))):
            name = os.path.splitext(os.path.basename(path))[0]
            if name.endswith(".profile"):
                self.profiles[name[: -len(".profile")]] = load(path)
            else:
                self.machines[name] = load(path)
        self.default = "H200" if "H200" in self.machines else (sorted(self.machines) or [None])[0]

    def profile(self, machine, test, name):
        """A value a profile test measured (./tutorial bench --profile)."""
        data = self.profiles.get(machine or self.default)
        if data is None:
            raise MarkError(f"no profile values docs/results/{machine or self.default}.profile.json "
                            "(./tutorial bench --profile writes it)")
        t = data["tests"].get("profile." + test)
        if t is None:
            raise MarkError(f"no profile test 'profile.{test}' in docs/results/{machine or self.default}.profile.json")
        if name not in t["values"]:
            raise MarkError(f"profile.{test} measured no '{name}' (it has: {', '.join(sorted(t['values']))})")
        return t["values"][name]["value"]

    def run(self, machine, name):
        data = self.machines.get(machine or self.default)
        if data is None:
            raise MarkError(f"no results file docs/results/{machine or self.default}.json")
        runs = data["chapters"]
        if name in runs:
            return data, runs[name]
        if "@" in name:
            num, label = name.split("@", 1)
            # '_' stands for a space in a marker ("10@DeepSeek-V3_128_x_2112")
            label = label.replace("_", " ")
            hits = [k for k in runs if k.startswith(num + "@") and k.split("@", 1)[1].startswith(label)]
            if len(hits) == 1:
                return data, runs[hits[0]]
            if len(hits) > 1:
                raise MarkError(f"'{name}' is ambiguous: {', '.join(hits)}")
        raise MarkError(f"no run '{name}' in docs/results/{machine or self.default}.json")


def work_of(r, row):
    """The row's work in the unit of the chapter's peak: (amount, per-ms divisor) or None."""
    peak = peak_of(r)
    if not peak:
        return None
    unit = peak.get("unit", r["metric"])
    if unit == "GB/s" and row.get("bytes"):
        return row["bytes"] / (peak["value"] * 1e6)  # ms
    if unit == "TFLOP/s" and row.get("flops"):
        return row["flops"] / (peak["value"] * 1e9)  # ms
    return None


def row_field(r, row, field):
    ms = row.get("median_ms")
    if field in ("ms", "median"):
        return ms, ".2f"
    if field == "us":
        return None if ms is None else ms * 1000, ".1f"
    if field in ("min", "max"):
        return row.get(field + "_ms"), ".2f"
    if field == "value":
        return row.get("value"), ".0f" if r["metric"] == "GB/s" else ".1f" if r["metric"] == "TFLOP/s" else ".2f"
    if field == "gbps":
        return (None if not ms else row["bytes"] / ms / 1e6), ".0f"
    if field == "tflops":
        return (None if not ms else row["flops"] / ms / 1e9), ".1f"
    if field == "moved":
        return (None if not ms or not row.get("hw_bytes") else row["hw_bytes"] / ms / 1e6), ".0f"
    if field == "base":
        return row.get("ratio_to_baseline"), ".2f"
    if field == "pbase":
        x = row.get("ratio_to_baseline")
        return (None if x is None else 100 * x), ".1f"
    if field == "peak":
        return row.get("pct_of_peak"), ".1f"
    if field == "bound":
        return work_of(r, row), ".4f"
    if field == "speedup":
        return row.get("speedup"), ".2f"
    if field == "err":
        return row.get("rel_l2_error"), ".3g"
    if field in ("bytes", "flops", "hw_bytes"):
        return row.get(field), ",.0f"
    if field == "gb":
        return row["bytes"] / 1e9, ".2f"
    if field.startswith("x."):
        extras = row.get("extras") or {}
        name = field[2:].replace("_", " ").replace("~", "/")
        if name not in extras:
            raise MarkError(f"row '{row['name']}' has no extra '{name}' (it has: {', '.join(extras) or 'none'})")
        return extras[name], "g"
    raise MarkError(f"unknown field '{field}'")


def chapter_field(data, r, field):
    if field == "peak":
        p = peak_of(r)
        if not p:
            raise MarkError(f"chapter {r['chapter']} states no peak")
        return p["value"], ".0f"
    if field == "goal" or field.startswith("goal."):
        gs = goal_list(r)
        if field != "goal":
            gs = [g for g in gs if g.get("numerator_row") == field[5:]]
        if not gs:
            raise MarkError(f"chapter {r['chapter']} has no goal '{field}'")
        return gs[0].get("ratio"), ".2f"
    if field == "iters":
        return r.get("iters"), "d"
    if field.startswith("gpu."):
        gpu = r.get("gpu") or data.get("gpu") or {}
        if field[4:] not in gpu:
            raise MarkError(f"no GPU field '{field[4:]}'")
        return gpu[field[4:]], "g"
    raise MarkError(f"unknown chapter field '{field}'")


PROF = re.compile(r"(?:(?P<machine>\d*[A-Za-z][A-Za-z0-9_-]*)/)?prof:(?P<test>\d\d_[A-Za-z0-9_]+\.[A-Za-z0-9_]+):(?P<name>[A-Za-z_][A-Za-z0-9_]*)")
REF = re.compile(r"(?:(?P<machine>\d*[A-Za-z][A-Za-z0-9_-]*)/)?(?P<run>\d\d(?:@[^:\s()*/+]+)?):(?P<rest>[A-Za-z_][A-Za-z0-9_.%-]*(?::[A-Za-z_][A-Za-z0-9_.%~-]*)?)")
TOKEN = re.compile(r"\s*(?:(?P<prof>(?:\d*[A-Za-z][A-Za-z0-9_-]*/)?prof:\d\d_[A-Za-z0-9_]+\.[A-Za-z0-9_]+:[A-Za-z_][A-Za-z0-9_]*)|(?P<ref>(?:\d*[A-Za-z][A-Za-z0-9_-]*/)?\d\d(?:@[^:\s()*/+]+)?:[A-Za-z_][A-Za-z0-9_.%-]*(?::[A-Za-z_][A-Za-z0-9_.%~-]*)?)"
                   r"|(?P<num>\d+(?:\.\d+)?)|(?P<op>[-+*/()]))")


def evaluate(results, expr):
    """(value, text) of a marker's expression; raises MarkError."""
    body, _, spec = expr.partition("|")
    toks, pos = [], 0
    body = body.strip()
    while pos < len(body):
        m = TOKEN.match(body, pos)
        if not m or m.end() == pos:
            raise MarkError(f"cannot read '{body[pos:]}'")
        toks.append(m)
        pos = m.end()
        while pos < len(body) and body[pos].isspace():
            pos += 1
    default = [None]

    def ref(text):
        m = REF.fullmatch(text)
        data, r = results.run(m.group("machine"), m.group("run"))
        parts = m.group("rest").split(":")
        if len(parts) == 1:
            v, f = chapter_field(data, r, parts[0])
        else:
            rows = [x for x in r["rows"] if x["name"] == parts[0]]
            if not rows:
                raise MarkError(f"no row '{parts[0]}' in run {m.group('run')}")
            v, f = row_field(r, rows[0], parts[1])
        if v is None:
            raise MarkError(f"'{text}' has no value in the results")
        default[0] = f if default[0] is None else ".2f"
        return float(v)

    i = [0]

    def peek():
        return toks[i[0]] if i[0] < len(toks) else None

    def atom():
        t = peek()
        if t is None:
            raise MarkError("expression ends too early")
        i[0] += 1
        if t.group("num"):
            return float(t.group("num"))
        if t.group("prof"):
            m = PROF.fullmatch(t.group("prof"))
            default[0] = ",.0f" if default[0] is None else ".2f"
            return float(results.profile(m.group("machine"), m.group("test"), m.group("name")))
        if t.group("ref"):
            return ref(t.group("ref"))
        if t.group("op") == "(":
            v = total()
            if peek() is None or peek().group("op") != ")":
                raise MarkError("missing ')'")
            i[0] += 1
            return v
        if t.group("op") == "-":
            return -atom()
        raise MarkError(f"unexpected '{t.group(0).strip()}'")

    def product():
        v = atom()
        while peek() is not None and peek().group("op") in ("*", "/"):
            op = peek().group("op")
            i[0] += 1
            w = atom()
            if op == "/" and w == 0:
                raise MarkError("division by zero")
            v = v * w if op == "*" else v / w
        return v

    def total():
        v = product()
        while peek() is not None and peek().group("op") in ("+", "-"):
            op = peek().group("op")
            i[0] += 1
            w = product()
            v = v + w if op == "+" else v - w
        return v

    value = total()
    if peek() is not None:
        raise MarkError(f"unexpected '{peek().group(0).strip()}'")
    if len(toks) > 1:
        default[0] = ".2f"
    fmt_spec = spec.strip() or default[0] or ".2f"
    try:
        if fmt_spec in ("d", ",d"):
            return value, format(int(round(value)), fmt_spec)
        return value, format(value, fmt_spec)
    except ValueError as e:
        raise MarkError(f"bad format '{fmt_spec}': {e}")


def marked_files(root):
    out = [os.path.join(root, "README.md")] if os.path.isfile(os.path.join(root, "README.md")) else []
    for d in sorted(glob.glob(os.path.join(root, "chapters", "*"))):
        for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if f == "README.md" or f.endswith(CODE_EXT):
                out.append(os.path.join(d, f))
    return out


def render_marks(results, path, rel, check, problems):
    """Rewrites (or checks) the marked numbers of one file; returns its new text or None."""
    text = open(path, encoding="utf-8").read()
    if "n:" not in text:
        return None
    lines = text.split("\n")
    md = path.endswith(".md")
    for k, line in enumerate(lines):
        where = f"{rel}:{k + 1}"
        if md:
            if re.search(r"(^|\s)\*+<!--n:", line):
                problems.append(f"{where}: a marker right after '*': Doxygen would print the asterisks"
                                " (put a word between them)")
            if re.match(r" {0,3}<!--n:", line):
                problems.append(f"{where}: a marker at the start of a line: GitHub would take the line for raw"
                                " HTML (move a word of the line before to its start)")

            def sub(m):
                try:
                    if m.group("text") is None:
                        raise MarkError("no number right after the marker")
                    _, want = evaluate(results, m.group("expr"))
                except MarkError as e:
                    problems.append(f"{where}: marker {{n:{m.group('expr')}}}: {e}")
                    return m.group(0)
                if check and m.group("text") != want:
                    problems.append(f"{where}: marker {{n:{m.group('expr')}}}: the text says '{m.group('text')}',"
                                    f" the results give '{want}'")
                return f"<!--n:{m.group('expr')}-->{want}"
            lines[k] = MD_MARK.sub(sub, line)
            continue
        # Only comment text counts: from "//" on, or a whole line inside /* ... */.
        comment = line.find("//")
        in_comment = comment >= 0 or line.lstrip().startswith(("*", "/*"))
        out, start = [line[:max(comment, 0)]], max(comment, 0)
        for m in CODE_MARK.finditer(line if in_comment else "", start):
            seg = line[start:m.start()]
            nums = list(NUMBER.finditer(seg))
            try:
                if not nums:
                    raise MarkError("no number before the marker on its line")
                _, want = evaluate(results, m.group("expr"))
            except MarkError as e:
                problems.append(f"{where}: marker {{n:{m.group('expr')}}}: {e}")
                out.append(line[start:m.end()])
                start = m.end()
                continue
            n = nums[-1]
            if check and n.group(0) != want:
                problems.append(f"{where}: marker {{n:{m.group('expr')}}}: the text says '{n.group(0)}',"
                                f" the results give '{want}'")
            out.append(seg[:n.start()] + want + seg[n.end():] + m.group(0))
            start = m.end()
        out.append(line[start:])
        lines[k] = "".join(out)
    new = "\n".join(lines)
    return new if new != text else None


def render_numbers(root, check):
    """Every marked number of the chapters' lessons and sources; returns the problem lines."""
    results = Results(root)
    problems = []
    for path in marked_files(root):
        rel = os.path.relpath(path, root)
        new = render_marks(results, path, rel, check, problems)
        if new is not None and not check:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
    return problems


def render(root, check=False):
    """Writes the generated blocks (or, with check, says which differ: exit 1)."""
    files = sorted(f for f in glob.glob(os.path.join(root, "docs", "results", "*.json"))
                   if not f.endswith(".profile.json"))  # profile values: markers only
    try:
        import matplotlib  # noqa: F401
        have_mpl = True
    except ImportError:
        have_mpl = False
        if not check:
            print("results: matplotlib not found: charts in docs/figures are left as they are")
    chapters = course(root)
    stale = []
    for path in files:
        data = load(path)
        slug = os.path.splitext(os.path.basename(path))[0]
        for num, r in data["chapters"].items():
            if r.get("label"):
                continue  # extra shapes: in the shapes table below
            # (a sweep with a chart of its own, chapter 10's pipeline depth, is not a shape)
            shapes = [x for k, x in data["chapters"].items() if x.get("label") and x["chapter"] == num
                      and not x["label"].startswith("pipeline depth")]
            folder = chapters.get(num)
            lesson = [os.path.join(root, "chapters", folder, "README.md")] if folder else []
            lesson = [x for x in lesson if os.path.exists(x)]
            if lesson:
                text = open(lesson[0], encoding="utf-8").read()
                pat = re.compile(rf"(<!-- results:{num}:{slug}:begin -->\n).*?(<!-- results:{num}:{slug}:end -->)", re.S)
                new = pat.sub(lambda m: m.group(1) + markdown_table(r) + m.group(2), text)
                if shapes:
                    pat = re.compile(rf"(<!-- results:{num}-shapes:{slug}:begin -->\n).*?(<!-- results:{num}-shapes:{slug}:end -->)", re.S)
                    new = pat.sub(lambda m: m.group(1) + shapes_table([r] + shapes) + m.group(2), new)
                # The chart goes right after the table, once, when it can be drawn.
                figure = f"../../docs/figures/ch{num}_{slug}.png"
                end = f"<!-- results:{num}:{slug}:end -->"
                if have_mpl and figure not in new and end in new:
                    new = new.replace(end, f"{end}\n\n![Chapter {num} on the {slug}]({figure})", 1)
                if new != text:
                    if check:
                        stale.append(os.path.relpath(lesson[0], root))
                    else:
                        with open(lesson[0], "w", encoding="utf-8") as f:
                            f.write(new)
            if have_mpl and not check:
                os.makedirs(os.path.join(root, "docs", "figures"), exist_ok=True)
                chart(r, os.path.join(root, "docs", "figures", f"ch{num}_{slug}.png"))
        if have_mpl and not check:
            for key, r in data["chapters"].items():  # charts of particular shape runs
                if r["chapter"] == "01" and r.get("label", "").startswith("latency and bytes in flight"):
                    littles_law_chart(r, os.path.join(root, "docs", "figures", f"ch01_littles_law_{slug}.png"))
            sweep = [r for r in data["chapters"].values()
                     if r["chapter"] == "10" and r.get("label", "").startswith("pipeline depth")]
            if sweep:
                stages_chart(sweep, os.path.join(root, "docs", "figures", f"ch10_stages_{slug}.png"))
    for x in stale:
        print(f"results: {x}: its generated results block differs from docs/results (run: tools/results.py render .)")
    problems = render_numbers(root, check)
    for x in problems:
        print(x)
    if problems and check:
        print(f"results: {len(problems)} problem(s) with marked numbers "
              "(run: tools/results.py render . to rewrite them; fix the markers that cannot be resolved)")
    return 1 if stale or problems else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("merge")
    m.add_argument("--dir", required=True)
    m.add_argument("inputs", nargs="+")
    g = sub.add_parser("goals")
    g.add_argument("file")
    lb = sub.add_parser("label")
    lb.add_argument("file")
    lb.add_argument("text")
    mc = sub.add_parser("machines")
    mc.add_argument("inputs", nargs="+")
    r = sub.add_parser("render")
    r.add_argument("root")
    r.add_argument("--check", action="store_true", help="only check that the lessons are up to date")
    a = p.parse_args()
    if a.cmd == "label":
        label(a.file, a.text)
        return 0
    if a.cmd == "merge":
        return merge(a.dir, a.inputs)
    if a.cmd == "machines":
        print("\n".join(sorted({machine(load(x)) for x in a.inputs})))
        return 0
    if a.cmd == "goals":
        return goals(a.file)
    return render(a.root, a.check)


if __name__ == "__main__":
    sys.exit(main())
