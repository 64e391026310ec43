"""Parameter sweeps on Dask distributed (``ipcsim sweep SPEC``; docs/sweeps.md).

    from ipcsim.sweep import run_sweep
    result = run_sweep("examples/sweeps/two_cubes_sweep.json", workers=2)   # or address="tcp://host:8786"
    result.table       # OUT/summary.csv: one row per run (parameters, status, steps, Newton iterations, metrics)

Needs the ``distributed`` package (``pip install ipcsim[sweep]``; ``[test]`` installs it too); only
``run_sweep`` imports it.
"""
from .engine import SweepResult, run_sweep
from .spec import SpecError, SweepSpec, load_spec, spec_from_dict

__all__ = ["run_sweep", "SweepResult", "load_spec", "spec_from_dict", "SweepSpec", "SpecError"]
