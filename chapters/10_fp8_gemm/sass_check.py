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
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile

# (name, nvcc architecture flags, instruction that must be there, instruction that must not)
CASES = [
    ("sm_89", ["-gencode", "arch=compute_89,code=sm_89"], "QMMA", "HMMA"),
    ("sm_90a", ["-gencode", "arch=compute_90a,code=sm_90a"], "HMMA", "QMMA"),
]
KERNEL = "fp8_gemm_mma_sync"


def find_tool(name, given, near):
    """A CUDA binary: as given, on PATH, beside nvcc, or from the PyPI wheels."""
    if given and os.path.isfile(given):
        return given
    found = shutil.which(name) or shutil.which(name, path=os.path.dirname(near))
    if found:
        return found
    for site in dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *sys.path]):
        hits = sorted(glob.glob(os.path.join(site, "nvidia", "*", "bin", name)))
        if hits:
            return hits[-1]
    return None


def opcodes(sass, kernel):
    """Opcode counts (without modifiers) of the function whose name contains `kernel`."""
    counts, inside = {}, False
    for line in sass.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            inside = kernel in m.group(1)
            continue
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", line)
        if inside and m:
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nvcc", required=True)
    ap.add_argument("--cuobjdump")
    ap.add_argument("-I", dest="includes", action="append", default=[])
    ap.add_argument("source")
    args = ap.parse_args()
    cuobjdump = find_tool("cuobjdump", args.cuobjdump, args.nvcc)
    nvdisasm = find_tool("nvdisasm", None, args.nvcc)
    if not cuobjdump or not nvdisasm:
        print("SKIPPED: cuobjdump and nvdisasm are needed (the CUDA toolkit's, or pip install "
              "nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)")
        return 77
    env = dict(os.environ, PATH=os.path.dirname(nvdisasm) + os.pathsep + os.environ.get("PATH", ""))
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
            sass = subprocess.run([cuobjdump, "-sass", cubin], check=True, capture_output=True, text=True,
                                  env=env).stdout
            ops = opcodes(sass, KERNEL)
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
