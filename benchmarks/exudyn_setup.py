"""The Exudyn side shared by benchmarks/compare_exudyn.py and benchmarks/flexible.py: the optional
import and the solver settings of every comparison.

Exudyn is an optional extra (``pip install exudyn``, or ``flexmb[bench]``): without it ``exu`` is
None, and the scripts still import and answer ``--help``. They import the Exudyn items they need
(``exudyn.itemInterface``, ``exudyn.FEM``, ...) only when ``exu`` is not None.

Settings everywhere: generalized-alpha (``GeneralizedAlpha``, spectral radius 0.9),
``LinearSolverType.EigenSparse``, modified Newton, fixed step (``adaptiveStep = False``), no
solution file, sensors stored in memory only. All other settings are Exudyn's defaults.
"""
from __future__ import annotations

try:
    import exudyn as exu
except ImportError:  # reported by the scripts' main()
    exu = None


def exudyn_settings(h: float, t_end: float, sensor_period: float = 0.5):
    """``exu.SimulationSettings`` for a fixed step ``h`` [s] to ``t_end`` [s], sensors recorded every
    ``sensor_period`` [s] (in memory)."""
    s = exu.SimulationSettings()
    ti = s.timeIntegration
    ti.numberOfSteps = int(round(t_end / h))
    ti.endTime = t_end
    ti.generalizedAlpha.spectralRadius = 0.9
    ti.newton.useModifiedNewton = True
    ti.adaptiveStep = False
    ti.verboseMode = 0
    s.linearSolver.solverType = exu.LinearSolverType.EigenSparse
    s.solution.file.write = False
    s.solution.sensors.writePeriod = sensor_period
    return s
