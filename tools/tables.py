"""The measured-results tables of the lessons, written between
<!-- results:NN:MACHINE:begin --> and <!-- results:NN:MACHINE:end --> (one run)
and <!-- results:NN-shapes:MACHINE:begin --> ... end (one line per problem shape).

Every number is a field of the run (docs/results.md); nothing is recomputed.
Standard library only.
"""
from runs import bound_ms, fmt, goal_list, peak_of


def digits_of(unit):
    return 0 if unit == "GB/s" else 1 if unit == "TFLOP/s" else 2


def markdown_table(r):
    unit = r["metric"]
    base = r.get("baseline") or "baseline"
    peak = peak_of(r)
    digits = digits_of(unit)
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
            line += f" {fmt(bound_ms(r, row), 4)} | {fmt(row.get('pct_of_peak') if bound_ms(r, row) else None, 1)} |"
        verdict = row["verified"] + (f" ({row['skipped']})" if row.get("skipped") else "")
        lines.append(line + f" {verdict} |")
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
    if not best or not bound_ms(r, best):
        return ""
    unit = peak.get("unit", r["metric"])
    work = f"{best['bytes'] / 1e9:.2f} GB moved" if unit == "GB/s" else f"{best['flops'] / 1e12:.2f} TFLOP"
    text = (f"\n*Budget: `{best['name']}`'s problem ({work}) at the {peak['label']} peak "
            f"({fmt(peak['value'], 0 if unit == 'GB/s' else 1)} {unit}) takes at least {fmt(bound_ms(r, best), 4)} ms; "
            f"`{best['name']}` takes {fmt(best['median_ms'], 4)} ms, {fmt(best['pct_of_peak'], 1)}% of that bound")
    if b and b is not best and bound_ms(r, b) and best.get("ratio_to_baseline") is not None:
        text += (f" and {fmt(100 * best['ratio_to_baseline'], 1)}% of {base}, which itself reaches "
                 f"{fmt(b['pct_of_peak'], 1)}% of its own bound")
    return text + ". Bound ms: each row's work at the peak; % of bound: that bound over the row's median.*\n"


def shapes_table(shapes):
    """One line per problem shape: the baseline, the best version and its ratio. `shapes` is a list of
    (name, run), the chapter's default run first."""
    first = shapes[0][1]
    unit = first["metric"]
    base = first.get("baseline") or "baseline"
    out = f"| problem | {base} {unit} | best version | its {unit} | ratio |\n|---|---:|---|---:|---:|\n"
    for name, r in shapes:
        rows = {x["name"]: x for x in r["rows"]}
        b = rows.get(r.get("baseline") or "", {})
        best = rows.get(r.get("best") or "", {})
        out += (f"| {name} | {fmt(b.get('value'), 1)} | "
                f"{r.get('best') or '-'} | {fmt(best.get('value'), 1)} | {fmt(best.get('ratio_to_baseline'), 2)}x |\n")
    return out + (f"\n*{first['gpu']['name']}, `{first['binary']}`, {first['date'][:10]}; "
                  "all rows from one `./tutorial bench`.*\n")
