#!/usr/bin/env python3
"""Profile tests: run a program under Nsight Compute and check metrics.

  profile_check.py --probe steps_gpu_probe \
      --measure v2_req=add_grid_stride:l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum \
      --var n=16777216 \
      --expect "3.9 < v2_req / v3_req < 4.1" \
      -- chNN_topic --size 16M --variant v2_row,v3_row --iters 1 --warmup 0 --no-verify

Each --measure NAME=KERNEL_REGEX:METRIC (a full ncu metric name or one of the
ALIASES below) profiles the first launch of a kernel
whose name matches KERNEL_REGEX and binds the metric's value to NAME. Each
--expect is a Python expression over the names and --var values; all must be
true. Exit codes: 0 pass, 1 fail, 77 skipped (no GPU, no ncu, no counter
access). Clocks are left alone (--clock-control none).

With the environment variable STEPS_PROFILE_OUT=DIR (./tutorial bench
--profile sets it), the test also writes DIR/<--name>.json: the GPU, the
command and every measured value, so lessons can quote them.

  profile_check.py merge --dir docs/results DIR/*.json
      Merges those files into docs/results/<machine>.profile.json (one entry
      per test, replaced when re-run), which tools/results.py reads.

  profile_check.py verify --build build --dir docs/results
      Evaluates every profile test's expectations, as the build defines them
      now, on the values each GPU's file recorded (./tutorial check): an
      expectation changed after a run must hold on every measured GPU.
"""
import argparse
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77

# Short names for the counters the course's profile tests use, so that each
# CMakeLists.txt says what it measures, not how ncu spells it.
ALIASES = {
    "ld_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "ld_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "st_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "st_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "dram_read": "dram__bytes_read.sum",
    "dram_write": "dram__bytes_write.sum",
    "dram_pct": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "shared_ld_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "shared_st_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "shared_ld_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "shared_st_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "sass_shared_ld": "smsp__sass_inst_executed_op_shared_ld.sum",
    "sass_shared_ld_wavefronts": "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "sass_ldsm": "smsp__sass_inst_executed_op_ldsm.sum",
    "sass_ldsm_wavefronts": "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    "sass_shared_st": "smsp__sass_inst_executed_op_shared_st.sum",
    "sass_shared_st_wavefronts": "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "warp_occupancy": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "theoretical_occupancy": "sm__maximum_warps_per_active_cycle_pct",
    "occupancy_limit_registers": "launch__occupancy_limit_registers",
    "registers_per_thread": "launch__registers_per_thread",
    "branch_efficiency": "smsp__sass_average_branch_targets_threads_uniform.pct",
    "instructions": "smsp__inst_executed.sum",
    "tensor_pipe": "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
}


def find_ncu():
    for cand in (shutil.which("ncu"), "/usr/local/cuda/bin/ncu"):
        if cand and os.path.exists(cand):
            return cand
    return None


def profile(ncu, kernel, metrics, cmd):
    """Returns {metric: value} for the first launch of `kernel`."""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "ncu.csv")
        args = [ncu, "--clock-control", "none", "--kernel-name", f"regex:{kernel}", "--launch-count", "1",
                "--metrics", ",".join(metrics), "--csv", "--page", "raw", "--print-units", "base",
                "--log-file", log] + cmd
        run = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        text = open(log, encoding="utf-8", errors="replace").read() if os.path.exists(log) else ""
    if "ERR_NVGPUCTRPERM" in run.stdout + text:
        print("[skipped: no permission to read GPU performance counters (ERR_NVGPUCTRPERM)]")
        sys.exit(SKIP)
    rows = [r for r in csv.reader(io.StringIO(text)) if r and not r[0].startswith("==")]
    if len(rows) < 2:
        # The kernel never launched because its row cannot run here (this GPU
        # lacks a feature, or the binary has no code for it): the program
        # says so in its table and exits 77 when every row was skipped. Then
        # the profile test skips too, with the program's reason; it fails
        # only when the row ran and ncu still measured nothing.
        said = [ln.strip() for ln in run.stdout.splitlines() if "skipped" in ln and "ncu" not in ln.lower()]
        if run.returncode == SKIP or said:
            print(f"[skipped: kernel '{kernel}' did not run here: {(said or ['the program exited 77'])[0]}]")
            sys.exit(SKIP)
        print(run.stdout[-3000:])
        print(text[-3000:])
        raise SystemExit(f"[FAIL: ncu produced no metrics for kernel '{kernel}' (exit {run.returncode})]")
    header, values = rows[0], rows[-1]
    out = {}
    for m in metrics:
        if m not in header:
            raise SystemExit(f"[FAIL: metric '{m}' is not in ncu's output; columns: {header}]")
        out[m] = float(values[header.index(m)].replace(",", ""))
    return out


def merge(argv):
    p = argparse.ArgumentParser(prog="profile_check.py merge")
    p.add_argument("--dir", required=True)
    p.add_argument("--machine", required=True,
                   help="the results file's machine name, as the bench's run files state it (results.py machines)")
    p.add_argument("files", nargs="+")
    a = p.parse_args(argv)
    path = os.path.join(a.dir, a.machine + ".profile.json")
    old = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            old = json.load(fh)
    tests = old.get("tests", {})
    for f in a.files:
        with open(f, encoding="utf-8") as fh:
            r = json.load(fh)
        tests[r["test"]] = r
    with open(path, "w", encoding="utf-8") as fh:
        json.dump({"schema": 1, "tests": dict(sorted(tests.items()))}, fh, indent=1, sort_keys=True)
        fh.write("\n")
    print(f"profile: {len(a.files)} test(s) merged into {path}")
    return 0


def test_parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--probe", required=True)
    p.add_argument("--name", default="", help="the test's name (profile.NN_topic.short), for STEPS_PROFILE_OUT")
    p.add_argument("--measure", action="append", default=[])
    p.add_argument("--var", action="append", default=[])
    p.add_argument("--expect", action="append", default=[])
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    return p


def given(var):
    """The --var NAME=VALUE pairs as numbers."""
    return {k: float(val) for k, val in (v.split("=", 1) for v in var)}


def holds(expect, env):
    """One expectation over measured and given values, as the test evaluates it."""
    return bool(eval(expect, {"__builtins__": {"abs": abs, "min": min, "max": max}}, dict(env)))


def verify(argv):
    """Every profile test's expectations, as the build defines them now, against the values each GPU's
    docs/results/<machine>.profile.json recorded: an expectation changed after a run must still hold on
    what every measured GPU gave, and a lesson quoting a profile value must not rest on a test that fails
    there. Prints one line per problem; returns 1 if any."""
    p = argparse.ArgumentParser(prog="profile_check.py verify")
    p.add_argument("--build", required=True)
    p.add_argument("--dir", required=True)
    a = p.parse_args(argv)
    listing = subprocess.run(["ctest", "--test-dir", a.build, "-L", "profile", "--show-only=json-v1"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if listing.returncode != 0:
        print(f"  FAIL  ctest could not list the profile tests of {a.build}: {listing.stderr.strip()}")
        return 1
    files = sorted(f for f in os.listdir(a.dir) if f.endswith(".profile.json"))
    recorded = {}
    for f in files:
        with open(os.path.join(a.dir, f), encoding="utf-8") as fh:
            recorded[f[: -len(".profile.json")]] = json.load(fh).get("tests", {})
    commands = {t["name"]: t.get("command", []) for t in json.loads(listing.stdout).get("tests", [])}
    problems, checked = recorded_problems(commands, recorded)
    for line in problems:
        print(f"  FAIL  {line}")
    if not problems:
        print(f"  ok    {checked} recorded runs of the profile tests ({', '.join(sorted(recorded)) or 'no GPU file'}) "
              f"satisfy the tests' expectations as they stand")
    return 1 if problems else 0


def recorded_problems(commands, recorded):
    """(problems, runs checked): each test's expectations (`commands`: test name -> its command line,
    as ctest lists it) on each machine's recorded values (`recorded`: machine -> test name -> record)."""
    problems, checked = [], 0
    for name, cmd in sorted(commands.items()):
        if "--probe" not in cmd:
            continue
        args = test_parser().parse_args(cmd[cmd.index("--probe"):])
        names = [m.split("=", 1)[0] for m in args.measure]
        for machine, tests in sorted(recorded.items()):
            r = tests.get(name)
            if r is None:
                continue  # not run on that GPU (an older file, or a test its GPU skips)
            env = {k: v["value"] for k, v in r.get("values", {}).items()}
            env.update(given(args.var))
            missing = [n for n in names if n not in env]
            if missing:
                problems.append(f"{name}: {machine} has no value for {', '.join(missing)} (run it there again)")
                continue
            checked += 1
            for e in args.expect:
                try:
                    ok = holds(e, env)
                except Exception as err:  # a name the expression uses that the run did not record
                    problems.append(f"{name}: '{e}' cannot be evaluated on {machine}'s values: {err}")
                    continue
                if not ok:
                    used = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", e))
                    values = ", ".join(f"{k} {env[k]:.4g}" for k in names if k in used)
                    problems.append(f"{name}: '{e}' is false on {machine}'s measured values ({values})")
    return problems, checked


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "merge":
        return merge(sys.argv[2:])
    if len(sys.argv) > 1 and sys.argv[1] == "verify":
        return verify(sys.argv[2:])
    a = test_parser().parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    out_dir = os.environ.get("STEPS_PROFILE_OUT")
    if out_dir and not os.path.isabs(out_dir):
        print(f"profile_check.py: STEPS_PROFILE_OUT must be an absolute path (ctest runs each test in its own "
              f"directory), not '{out_dir}'")
        return 2

    probe = subprocess.run([a.probe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if probe.returncode != 0:
        print(f"[skipped: {probe.stdout.strip()}]")
        return SKIP
    ncu = find_ncu()
    if not ncu:
        print("[skipped: Nsight Compute (ncu) not found]")
        return SKIP

    by_kernel = {}
    for m in a.measure:
        name, spec = m.split("=", 1)
        kernel, metric = spec.split(":", 1)
        metric = ALIASES.get(metric, metric)
        by_kernel.setdefault(kernel, []).append((name, metric))
    env = given(a.var)
    measured = {}
    for kernel, items in by_kernel.items():
        values = profile(ncu, kernel, [metric for _, metric in items], cmd)
        for name, metric in items:
            env[name] = values[metric]
            measured[name] = {"value": values[metric], "metric": metric, "kernel": kernel}
            print(f"  {name:>12} = {values[metric]:,.2f}   ({metric} of kernel {kernel})")
    # The given values (--var) are kept beside the measured ones, so that a
    # lesson's marker can divide by the same count the expectation used.
    for k, val in env.items():
        if k not in measured:
            measured[k] = {"value": val, "metric": "given (--var)", "kernel": ""}
    failed = 0
    for e in a.expect:
        ok = holds(e, env)
        print(f"  {'ok  ' if ok else 'FAIL'}  {e}")
        failed += not ok
    if out_dir and a.name:
        os.makedirs(out_dir, exist_ok=True)
        record = {"test": a.name, "command": " ".join(os.path.basename(c) if i == 0 else c
                                                                          for i, c in enumerate(cmd)),
                  "values": measured, "expect": a.expect, "passed": not failed}
        with open(os.path.join(out_dir, a.name + ".json"), "w", encoding="utf-8") as fh:
            json.dump(record, fh, indent=1, sort_keys=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
