"""Shared fixtures: small models used across the engine tests; the kernel warm-up of parallel runs."""
from __future__ import annotations

import os
import sys
from pathlib import Path

# one OpenBLAS thread per test process (before numpy loads it; the xdist workers inherit the variable):
# two workers on two cores each with a second BLAS thread spinning after every call outside simulate's own
# limit (flexmb.fe.spd_solve.blas_threads) took 6-13 % more CPU for the same tests (fast suite, alternating
# runs: 160 and 172 s wall with it against 186 s without).  A shell's own setting is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pytest

# pytest keeps its assertion-rewritten test modules in tests/__pycache__ (git-ignored), unless writing
# bytecode is off (PYTHONDONTWRITEBYTECODE=1, as in some shells and CI images): then every process, each
# xdist worker included, parses and rewrites all ~120 test modules again at every run, ~6 s of CPU per
# worker (2/3 of its collection).  This conftest is imported before any test module, so the cache is
# written on the first run and read on every later one.
sys.dont_write_bytecode = False

from flexmb.model import Gravity, Model, Revolute, RigidBody


def bar_inertia(m: float, L: float, r: float = 0.01) -> np.ndarray:
    """Principal inertia of a slender cylindrical bar along its x axis [kg m^2]."""
    return np.array([0.5 * m * r * r, m * (3 * r * r + L * L) / 12, m * (3 * r * r + L * L) / 12])


@pytest.fixture
def pendulum():
    """IFToMM A01: 1 kg point mass (tiny inertia) on a massless 1 m rod, released horizontally at x = -1."""
    body = RigidBody("mass", mass=1.0, inertia=np.full(3, 1e-3), position=(-1.0, 0.0, 0.0))
    pin = Revolute("pin", "ground", "mass", point=(0, 0, 0), axis=(0, 0, 1))
    return Model([body], [pin], [Gravity((0, -9.81, 0))])


# ------------------------------------------------------------------ parallel runs (pytest-xdist, `make test`)
def _xdist_controller(config) -> bool:
    """True in the process that starts pytest-xdist workers (``-n N``, N > 0), before it starts them."""
    return (getattr(config, "workerinput", None) is None and config.pluginmanager.hasplugin("xdist")
            and bool(getattr(config.option, "numprocesses", 0)) and config.option.dist != "no")


def _warm_kernels() -> str:
    """Compile (cold cache) or load (warm) the kernels of a rigid run in this process (the fused Newton
    loop, the element, joint, force and body laws, the node projection) and, at the same time on the other
    core, those of a modal run (tests/warm_modal.py: the FE reduction, the modal laws and node stage).  On a cold cache (a clean clone,
    CI) the workers would otherwise compile the same kernels at the same time, each on its own core
    (numba's cache stays consistent then, but the work is done twice); after this they load them.
    Returns what was done, for the report header."""
    import time

    import flexmb as fm

    import subprocess
    import sys
    from pathlib import Path

    t0, c0 = time.perf_counter(), time.process_time()
    # a modal run's kernels in a process of its own, on the other core (tests/warm_modal.py)
    modal = subprocess.Popen([sys.executable, str(Path(__file__).with_name("warm_modal.py"))],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    bob = RigidBody("bob", mass=1.0, inertia=np.full(3, 1e-3), position=(-1.0, 0.0, 0.0))
    pin = Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))
    spring = fm.SpringDamper("s", "ground", "bob", stiffness=10.0, damping=0.1, point_a=(0, 1, 0))
    fm.simulate(Model([bob], [pin], [Gravity((0, -9.81, 0)), spring]), 0.1, 0.02, p=2)
    rigid = time.perf_counter() - t0
    status = modal.wait()  # (a failure there is the tests' to report: the workers compile what is missing)
    return (f"flexmb kernels of a rigid run and (alongside, exit {status}) a modal run compiled or loaded before the "
            f"workers start: {rigid:.1f} / {time.perf_counter() - t0:.1f} s wall, {time.process_time() - c0:.1f} s CPU here")


#: what the last warm-up left (next to the kernels' cache): the kernels' fingerprint and the cache index
#: files it found, one per line
WARM_MARKER = "flexmb-warm.stamp"


def _warm_record() -> tuple:
    """``(marker path, the kernels' fingerprint, the cache index files of the kernels' cache directories)``;
    the path None where the cache cannot be located (a read-only tree, NUMBA_DISABLE_JIT)."""
    from flexmb import numba_cache

    try:
        files = numba_cache.kernel_sources()
        dirs = sorted({d for d in (numba_cache.cache_dir(f) for f in files) if d is not None})
        fp = numba_cache.fingerprint(files)
    except Exception:  # noqa: BLE001 - no marker: the warm-up runs
        return None, "", []
    index = sorted(str(f) for d in dirs if d.is_dir() for f in d.glob("*.nbi"))
    return (Path(dirs[0]) / WARM_MARKER if dirs else None), fp, index


def _cache_is_warm() -> bool:
    """Whether the last warm-up's kernels are still cached as it left them: its marker holds this tree's
    kernel fingerprint and every cache index file it found is there (a kernel edit, a clean clone or a
    removed ``__pycache__`` fails the test, and the warm-up runs)."""
    marker, fp, _ = _warm_record()
    try:
        lines = marker.read_text().splitlines() if marker is not None else []
    except OSError:
        return False
    return bool(lines) and lines[0] == fp and len(lines) > 1 and all(Path(f).is_file() for f in lines[1:])


def pytest_configure(config):
    if _xdist_controller(config) and os.environ.get("FLEXMB_TEST_WARMUP", "1") != "0":
        # a warm cache (the kernels as the last warm-up cached them): the workers load them, nothing to
        # compile first (the warm-up itself costs ~4 s of wall time then: imports and loads only)
        if _cache_is_warm():
            config._flexmb_warmup = "flexmb kernels cached as the last warm-up left them: no warm-up"
            return
        config._flexmb_warmup = _warm_kernels()
        marker, fp, index = _warm_record()
        if marker is not None and index:
            try:
                marker.write_text("\n".join([fp] + index) + "\n")
            except OSError:
                pass


def pytest_terminal_summary(terminalreporter, config):
    note = getattr(config, "_flexmb_warmup", None)
    if note:
        terminalreporter.write_line(note)
