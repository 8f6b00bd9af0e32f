"""A killable parameter study for the store tests: the IFToMM A01 pendulum of
examples/sweep_pendulum.py over rod lengths, run serially in a subprocess that the test kills, then
resumed.

The study file logs every call of ``build`` (``calls.txt``: the parameter-set key) and every run
whose outputs were computed (``finished.txt``: key and time); ``build`` hangs for the lengths
listed in ``hang.txt`` while that file exists."""
from __future__ import annotations

import importlib
import importlib.util
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "sweep_pendulum.py"



def needs(*modules: str):
    """Skip mark for tests that need the `sweep` extra's modules, found without importing them: pandas,
    dask.distributed and pyarrow cost each pytest process ~4 s of CPU to import at collection."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)} (pip install -e '.[sweep]')")


def pandas():
    """pandas, imported when a test uses it (not at collection)."""
    return importlib.import_module("pandas")


STUDY = """
import os, time, importlib.util
spec = importlib.util.spec_from_file_location("_ex", {example!r})
ex = importlib.util.module_from_spec(spec); spec.loader.exec_module(ex)
from flexmb.studies import parameter_key

def build(length):
    with open({calls!r}, "a") as f:
        f.write(parameter_key({{"length": length}}) + "\\n")
    if os.path.exists({hang!r}) and length in [float(v) for v in open({hang!r}).read().split()]:
        time.sleep(600)
    return ex.build(length)

def outputs(sol, length):
    out = ex.outputs(sol, length)
    with open({finished!r}, "a") as f:
        f.write(f"{{parameter_key({{'length': length}})}} {{time.time()}}\\n")
    return out
"""

RUN = """
import sys, importlib.util
sys.path.insert(0, {root!r})
import flexmb as fm
spec = importlib.util.spec_from_file_location("study", {study!r})
study = importlib.util.module_from_spec(spec); spec.loader.exec_module(study)
fm.sweep(study.build, {{"length": {lengths!r}}}, study.outputs, scheduler=None, store={store!r}, progress=False,
         **{kwargs!r})
"""


def exact_period(lengths) -> np.ndarray:
    """4 K(1/2) sqrt(L/g) [s] (the pendulum released horizontally)."""
    return 4 * 1.8540746773013719 * np.sqrt(np.asarray(lengths, dtype=float) / 9.81)


class Study:
    """The files of one killable study in ``tmp``; ``kwargs``: more arguments of the killed sweep."""

    def __init__(self, tmp: Path, lengths: list[float], **kwargs):
        self.lengths, self.store = list(lengths), tmp / "results.parquet"
        self.calls, self.finished, self.hang = tmp / "calls.txt", tmp / "finished.txt", tmp / "hang.txt"
        self.study = tmp / "study.py"
        self.study.write_text(STUDY.format(example=str(EXAMPLE), calls=str(self.calls), hang=str(self.hang),
                                           finished=str(self.finished)))
        self.script = tmp / "run.py"
        self.script.write_text(RUN.format(root=str(ROOT), study=str(self.study), lengths=self.lengths,
                                          store=str(self.store), kwargs=kwargs))

    def start(self) -> subprocess.Popen:
        """The sweep, serially, in a new process."""
        return subprocess.Popen([sys.executable, str(self.script)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    @staticmethod
    def _keys(path: Path) -> list[str]:
        return [line.split()[0] for line in path.read_text().splitlines() if line.strip()] if path.exists() else []

    def finished_keys(self) -> list[str]:
        return self._keys(self.finished)

    def called_keys(self) -> list[str]:
        return self._keys(self.calls)

    def wait(self, proc: subprocess.Popen, done, timeout: float = 180.0) -> None:
        """Until ``done()`` is true; fails with the process's stderr if it ended first."""
        deadline = time.monotonic() + timeout
        while not done() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert done(), proc.stderr.read().decode()[-3000:] if proc.poll() is not None else "timeout"

    def module(self):
        """The study file imported in this process (a fresh module each time)."""
        spec = importlib.util.spec_from_file_location(f"_flexmb_test_study_{time.time_ns()}", self.study)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module


def kill(proc: subprocess.Popen) -> None:
    """kill -9 and reap."""
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
