#!/usr/bin/env python3
"""Lesson 03's claim about v8 and v9, checked in the machine code (no GPU needed).

v8's source starts the global loads of slice t + 1 before the multiply-adds
of slice t. In the sm_90 machine code they come after them: ptxas moved the
loads next to the shared-memory stores that use them, because holding the
loaded values across the math would take registers the kernel does not have
under its 128. v9's cp.async copies hold no register and stay before the
math. This reads the fast-path kernels (the tiles divide the matrices) of
the built chapter program, finds each one's main loop (the backward branch
around most of its FFMA) and counts the FFMA before the loop's first global
load and after its last.

Usage: sass_order.py [--cuobjdump CUOBJDUMP] [--nvcc NVCC] BINARY
Exit 0: both as claimed; 1: not; 77 (skipped): no cuobjdump / nvdisasm, or
no sm_90 code in the binary.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import sass as machine_code  # noqa: E402  (tools/sass.py)

ARCH = "sm_90"
LOADS = ("LDG", "LDGSTS")  # global loads, and global -> shared copies (cp.async)
# (kernel, where the claim puts the loop's global loads: "after" or "before" the math)
CLAIMS = [("sgemm_double_buffer", "after"), ("sgemm_async_copy", "before")]
SHARE = 0.9  # "after the math": at least this share of the loop's FFMA come before the first load


def main_loop(code):
    """The instructions of the backward branch's range that holds the most FFMA."""
    best = []
    for address, op, operands in code:
        if op != "BRA" or not operands.startswith("0x"):
            continue
        target = int(operands.split()[0], 16)
        if target < address:
            body = [(a, o) for a, o, _ in code if target <= a <= address]
            if sum(o == "FFMA" for _, o in body) > sum(o == "FFMA" for _, o in best):
                best = body
    return best


def main():
    ap = machine_code.parser(__doc__)
    ap.add_argument("binary")
    args = ap.parse_args()
    found = machine_code.found_or_skip(args)
    if not found:
        return machine_code.SKIP
    try:
        sass = machine_code.disassemble(found, args.binary, ARCH)
    except subprocess.CalledProcessError as e:  # no such file, or not a CUDA binary: a failure, not a skip
        print(f"cuobjdump could not read {args.binary}: {e.stderr.strip()}")
        return 1
    funcs = machine_code.functions(sass)  # empty when the binary has no code for ARCH
    if not funcs:
        print(f"SKIPPED: no {ARCH} machine code in {args.binary} (built for other GPUs)")
        return machine_code.SKIP
    failures = 0
    for kernel, where in CLAIMS:
        # The fast path: template argument kChecked = false (mangled "Lb0E").
        names = [n for n in funcs if kernel in n and "Lb0E" in n]
        if len(names) != 1:
            print(f"{kernel}: expected one fast-path function, found {len(names)}")
            failures += 1
            continue
        loop = main_loop(funcs[names[0]])
        ffma = [i for i, (_, op) in enumerate(loop) if op == "FFMA"]
        loads = [i for i, (_, op) in enumerate(loop) if op in LOADS]
        if not ffma or not loads:
            print(f"{kernel}: main loop with {len(ffma)} FFMA and {len(loads)} global loads: nothing to compare")
            failures += 1
            continue
        before = sum(i < loads[0] for i in ffma)  # FFMA before the loop's first global load
        after = sum(i > loads[-1] for i in ffma)  # and after its last
        if where == "after":
            ok = before >= SHARE * len(ffma)
        else:
            ok = after >= SHARE * len(ffma)
        failures += not ok
        print(f"{kernel}: main loop {len(loop)} instructions, {len(ffma)} FFMA, {len(loads)} global loads; "
              f"{before} FFMA before the first load, {after} after the last "
              f"({'loads ' + where + ' the math, as claimed' if ok else 'NOT as claimed: loads ' + where + ' the math'})")
    print("v8 and v9 as the lesson says" if failures == 0 else f"{failures} kernel(s) not as the lesson says")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
