"""Reading machine code (SASS) for the lessons' host tests: no GPU needed.

A lesson that says what the compiler made of a kernel ("the loads come after
the math", "this is one QMMA") checks it with a small script beside the
chapter that imports this module:

    parser(doc), found_or_skip(args)           a check's options (--nvcc, --cuobjdump) and tools
    find_tool("cuobjdump", given, near_nvcc)   the CUDA binary, wherever it is
    disassemble(path, arch=None)               cuobjdump -sass of a binary or cubin
    functions(sass)                            {mangled name: [(address, opcode, operands), ...]}
    opcodes(sass, kernel)                      {opcode: count} of the function named *kernel*
    main_loop(code)                            the instructions of a function's hottest loop
    reuse_share(code, opcode)                  operands read from the reuse cache, per instruction

cuobjdump and nvdisasm come with the CUDA toolkit, or from PyPI
(nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm); a script skips (exit 77) when
they are missing.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig

SKIP = 77
MISSING = ("SKIPPED: cuobjdump and nvdisasm are needed (the CUDA toolkit's, or pip install "
           "nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)")

_FUNCTION = re.compile(r"\s*Function : (\S+)")
# "/*0330*/  @!P0 LDG.E.128.CONSTANT R84, ..." -> address 0x330, opcode LDG
_INSTRUCTION = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)([^;]*);")


def find_tool(name, given=None, near=None):
    """A CUDA binary: as given, on PATH, beside `near` (nvcc), or from the PyPI wheels."""
    if given and os.path.isfile(given):
        return given
    found = shutil.which(name) or (near and shutil.which(name, path=os.path.dirname(near)))
    if found:
        return found
    for site in dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *sys.path]):
        hits = sorted(glob.glob(os.path.join(site, "nvidia", "*", "bin", name)))
        if hits:
            return hits[-1]
    return None


def tools(given=None, near=None):
    """(cuobjdump, nvdisasm), or None when either is missing."""
    cuobjdump, nvdisasm = find_tool("cuobjdump", given, near), find_tool("nvdisasm", None, near)
    return (cuobjdump, nvdisasm) if cuobjdump and nvdisasm else None


def parser(doc):
    """A check's argument parser: its docstring's first line, --nvcc (where
    to look for the tools) and --cuobjdump (CMake's find, if any)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--nvcc")
    ap.add_argument("--cuobjdump")
    return ap


def found_or_skip(args):
    """tools() for the parsed options, or None after printing the skip line."""
    found = tools(args.cuobjdump, args.nvcc)
    if not found:
        print(MISSING)
    return found


def disassemble(found, path, arch=None):
    """cuobjdump -sass of `path` (a binary or a cubin), for one architecture
    ("sm_90") or all; `found` is what tools() returned."""
    cuobjdump, nvdisasm = found
    env = dict(os.environ, PATH=os.path.dirname(nvdisasm) + os.pathsep + os.environ.get("PATH", ""))
    cmd = [cuobjdump, "-sass"] + (["-arch", arch] if arch else []) + [path]
    return subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout


def functions(sass):
    """{mangled function name: [(address, opcode without modifiers, the rest up to ';'), ...]}
    in address order."""
    out, current = {}, None
    for line in sass.splitlines():
        m = _FUNCTION.match(line)
        if m:
            current = out.setdefault(m.group(1), [])
            continue
        m = _INSTRUCTION.match(line)
        if m and current is not None:
            current.append((int(m.group(1), 16), m.group(2), m.group(3).strip()))
    return out


def opcodes(sass, kernel):
    """Opcode counts of the functions whose name contains `kernel`."""
    counts = {}
    for name, code in functions(sass).items():
        if kernel in name:
            for _, op, _ in code:
                counts[op] = counts.get(op, 0) + 1
    return counts


def main_loop(code):
    """The instructions [(address, opcode, operands), ...] of the backward
    branch's range that holds the most FFMA: a GEMM kernel's main loop."""
    best = []
    for address, op, operands in code:
        if op != "BRA" or not operands.startswith("0x"):
            continue
        target = int(operands.split()[0], 16)
        if target < address:
            body = [i for i in code if target <= i[0] <= address]
            if sum(i[1] == "FFMA" for i in body) > sum(i[1] == "FFMA" for i in best):
                best = body
    return best


def reuse_share(code, opcode="FFMA"):
    """Source operands marked .reuse (read from the operand reuse cache, not
    the register file) per `opcode` instruction of `code`; 0 when there is none."""
    hits = [operands.count(".reuse") for _, op, operands in code if op == opcode]
    return sum(hits) / len(hits) if hits else 0.0
