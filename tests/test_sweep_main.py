"""A sweep on a local cluster started from each kind of main program: a script with the
``if __name__ == "__main__":`` guard, a script without it (one clear error before any worker
starts, instead of hundreds of lines ending in "Nanny failed to start"), a script read from standard
input (before: FileNotFoundError on '<stdin>' in every worker) and ``python -c``.

Each case is a Python process of its own running one 1-worker sweep of the IFToMM A01 pendulum
(period 2.367842 s for L = 1 m); the processes run side by side.  The unguarded script (refused
before any worker starts) is a fast test; the three that start a cluster (the guarded script and
``python -c``, which worked before, and standard input) are a slow test; the unit tests below check
the decisions behind all four."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sweep_study import needs  # noqa: E402

pytestmark = needs("pandas", "distributed")

from flexmb.errors import ModelError  # noqa: E402
from flexmb.studies import mainscript  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

HEAD = f"""\
import sys, importlib.util
sys.path.insert(0, {str(ROOT)!r})
spec = importlib.util.spec_from_file_location("_ex", {str(ROOT / "examples" / "sweep_pendulum.py")!r})
ex = importlib.util.module_from_spec(spec); spec.loader.exec_module(ex)
import flexmb as fm
"""
SWEEP = """df = fm.sweep(ex.build, {"length": [1.0]}, ex.outputs, workers=1, progress=False)
print(df[["length", "period", "status"]].to_string(index=False))
"""
UNGUARDED = HEAD + SWEEP
GUARDED = HEAD + 'if __name__ == "__main__":\n' + textwrap.indent(SWEEP, "    ")


def _run_side_by_side(tmp_path, names: list[str]) -> dict:
    """Run the named cases, each in a Python process of its own, side by side; (process, out, err)."""
    (tmp_path / "guarded.py").write_text(GUARDED)
    (tmp_path / "unguarded.py").write_text(UNGUARDED)
    py = [sys.executable]
    cases = {"guarded": (py + [str(tmp_path / "guarded.py")], None),
             "unguarded": (py + [str(tmp_path / "unguarded.py")], None),
             "stdin": (py + ["-"], UNGUARDED),
             "python -c": (py + ["-c", UNGUARDED], None)}
    procs = {name: subprocess.Popen(cases[name][0], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, cwd=tmp_path, text=True) for name in names}
    return {name: (proc, *proc.communicate(cases[name][1], timeout=600)) for name, proc in procs.items()}


def _assert_ran(name: str, proc, out: str, err: str) -> None:
    assert proc.returncode == 0 and "Traceback" not in err, (name, err[-3000:])
    assert out.split("\n")[1].split() == ["1.0", "2.367842", "ok"], (name, out)  # 4 K(1/2) sqrt(1/9.81)


def test_unguarded_script_says_what_to_add(tmp_path):
    proc, out, err = _run_side_by_side(tmp_path, ["unguarded"])["unguarded"]
    assert proc.returncode == 1 and out == ""
    assert err.count("Traceback") == 1 and "Nanny" not in err and len(err.splitlines()) < 25, err
    message = err.split("flexmb.errors.ModelError: ", 1)[1]
    assert f"main script {tmp_path / 'unguarded.py'}" in message and "its line 6, which starts this sweep" in message
    assert 'if __name__ == "__main__":\n        df = fm.sweep(' in message and "scheduler=None" in message


# three local clusters (~7 s of CPU each: a process that imports flexmb, dask and pandas, a nanny and a
# worker that loads the kernels); the decisions behind them are the fast unit tests below: the guard
# lines (test_which_lines_...), '<stdin>' hidden from the spawned workers (test_no_check_without_...)
@pytest.mark.slow
def test_guarded_script_stdin_and_python_c_run(tmp_path):
    for name, result in _run_side_by_side(tmp_path, ["guarded", "stdin", "python -c"]).items():
        _assert_ran(name, *result)


@pytest.mark.parametrize("source, guarded", [
    ('if __name__ == "__main__":\n    run()\n', True),
    ("if '__main__' == __name__:\n    x = 1\n    run()\n", True),
    ('if __name__ != "__main__":\n    pass\nelse:\n    run()\n', True),
    ("import multiprocessing as mp\nif mp.current_process().name == 'MainProcess':\n    run()\n", True),
    ('def main():\n    run()\n\nrun()\n', False),
    ('if True:\n    run()\n', False),
    ('try:\n    run()\nfinally:\n    pass\n', False),
])
def test_which_lines_a_worker_re_running_the_script_skips(tmp_path, source, guarded):
    path = tmp_path / "s.py"
    path.write_text(source)
    line = next(i for i, text in enumerate(source.splitlines(), 1) if text.strip() == "run()")
    assert mainscript._guarded(str(path), line) is guarded


def test_no_check_without_a_main_script_to_re_run(monkeypatch):
    """A notebook or ``python -c`` (no ``__file__``), ``python -m`` of a package's ``__main__``,
    and the fork start method re-run nothing; '<stdin>' is hidden while workers start."""
    import types

    fake = types.ModuleType("__main__")
    monkeypatch.setitem(sys.modules, "__main__", fake)
    assert mainscript.main_rerun_path() is None
    fake.__spec__ = types.SimpleNamespace(name="flexmb.__main__")
    assert mainscript.main_rerun_path() is None
    fake.__spec__, fake.__file__ = None, "<stdin>"
    assert mainscript.main_rerun_path() == "<stdin>"
    mainscript.check_main_guard()  # nothing to parse: no error
    with mainscript.workers_skip_missing_main():
        assert not hasattr(fake, "__file__") and mainscript.main_rerun_path() is None
    assert fake.__file__ == "<stdin>"
    import dask

    with dask.config.set({"distributed.worker.multiprocessing-method": "fork"}):
        assert mainscript.main_rerun_path() is None


def test_a_worker_re_running_the_script_is_refused(monkeypatch):
    import multiprocessing

    monkeypatch.setattr(multiprocessing.current_process(), "_inheriting", True, raising=False)
    with pytest.raises(ModelError, match=r"flexmb.local_cluster starts worker processes.*if __name__"):
        mainscript.check_main_guard("flexmb.local_cluster")
