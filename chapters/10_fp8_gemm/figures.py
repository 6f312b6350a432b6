"""Chapter 10's hooks (tools/hooks.py): the shapes table's lines and the pipeline-depth chart.

Both read each run's "options" (m, n, k, stages: docs/results.md), never its
label or problem text. bench_shapes runs two kinds of extra runs: other
shapes (other m, n, k) and the pipeline-depth sweep (the default shape with
--stages 2 to 5). A labelled run at the default run's m, n, k is part of the
sweep: it goes to the chart, not to the shapes table.
"""
from charts import save_chart

ROWS = ("warp_specialized",)  # v4, the version whose ring depth the sweep varies


def _split(runs):
    """(default run, [shape runs], [sweep runs]); LookupError when a run lacks the options."""
    lacking = [k for k, r in runs.items() if not all(x in (r.get("options") or {}) for x in ("m", "n", "k", "stages"))]
    if lacking:
        raise LookupError(f"{len(lacking)} of {len(runs)} runs state no options m, n, k, stages "
                          "(results written before the \"options\" field; re-run ./tutorial bench)")
    default = [r for r in runs.values() if not r.get("label")]
    if len(default) != 1:
        raise LookupError("no default run (one without a label) among the runs")
    default = default[0]
    dims = lambda r: tuple(r["options"][x] for x in ("m", "n", "k"))  # noqa: E731
    labelled = [r for r in runs.values() if r.get("label")]
    return (default, [r for r in labelled if dims(r) != dims(default)],
            [r for r in labelled if dims(r) == dims(default)])


def _shape(r):
    o = r["options"]
    return f"{o['m']} x {o['n']} x {o['k']}"


def shapes(runs):
    default, others, _sweep = _split(runs)
    return [(_shape(default) + " (default)", default)] + [(r["label"], r) for r in others]


def charts(runs, machine, out_dir, plt):
    """v4's TFLOP/s against the stages of its ring, with the baseline measured in each of the same runs."""
    _default, _others, sweep = _split(runs)
    points = []
    for r in sweep:
        rows = {x["name"]: x for x in r["rows"]}
        v4, base = rows.get(ROWS[0], {}), rows.get(r.get("baseline") or "", {})
        if v4.get("value") and base.get("value"):
            points.append((r["options"]["stages"], v4["value"], base["value"]))
    if len(points) < 2:
        raise LookupError(f"{len(points)} sweep run(s) with both {ROWS[0]} and the baseline measured (2 needed)")
    points.sort()
    fig, ax = plt.subplots(figsize=(6.5, 4.0), dpi=110)
    xs = [p[0] for p in points]
    ax.plot(xs, [p[1] for p in points], marker="o", color="#2a7ab0", label="v4 " + ROWS[0])
    ax.plot(xs, [p[2] for p in points], marker="s", color="#888888", linestyle="--",
            label="cuBLASLt block-scaled (same run)")
    for x, v, _ in points:
        ax.annotate(f"{v:.0f}", (x, v), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
    ax.set_xticks(xs)
    ax.set_xlabel("stages in the ring (32.5 KB each: A, B and A's scales)")
    ax.set_ylabel("TFLOP/s")
    ax.set_ylim(0, max(max(p[1], p[2]) for p in points) * 1.15)
    ax.set_title(f"Pipeline depth: {_shape(sweep[0])} on {sweep[0]['gpu']['name']}", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    out = f"{out_dir}/ch{sweep[0]['chapter']}_stages_{machine}.png"
    save_chart(plt, fig, ax, out)
    return [out]
