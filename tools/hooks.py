"""Chapter hooks: what only one chapter draws lives in its own folder.

A chapter folder may hold chapters/NN_topic/figures.py with any of:

  charts(runs, machine, out_dir, kit) -> [png paths]
      Charts drawn from results. `runs` maps each run key of this chapter on
      that machine ("NN", "NN@LABEL" for each bench_shapes line, ...) to its run object
      (docs/results.md); `kit` is a Kit (below). Called by
      `tools/results.py render` (so by `./tutorial bench`).
  diagrams(out_dir, kit) -> [png paths]
      Pictures that need no results (access patterns, tiles, pipelines).
      Called by `/usr/bin/python3 tools/figures.py .`.
  memory_roof(machine_runs) -> (GB/s, label) or None
      The bandwidth a real copy reaches on that machine, read from this
      chapter's runs among `machine_runs` (every run of the machine file):
      the slanted roof of every chapter's roofline (Kit.memory_roof).
  shapes(runs) -> [(name, run)]
      The lines of the lesson's shapes table (<!-- results:NN-shapes:... -->),
      the default run first. Without this hook: the default run, then every
      labelled run under its label.
  ROWS = ("row", ...)
      Every row name the hook reads: `./tutorial check` validates them
      against the chapter's registry (its program's --list).

A hook gets what it draws with as an argument, the Kit, and imports nothing
from tools/: tools/ is not on a chapter's import path.

A hook that cannot draw because the runs lack a field it needs (results
written before the field existed) raises LookupError with the reason: the
caller prints one line and leaves that figure or table as it is.
"""
import importlib.util
import os

import charts
import course


def load(root, folder):
    """The chapter's hook module, or None when it has none."""
    path = os.path.join(root, "chapters", folder, "figures.py")
    if not os.path.isfile(path):
        return None
    spec = importlib.util.spec_from_file_location("steps_hook_" + folder, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def call(module, name, where, *args):
    """module.name(*args), or None when the hook does not exist or raises LookupError (said in one line)."""
    fn = getattr(module, name, None) if module else None
    if fn is None:
        return None
    try:
        return fn(*args)
    except LookupError as e:
        print(f"results: {where}: {name}() left as it was: {e}")
        return None


class Kit:
    """What a chapter hook draws with (its last argument):

      kit.plt                       matplotlib.pyplot (Agg backend)
      kit.save_chart(plt, fig, ax, out_png), kit.save_diagram(plt, fig, out_dir, name)
                                    the charts' and diagrams' common endings (charts.py)
      kit.roofline(...)             a roofline chart (charts.roofline), its points from a run's rows
                                    (kit.roofline_points, or one row: kit.point) and a run's own peak as a
                                    fallback roof (kit.peak_roof)
      kit.machine_runs              every run of the machine file being drawn, by run key ({} for diagrams)
      kit.gpu                       that file's GPU block (None for diagrams)
      kit.memory_roof()             (GB/s, label): the measured copy bandwidth of the same file
                                    (a chapter's memory_roof hook), else the GPU's theoretical peak
      kit.compute_roof(kind, run)   (TFLOP/s, label) from the GPU's architecture block of the run
                                    (else of the file): "fp32", or a tensor type ("fp16", "bf16",
                                    "fp8"); None where the block or the type is absent
    """

    def __init__(self, plt, root=None, data=None):
        self.plt = plt
        self.root = root
        self.machine_runs = dict(data["chapters"]) if data else {}
        self.gpu = data.get("gpu") if data else None
        self.save_chart = charts.save_chart
        self.save_diagram = charts.save_diagram
        self.roofline = charts.roofline
        self.roofline_points = charts.roofline_points
        self.peak_roof = charts.peak_roof
        self.point = charts.point

    def memory_roof(self):
        if self.root:
            for c in course.chapters(self.root):
                got = call(load(self.root, c.folder), "memory_roof", f"chapters/{c.folder}/figures.py",
                           self.machine_runs)
                if got:
                    return got
        bw = (self.gpu or {}).get("peak_bandwidth_gbs")
        return (bw, "DRAM peak (theoretical)") if bw else None

    def compute_roof(self, kind, run=None):
        gpu = (run or {}).get("gpu") or self.gpu or {}
        arch = gpu.get("arch") or {}
        clock = gpu.get("run_sm_clock_mhz")
        at = f", {clock} MHz" if clock else ""
        if kind == "fp32":
            v = arch.get("fp32_tflops")
            return (v, f"FP32 peak ({arch.get('sm', 'arch table')}{at})") if v else None
        v = (arch.get("tensor_tflops") or {}).get(kind)
        return (v, f"{kind.upper()} tensor peak, dense ({arch.get('sm', 'arch table')}{at})") if v else None
