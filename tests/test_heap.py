"""flexmb.dynamics.solve.heap: freed blocks of the C heap kept for reuse (glibc), so that the large work
arrays of every Newton iteration are not page-faulted in again; the opt-out."""
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.solve import heap

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"

#: minor page faults per round of allocating, touching and freeing blocks of 0.3-3 MB (the sizes of a large
#: model's work arrays), printed by a fresh process; ``sys.argv[1]``: whether to call keep_freed_blocks first
PROBE = """
import resource, sys
import numpy as np
from flexmb.dynamics.solve import heap
applied = heap.keep_freed_blocks() if sys.argv[1] == "1" else None
def rounds(n):
    for _ in range(n):
        blocks = []
        for size in (300_000, 1_200_000, 3_000_000, 400_000, 2_000_000):
            a = np.empty(size // 8)
            a[::512] = 1.0  # every page touched
            blocks.append(a)
        del a
        while blocks:
            blocks.pop()
rounds(1)
r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
rounds(20)
print(applied, (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0) / 20)
"""


def _probe(apply: bool, **env) -> tuple[str, float]:
    out = subprocess.run([sys.executable, "-c", PROBE, "1" if apply else "0"], capture_output=True, text=True,
                         env={**os.environ, **env}, check=True).stdout.split()
    return out[0], float(out[1])


@pytest.mark.skipif(not GLIBC, reason="the thresholds are glibc's")
def test_freed_blocks_are_reused_without_page_faults():
    # glibc's defaults: blocks mapped afresh / the heap top trimmed and grown again, every page faulted in
    # (~1,650 faults per round here: 7 MB)
    assert _probe(False)[1] > 300
    applied, faults = _probe(True)
    assert applied == "True" and faults < 20
    applied, faults = _probe(True, FLEXMB_MALLOC="default")  # the opt-out: glibc's defaults
    assert applied == "False" and faults > 300


@pytest.mark.skipif(not GLIBC, reason="the thresholds are glibc's")
def test_a_run_sets_the_thresholds():
    """Every run starts by it (Run.__init__); the conftest's warm-up model (its kernels compiled)."""
    bob = fm.RigidBody("bob", mass=1.0, inertia=np.full(3, 1e-3), position=(-1.0, 0.0, 0.0))
    pin = fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))
    spring = fm.SpringDamper("s", "ground", "bob", stiffness=10.0, damping=0.1, point_a=(0, 1, 0))
    fm.simulate(fm.Model([bob], [pin], [fm.Gravity((0, -9.81, 0)), spring]), 0.04, 0.02, p=2, show_progress=False)
    assert heap._done is True


def test_opt_out_leaves_the_heap_alone(monkeypatch):
    calls = []
    monkeypatch.setattr(heap, "_done", None)
    monkeypatch.setenv("FLEXMB_MALLOC", "default")
    monkeypatch.setattr(heap.ctypes, "CDLL", lambda *a: calls.append(a))
    assert heap.keep_freed_blocks() is False and heap._done is False
    assert calls == []  # mallopt never looked up
