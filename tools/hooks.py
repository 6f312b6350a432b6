"""Chapter hooks: what only one chapter draws lives in its own folder.

A chapter folder may hold chapters/NN_topic/figures.py with any of:

  charts(runs, machine, out_dir, plt) -> [png paths]
      Charts drawn from results. `runs` maps each run key of this chapter on
      that machine ("NN", "NN@LABEL" for each bench_shapes line, ...) to its run object
      (docs/results.md); `plt` is matplotlib.pyplot (Agg backend). Called by
      `tools/results.py render` (so by `./tutorial bench`).
  diagrams(out_dir, plt) -> [png paths]
      Pictures that need no results (access patterns, tiles, pipelines).
      Called by `/usr/bin/python3 tools/figures.py .`.
  shapes(runs) -> [(name, run)]
      The lines of the lesson's shapes table (<!-- results:NN-shapes:... -->),
      the default run first. Without this hook: the default run, then every
      labelled run under its label.
  ROWS = ("row", ...)
      Every row name the hook reads: `./tutorial check` validates them
      against the chapter's registry (its program's --list).

A hook that cannot draw because the runs lack a field it needs (results
written before the field existed) raises LookupError with the reason: the
caller prints one line and leaves that figure or table as it is.
"""
import importlib.util
import os


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
