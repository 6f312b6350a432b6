#!/usr/bin/env python3
"""Lesson 03's claims about the machine code of v8 to v10, checked (no GPU needed).

1. Where the loop's global loads are. v8's source starts the global loads
   of slice t + 1 before the multiply-adds of slice t. In the sm_90 machine
   code they come after them: ptxas moved the loads next to the shared-memory
   stores that use them, because holding the loaded values across the math
   would take registers the kernel does not have under its 128. The cp.async
   copies of v9 and v10 hold no register and stay before the math.
2. How the multiply-adds read their operands. An FFMA reads three registers;
   ptxas marks an operand ".reuse" when the next instruction reads the same
   register in the same slot, and the hardware then takes it from a small
   operand cache instead of the register file. v9's and v10's loops, as the
   lesson measured them, mark at least REUSE operands per FFMA. The same
   loop written with t % 2 for the buffer index marked fewer and ran slower
   (lesson 03, Pitfalls; EXPERIMENTS.md): a compiler that allocates the
   registers differently fails this check, and the timing is worth a new look.

This reads the fast-path kernels (the tiles divide the matrices) of the
built chapter program and finds each one's main loop (the backward branch
around most of its FFMA).

Usage: sass_claims.py [--cuobjdump CUOBJDUMP] [--nvcc NVCC] BINARY
Exit 0: all as claimed; 1: not; 77 (skipped): no cuobjdump / nvdisasm, or
no sm_90 code in the binary.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import sass as machine_code  # noqa: E402  (tools/sass.py)

ARCH = "sm_90"
LOADS = ("LDG", "LDGSTS")  # global loads, and global -> shared copies (cp.async)
# (kernel, where the claim puts the loop's global loads: "after" or "before" the math, checks reuse)
CLAIMS = [("sgemm_double_buffer", "after", False), ("sgemm_async_copy", "before", True),
          ("sgemm_deep_slices", "before", True)]
SHARE = 0.9  # "after the math": at least this share of the loop's FFMA come before the first load
REUSE = 0.83  # .reuse operands per FFMA: 0.86-0.87 as measured, 0.77-0.79 written with t % 2


def check(kernel, where, reuse, loop):
    """Prints what the loop holds; returns the number of claims that fail."""
    ops = [op for _, op, _ in loop]
    ffma = [i for i, op in enumerate(ops) if op == "FFMA"]
    loads = [i for i, op in enumerate(ops) if op in LOADS]
    if not ffma or not loads:
        print(f"{kernel}: main loop with {len(ffma)} FFMA and {len(loads)} global loads: nothing to compare")
        return 1
    before = sum(i < loads[0] for i in ffma)  # FFMA before the loop's first global load
    after = sum(i > loads[-1] for i in ffma)  # and after its last
    ok = before >= SHARE * len(ffma) if where == "after" else after >= SHARE * len(ffma)
    print(f"{kernel}: main loop {len(loop)} instructions, {len(ffma)} FFMA, {len(loads)} global loads; "
          f"{before} FFMA before the first load, {after} after the last "
          f"({'loads ' + where + ' the math, as claimed' if ok else 'NOT as claimed: loads ' + where + ' the math'})")
    failures = not ok
    if reuse:
        share = machine_code.reuse_share(loop)
        good = share >= REUSE
        failures += not good
        print(f"{kernel}: {share:.2f} .reuse operands per FFMA "
              f"({'>= ' + str(REUSE) + ', as claimed' if good else 'NOT as claimed: under ' + str(REUSE)})")
    return failures


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
    for kernel, where, reuse in CLAIMS:
        # The fast path: template argument kChecked = false (mangled "Lb0E").
        names = [n for n in funcs if kernel in n and "Lb0E" in n]
        if len(names) != 1:
            print(f"{kernel}: expected one fast-path function, found {len(names)}")
            failures += 1
            continue
        failures += check(kernel, where, reuse, machine_code.main_loop(funcs[names[0]]))
    print("v8 to v10 as the lesson says" if failures == 0 else f"{failures} claim(s) not as the lesson says")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
