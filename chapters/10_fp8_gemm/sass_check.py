#!/usr/bin/env python3
"""Lesson 10's claim about v2, checked in the machine code (no GPU needed).

FP8 mma.sync (m16n8k32 E4M3) is native on sm_89 (Ada: RTX 40, L4, L40S): one
QMMA instruction. On sm_90a (Hopper) the compiler converts the E4M3 operands
to FP16 and issues HMMA (FP16 tensor-core) instructions instead: Hopper's FP8
tensor cores are reached only through wgmma. This compiles v2_mma_sync.cuh
for both, disassembles the kernel with cuobjdump -sass and checks which
tensor-core instruction each one has.

Usage: sass_check.py --nvcc NVCC [--cuobjdump CUOBJDUMP] -I DIR ... SOURCE
Exit 0: both as claimed; 1: not; 77 (skipped): no cuobjdump (it comes with
the CUDA toolkit, or from PyPI as nvidia-cuda-cuobjdump and
nvidia-cuda-nvdisasm).
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import sass as machine_code  # noqa: E402  (tools/sass.py)

# (name, nvcc architecture flags, instruction that must be there, instruction that must not)
CASES = [
    ("sm_89", ["-gencode", "arch=compute_89,code=sm_89"], "QMMA", "HMMA"),
    ("sm_90a", ["-gencode", "arch=compute_90a,code=sm_90a"], "HMMA", "QMMA"),
]
KERNEL = "fp8_gemm_mma_sync"


def main():
    ap = machine_code.parser(__doc__)
    ap.add_argument("-I", dest="includes", action="append", default=[])
    ap.add_argument("source")
    args = ap.parse_args()
    if not args.nvcc:
        ap.error("--nvcc is required: v2 is compiled for each architecture")
    found = machine_code.found_or_skip(args)
    if not found:
        return machine_code.SKIP
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        unit = os.path.join(tmp, "v2.cu")  # a translation unit that includes the header
        with open(unit, "w") as f:
            f.write(f'#include "{os.path.abspath(args.source)}"\n')
        for name, arch, want, unwanted in CASES:
            cubin = os.path.join(tmp, name + ".cubin")
            cmd = [args.nvcc, "-std=c++17", "-O3", "-cubin", *arch, "-o", cubin, unit]
            cmd[1:1] = [f"-I{d}" for d in args.includes]
            subprocess.run(cmd, check=True)
            ops = machine_code.opcodes(machine_code.disassemble(found, cubin), KERNEL)
            if not ops:
                print(f"{name}: no function {KERNEL} in the machine code")
                failures += 1
                continue
            n_want, n_unwanted = ops.get(want, 0), ops.get(unwanted, 0)
            ok = n_want > 0 and n_unwanted == 0
            failures += not ok
            print(f"{name}: {KERNEL} has {n_want} {want} and {n_unwanted} {unwanted} "
                  f"({'as claimed' if ok else f'expected {want} only'}; F2FP conversions: {ops.get('F2FP', 0)})")
    print("v2 as the lesson says" if failures == 0 else f"{failures} of {len(CASES)} architectures not as the lesson says")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
