"""The OpenBLAS thread-count handles of :func:`flexmb.fe.spd_solve.blas_threads` are kept between calls
(reading ``/proc/self/maps`` cost 2.2 ms, twice per ``simulate``) and looked up again once a module has
been imported since (an OpenBLAS library comes with the extension module that links it)."""
from __future__ import annotations

import sys
import types

from flexmb.fe import spd_solve


def test_handles_kept_and_rescanned_after_an_import():
    first = spd_solve._openblas_handles()
    assert spd_solve._openblas_handles() is first  # kept: no import since
    kept = spd_solve._SCAN[0]
    sys.modules["_flexmb_test_new_module"] = types.ModuleType("_flexmb_test_new_module")
    try:
        again = spd_solve._openblas_handles()  # a module was imported: the maps are read again
        assert spd_solve._SCAN[0] == kept + 1
        assert [h[0].__name__ for h in again] == [h[0].__name__ for h in first]
    finally:
        del sys.modules["_flexmb_test_new_module"]
    if sys.platform.startswith("linux"):
        with open("/proc/self/maps") as fh:
            loaded = {line.split()[-1] for line in fh if "openblas" in line.lower() and ".so" in line}
        assert len(first) == len(loaded)  # numpy's and scipy's OpenBLAS here, each found
    saved = [get() for get, _ in first]
    for _, set_ in first:  # a count to restore (the tests run with OPENBLAS_NUM_THREADS=1: conftest)
        set_(2)
    try:
        before = [get() for get, _ in first]
        with spd_solve.blas_threads(1):
            assert all(get() == 1 for get, _ in first)
        assert [get() for get, _ in first] == before == [2] * len(first)
    finally:
        for (_, set_), n in zip(first, saved):
            set_(n)
