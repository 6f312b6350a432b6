"""Marked numbers: every measured number in a lesson's prose or in a code file's
banner comment is generated from docs/results, so it cannot drift.

The language below is what a marker may say; `tools/results.py render`
rewrites the numbers, `render --check` reports each one that differs.
Standard library only.
"""
import copy
import glob
import operator
import os
import re

from runs import goal_list, load, peak_of, bound_ms

# ---------------------------------------------------------------------------
# Marked numbers: every measured number in a lesson's prose or in a kernel
# file's banner comment is generated from docs/results, so it cannot drift.
#
# Where a number goes:
#   Markdown (chapters/*/README.md and the course map in README.md): an HTML
#   comment right before its number,
#   invisible on GitHub and in Doxygen 1.9 (which drops the comment):
#       v3 reaches <!--n:NN:ROW:gbps-->4112 GB/s
#   (No closing comment: Doxygen also drops the blank after a comment, which
#   would glue "4112GB/s". Not right after a '*' or '**' that opens emphasis:
#   Doxygen then prints the asterisks; write **v3 at <!--n:...-->4112** instead.
#   Not at the start of a line: CommonMark (GitHub) then reads the whole line
#   as a raw HTML block. The check refuses both.)
#   C++ comments (chapters/*/*.cu, *.cuh, *.hpp, *.cpp): the marker follows
#   its number on the same line, with no other digit between them:
#       // v3: 4112 GB/s {n:NN:ROW:gbps}, 0.99x {n:NN:ROW:base} the baseline
#   `render` rewrites the text (the number only; units are plain text);
#   `render --check` prints one line per number that differs and exits 1.
#
# What a marker may say (EXPR), a small expression language:
#   EXPR    := SUM ['|' FORMAT]
#   SUM     := PRODUCT (('+' | '-') PRODUCT)*
#   PRODUCT := ATOM (('*' | '/') ATOM)*
#   ATOM    := NUMBER | REF | '(' SUM ')' | ('min' | 'max') '(' SUM (',' SUM)* ')'
#              (min/max: the ends of a range of rows whose order changes
#              from run to run: "min(NN:a:us, NN:b:us) to max(...)")
#   REF     := [MACHINE '/'] RUN ':' ROW ':' FIELD      a row's value
#            | [MACHINE '/'] RUN ':' CHAPTERFIELD       the run's own
#   RUN     := NN | NN '@' LABEL     NN: chapter; LABEL: a shape run of
#              bench_shapes, named by its label or a unique prefix of it
#              ("NN@6144" for "NN@6144 x 6144 x 1280"); no spaces (write '_'
#              for one: "NN@big_shape" for "NN@big shape"), ':' or '()'
#   MACHINE := the results file, docs/results/MACHINE.json (default: the
#              machine rendered: the reference named in docs/results/REFERENCE,
#              or the learner's own GPU in ./tutorial docs)
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
#              "profile." (NN_topic.NAME), NAME one of its MEASUREs
#   CHAPTERFIELD := peak          the peak's value (4814.3 GB/s)
#            | goal | goal.ROW     a goal's ratio (the first, or the one whose
#                                  numerator row is ROW)
#            | threshold | threshold.ROW   that goal's threshold (the ratio it asks for)
#            | iters | gpu.FIELD   (gpu.sms, gpu.sm_clock_khz, gpu.l2_bytes ...)
#   FORMAT  := a Python format spec: .0f, .1f, ,.0f (thousands with commas),
#              .3g ...; without it, the field's own: GB/s values .0f, TFLOP/s
#              .1f, ms .2f, us .1f, base/speedup/goal .2f, pbase/peak .1f,
#              bound .4f, anything computed .2f.
# Examples (NN a chapter number, A and B row names): NN:A:base|.3f  ·  (NN:A:ms/NN:B:ms)
#   ·  NN:A:value/NN:B:value|.2f  ·  NN@6144:A:base  ·  (1 - NN:A:value/NN:B:value)*100|.0f
#   ·  NN:peak|.0f  ·  100*4/32|.3g (arithmetic alone: a derived number, checked)
# ---------------------------------------------------------------------------
NUMBER_RE = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?"
MD_MARK = re.compile(r"<!--n:(?P<expr>.*?)-->(?P<text>" + NUMBER_RE + ")?")
CODE_MARK = re.compile(r"\{n:(?P<expr>[^{}]*)\}")
NUMBER = re.compile(r"(?<![\w.])" + NUMBER_RE)
CODE_EXT = (".cu", ".cuh", ".hpp", ".cpp", ".h")


class MarkError(Exception):
    pass


def reference_machine(root):
    """The course's reference GPU: the results file the shipped lessons render (docs/results/REFERENCE, one
    line, e.g. "H200"). Named there once; nothing else in tools/ names a machine."""
    path = os.path.join(root, "docs", "results", "REFERENCE")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    return None


# A GPU's name in prose: "on the <!--gpu-->H200<!--/gpu-->": the name of the
# machine the lesson is rendered for (the reference, or the learner's GPU).
GPU_MARK = re.compile(r"<!--gpu-->(?P<text>[^<]*)<!--/gpu-->")
# A checked claim: a comparison that must hold on every measured GPU,
#   A beats B<!--claim:NN:a:value > NN:b:value-->
# or, when its wording names the GPU it holds on, on that GPU only:
#   on the H200, A beats B<!--claim@H200:NN:a:value > NN:b:value-->
# Each side is a marker expression (EXPR, below); OP is <, <=, > or >=.
# Without @MACHINE it is checked on every results file that holds its runs
# (at least one must); a claim false on one fails ./tutorial check.
CLAIM_MARK = re.compile(r"<!--claim(?:@(?P<machine>[A-Za-z0-9_-]+))?:(?P<lhs>.*?)(?P<op><=|>=|<|>)(?P<rhs>.*?)-->")


class Results:
    """The runs of every docs/results/*.json, to resolve markers against."""

    def __init__(self, root, machine=None):
        self.machines = {}
        self.profiles = {}
        for path in sorted(glob.glob(os.path.join(root, "docs", "results", "*.json"))):
            name = os.path.splitext(os.path.basename(path))[0]
            if name.endswith(".profile"):
                self.profiles[name[: -len(".profile")]] = load(path)
            else:
                self.machines[name] = load(path)
        ref = reference_machine(root)
        self.reference = ref if ref in self.machines else (sorted(self.machines) or [None])[0]
        # The machine a marker without MACHINE/ reads: the one asked for (a
        # learner's own GPU, ./tutorial docs), else the course's reference.
        self.default = machine if machine in self.machines else self.reference

    def gpu_name(self, machine=None):
        """The GPU's name of a machine file, without "NVIDIA " ("H200", "H100 80GB HBM3")."""
        data = self.machines.get(machine or self.default) or {}
        name = (data.get("gpu") or {}).get("name", machine or self.default or "?")
        count = data.get("gpu_count", 1)
        return (f"{count} x " if count > 1 else "") + re.sub(r"^NVIDIA ", "", name)

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
            # '_' stands for a space in a marker ("NN@big_shape" for "NN@big shape")
            label = label.replace("_", " ")
            hits = [k for k in runs if k.startswith(num + "@") and k.split("@", 1)[1].startswith(label)]
            if len(hits) == 1:
                return data, runs[hits[0]]
            if len(hits) > 1:
                raise MarkError(f"'{name}' is ambiguous: {', '.join(hits)}")
        raise MarkError(f"no run '{name}' in docs/results/{machine or self.default}.json")


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
        return bound_ms(r, row), ".4f"
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
        name = field[2:]
        if name not in extras:  # the column's name as written, else '_' for ' ' and '~' for '/'
            name = name.replace("_", " ").replace("~", "/")
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
    base = field.split(".")[0]
    if base in ("goal", "threshold"):
        gs = goal_list(r)
        if field != base:
            gs = [g for g in gs if g.get("numerator_row") == field[len(base) + 1:]]
        if not gs:
            raise MarkError(f"chapter {r['chapter']} has no goal '{field}'")
        return gs[0].get("ratio" if base == "goal" else "threshold"), ".2f"
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
                   r"|(?P<fn>min|max)\s*\(|(?P<num>\d+(?:\.\d+)?)|(?P<op>[-+*/(),]))")


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
        if t.group("fn"):
            args = [total()]
            while peek() is not None and peek().group("op") == ",":
                i[0] += 1
                args.append(total())
            if peek() is None or peek().group("op") != ")":
                raise MarkError(f"missing ')' after {t.group('fn')}(...")
            i[0] += 1
            return (min if t.group("fn") == "min" else max)(args)
        if t.group("op") == "(":
            v = total()
            if peek() is None or peek().group("op") != ")":
                raise MarkError("missing ')'")
            i[0] += 1
            return v
        if t.group("op") == "-":
            return -atom()
        raise MarkError(f"unexpected '{t.group(0).strip()}'")

    def chain(operand, ops):
        """operand (op operand)... for the operators in ops, left to right."""
        v = operand()
        while peek() is not None and peek().group("op") in ops:
            op = peek().group("op")
            i[0] += 1
            w = operand()
            if op == "/" and w == 0:
                raise MarkError("division by zero")
            v = ops[op](v, w)
        return v

    def product():
        return chain(atom, {"*": operator.mul, "/": operator.truediv})

    def total():
        return chain(product, {"+": operator.add, "-": operator.sub})

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


def unmeasured_folders(root):
    """Folders of the chapters course.tsv lists as not ready (wip, planned): not yet measured."""
    import course
    return {c.folder for c in course.chapters(root) if c.status != "ready"}


def marked_files(root):
    out = [os.path.join(root, "README.md")] if os.path.isfile(os.path.join(root, "README.md")) else []
    for d in sorted(glob.glob(os.path.join(root, "chapters", "*"))):
        for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if f == "README.md" or f.endswith(CODE_EXT):
                out.append(os.path.join(d, f))
    return out


def render_marks(results, path, rel, check, problems, text=None):
    """Rewrites (or checks) the marked numbers of one file (of `text`, its contents, when given); returns
    its new text or None."""
    if text is None:
        text = open(path, encoding="utf-8").read()
    if "n:" not in text and "<!--gpu-->" not in text and "<!--claim" not in text:
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
            lines[k] = GPU_MARK.sub(lambda m: f"<!--gpu-->{results.gpu_name()}<!--/gpu-->", lines[k])
            for m in CLAIM_MARK.finditer(line):
                problems.extend(f"{where}: {p}" for p in check_claim(results, m, line))
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


def with_machine(results, machine):
    """A view of `results` whose unqualified references read `machine` (the files are shared, not copied)."""
    view = copy.copy(results)
    view.default = machine
    return view


def check_claim(results, m, line):
    """The problems of one claim: false on a GPU, on none measured, or naming no GPU when it holds on one."""
    ops = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
    text = f"claim {m.group('lhs').strip()} {m.group('op')} {m.group('rhs').strip()}"
    only = m.group("machine")
    if only:
        if only not in results.machines:
            return [f"{text}: no results file docs/results/{only}.json"]
        short = re.sub(r"^NVIDIA ", "", results.gpu_name(only)).split()[0]
        prose = re.sub(r"<!--.*?-->", "", line)  # the words of the line, without any marker
        if short not in prose:
            return [f"{text}: holds on {only} only, and its sentence must say so (name '{short}' on its line)"]
    out, checked = [], 0
    for machine in ([only] if only else sorted(results.machines)):
        view = with_machine(results, machine)
        try:
            lhs, _ = evaluate(view, m.group("lhs"))
            rhs, _ = evaluate(view, m.group("rhs"))
        except MarkError as e:
            if only:
                return [f"{text}: {e}"]
            continue  # this GPU's file does not hold these runs (another GPU count, or not run there)
        checked += 1
        if not ops[m.group("op")](lhs, rhs):
            out.append(f"{text}: false on {machine} ({lhs:.4g} {m.group('op')} {rhs:.4g} does not hold); reword it,"
                       f" or name the GPU it holds on (<!--claim@GPU:...-->)")
    if not checked:
        out.append(f"{text}: no results file holds its runs")
    return out


def render_numbers(root, check, machine=None):
    """Every marked number of the chapters' lessons and sources; returns the problem lines."""
    results = Results(root, machine)
    problems = []
    unmeasured = unmeasured_folders(root)
    for path in marked_files(root):
        rel = os.path.relpath(path, root)
        found = []
        new = render_marks(results, path, rel, check, found)
        # A chapter that has not run on a GPU yet (status wip or planned in
        # course.tsv) has no results: its markers are checked for their form
        # and their names, and wait for its runs; the others must resolve.
        parts = rel.split(os.sep)
        if len(parts) > 2 and parts[0] == "chapters" and parts[1] in unmeasured:
            found = [p for p in found if not re.search(r": no (run|profile test) '[^']*' in docs/results/", p)]
        problems.extend(found)
        if new is not None and not check:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
    return problems


