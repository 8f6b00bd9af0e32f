"""Parameter studies (flexmb.sweep, flexmb sweep): the IFToMM A01 pendulum swept over its rod length
on a 2-process LocalCluster (loopback only, dashboard off) against the exact elliptic period; a
failing parameter set; a killed-and-resumed study; serial == distributed to the bit; the store;
the CLI; the missing-extra error."""
from __future__ import annotations

import importlib.util
import logging
import os
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from sweep_study import Study, kill, needs, pandas  # noqa: E402

pytestmark = needs("pandas", "distributed", "pyarrow")

import flexmb as fm  # noqa: E402
from flexmb.errors import FlexmbError  # noqa: E402
from flexmb.studies import parameter_key, parameter_sets  # noqa: E402
from flexmb.studies.deps import MissingDependencyError  # noqa: E402
from flexmb.studies.parameters import parse_grid_option  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _load_example():
    spec = importlib.util.spec_from_file_location("_flexmb_example_sweep_pendulum", ROOT / "examples" / "sweep_pendulum.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EX = _load_example()
LENGTHS = [0.5, 1.0, 2.0]


@pytest.fixture(scope="module")
def client():
    from flexmb.studies import local_cluster

    import distributed

    with local_cluster(2) as cluster, distributed.Client(cluster) as c:
        assert all(addr.startswith("tcp://127.0.0.1:") for addr in c.scheduler_info(n_workers=-1)["workers"])
        yield c


@pytest.fixture(scope="module")
def cluster_table(client):
    return fm.sweep(EX.build, {"length": LENGTHS}, EX.outputs, scheduler=client, progress=False)


# --- physics on the cluster ----------------------------------------------------------------------

def test_pendulum_periods_match_exact_on_two_workers(cluster_table):
    """T(L) = 4 K(1/2) sqrt(L/g); p = 3 with 32 elements per period: relative error 2.5e-8."""
    df = cluster_table
    assert list(df["length"]) == LENGTHS and (df["status"] == "ok").all()
    exact = 4 * 1.8540746773013719 * np.sqrt(np.array(LENGTHS) / 9.81)
    np.testing.assert_allclose(df["period"], exact, rtol=1e-7)
    # dynamic similarity: time in units of sqrt(L/g) and steps of T/32 make every run the same
    # dimensionless problem, so the relative error is the same for every length (a length passed
    # wrongly to build or outputs would break this)
    assert np.ptp(df["period_error"]) < 1e-12 and df["period_error"].max() < 1e-7
    assert (df["newton_iterations"] > 0).all() and (df["steps"] == 26).all()  # 0.8 T in elements of T/32
    assert df["worker"].str.contains(":").all() and df.attrs["sweep"]["workers"] == 2


def test_scheduler_address_runs_on_that_cluster(client, cluster_table):
    """scheduler="tcp://host:port" (a cluster started elsewhere) gives the same rows; workers=2 waits for both."""
    address = client.scheduler.address
    df = fm.sweep(EX.build, {"length": LENGTHS[:1]}, EX.outputs, scheduler=address, workers=2, progress=False)
    assert df["period"].iloc[0] == cluster_table["period"].iloc[0]
    assert int(df["worker"].iloc[0].rsplit(":", 1)[1]) in set(client.run(os.getpid).values())  # ran there


def test_serial_path_gives_identical_numbers(cluster_table):
    for scheduler in (None, "sync"):
        df = fm.sweep(EX.build, {"length": LENGTHS}, EX.outputs, scheduler=scheduler, progress=False)
        for col in ("period", "energy_error", "newton_iterations", "factorizations", "key"):
            assert list(df[col]) == list(cluster_table[col]), col  # to the bit


# --- failures, retries, logs ---------------------------------------------------------------------

def build_or_fail(length):
    if length < 0:
        raise ValueError(f"no rod of length {length}")
    return EX.build(length)


def test_failing_parameter_set_is_a_row_and_the_others_run(client, caplog):
    with caplog.at_level(logging.WARNING, logger="flexmb.studies"):
        df = fm.sweep(build_or_fail, {"length": [1.0, -1.0, 2.0]}, EX.outputs, scheduler=client, retries=1,
                      progress=False)
    assert list(df["status"]) == ["ok", "failed", "ok"]
    bad = df.iloc[1]
    assert bad["error"] == "ValueError" and "no rod of length -1.0" in bad["message"]
    assert bad["attempts"] == 2 and np.isnan(bad["period"])  # retried once, then recorded
    assert list(df["attempts"])[::2] == [1, 1]
    np.testing.assert_allclose(df["period"].iloc[[0, 2]], [EX.exact_period(1.0), EX.exact_period(2.0)], rtol=1e-7)
    assert any("failed: ValueError: no rod of length -1.0" in r.getMessage() for r in caplog.records)
    assert df.attrs["sweep"]["failed"] == 1


def test_simulate_error_is_named_in_the_row():
    """A run that simulate refuses (t_end before t0) fails with the library's error class."""
    df = fm.sweep(EX.build, [{"length": 1.0}], EX.outputs, simulate_kwargs={"t_end": 1.0}, scheduler=None,
                  progress=False)
    assert df["status"].iloc[0] == "ok"  # build's own t_end overrides the sweep's default

    def build_bad(length):
        model, kw = EX.build(length)
        return model, {**kw, "t_end": -1.0}

    df = fm.sweep(build_bad, [{"length": 1.0}], EX.outputs, scheduler=None, progress=False)
    assert df["error"].iloc[0] == "ModelError" and "t_end" in df["message"].iloc[0]


def build_chatty(length, g):
    logging.getLogger("flexmb.test_study").warning("building length %s", length)
    print("hello from build")
    model, kw = EX.build(length)
    assert g == 9.81
    return model, kw


def test_worker_logs_come_back_through_logging_and_shared_inputs(client, caplog, capfd):
    with caplog.at_level(logging.WARNING):
        df = fm.sweep(build_chatty, {"length": [1.0]}, EX.outputs, shared={"g": 9.81}, scheduler=client,
                      progress=False)
    assert df["status"].iloc[0] == "ok", df["message"].iloc[0]
    msgs = [(r.name, r.getMessage()) for r in caplog.records]
    assert ("flexmb.test_study", "[run {'length': 1.0}] building length 1.0") in msgs
    assert "hello from build" not in capfd.readouterr().err  # the worker's print is not on the terminal


# --- store: resume after a kill --------------------------------------------------------------------

def test_killed_sweep_resumes_without_recomputing(client, tmp_path):
    """Killed (serially, a Parquet part per run) after two parts, resumed on the cluster."""
    lengths = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
    s = Study(tmp_path, lengths, store_every=0)
    proc = s.start()
    s.wait(proc, lambda: len(list(s.store.glob("part-*.parquet"))) >= 2)
    kill(proc)
    stored = fm.load_results(s.store)
    n_stored = len(stored)
    assert 2 <= n_stored < len(lengths)
    before = set(s.called_keys())

    study = s.module()
    df = fm.sweep(study.build, {"length": lengths}, study.outputs, scheduler=client, store=s.store, progress=False)
    new_calls = s.called_keys()[len(before):]
    assert set(new_calls).isdisjoint(stored["key"])  # nothing stored was computed again
    assert set(new_calls) | set(stored["key"]) == {parameter_key({"length": v}) for v in lengths}
    assert df.attrs["sweep"]["from_store"] == n_stored and (df["status"] == "ok").all()
    np.testing.assert_allclose(df["period"], [EX.exact_period(v) for v in lengths], rtol=1e-7)
    assert len(list(s.store.glob("part-*.parquet"))) == 1  # compacted when complete
    # a third run finds everything stored and computes nothing
    again = fm.sweep(study.build, {"length": lengths}, study.outputs, scheduler=None, store=s.store, progress=False)
    assert again.attrs["sweep"]["computed"] == 0 and s.called_keys()[len(before):] == new_calls
    assert list(again["period"]) == list(df["period"])


def build_pendulum(length):
    return EX.build(length)


def array_outputs(sol, length):
    return {"x_end": float(sol.body("bob").position[-1, 0]), "xy_end": sol.body("bob").position[-1, :2],
            "R_end": sol.body("bob").rotation[-1], "label": f"L={length}", "ok": True}


def test_store_round_trip_of_array_outputs_and_failures(tmp_path):
    store = tmp_path / "s.parquet"
    df = fm.sweep(build_or_fail, {"length": [1.0, -1.0]}, array_outputs, scheduler=None, store=store, progress=False)
    back = fm.load_results(store).set_index("key").loc[df["key"]].reset_index()
    assert back["xy_end"].iloc[0].shape == (2,) and back["R_end"].iloc[0].shape == (3, 3)
    np.testing.assert_array_equal(back["R_end"].iloc[0], df["R_end"].iloc[0])
    assert back["label"].iloc[0] == "L=1.0" and back["status"].tolist() == ["ok", "failed"]
    # the stored failure counts as done; rerun_failed recomputes it (and only it)
    again = fm.sweep(build_or_fail, {"length": [1.0, -1.0]}, array_outputs, scheduler=None, store=store,
                     progress=False, rerun_failed=True)
    assert again.attrs["sweep"]["computed"] == 1 and again["status"].tolist() == ["ok", "failed"]
    with pytest.raises(FlexmbError, match="not a sweep results"):
        fm.sweep(build_pendulum, {"length": [1.0]}, array_outputs, scheduler=None, store=tmp_path, progress=False)


# --- parameters ----------------------------------------------------------------------------------

def test_parameter_sets_grids_tables_and_keys():
    sets = fm.grid(omega=fm.linear_range(100, 150, 6), m=[0, 0.0378])
    assert len(sets) == 12 and sets[0] == {"omega": 100.0, "m": 0} and sets[1] == {"omega": 100.0, "m": 0.0378}
    assert fm.log_range(1e-3, 1e-1, 3) == [1e-3, 1e-2, 1e-1]
    table = pandas().DataFrame({"L": [1.0, 2.0], "p": np.array([2, 3])})
    assert parameter_sets(table) == [{"L": 1.0, "p": 2}, {"L": 2.0, "p": 3}]
    assert type(parameter_sets(table)[0]["p"]) is int  # numpy scalars become plain Python values
    assert parameter_key({"L": 1, "p": 2}) == parameter_key({"p": 2.0, "L": 1.0}) != parameter_key({"L": 1.5, "p": 2})
    assert parse_grid_option("omega=100:150:6") == ("omega", [100.0, 110.0, 120.0, 130.0, 140.0, 150.0])
    assert parse_grid_option("m_slider=0,0.0378") == ("m_slider", [0, 0.0378])
    assert parse_grid_option("eps=1e-3:1e-1:3:log") == ("eps", [1e-3, 1e-2, 1e-1])
    # bad parameter sets, ranges and sweep arguments: the corpus of tests/test_sweep_inputs.py


def test_build_without_simulate_settings_is_a_failed_row():
    df = fm.sweep(lambda length: EX.build(length)[0], {"length": [1.0]}, EX.outputs, scheduler=None, progress=False)
    assert df["error"].iloc[0] == "ModelError" and "simulate_kwargs" in df["message"].iloc[0]


# --- missing extra -------------------------------------------------------------------------------

@pytest.mark.parametrize("missing, scheduler", [("pandas", None), ("distributed", "local")])
def test_missing_extra_is_named(monkeypatch, missing, scheduler):
    monkeypatch.setitem(sys.modules, missing, None)  # `import missing` now raises ImportError
    with pytest.raises(MissingDependencyError, match=r"flexmb\[sweep\]") as info:
        fm.sweep(EX.build, {"length": [1.0]}, EX.outputs, scheduler=scheduler, progress=False)
    assert isinstance(info.value, FlexmbError) and isinstance(info.value, ImportError)
    assert repr(missing) in str(info.value)


# --- command line --------------------------------------------------------------------------------

def test_cli_sweep_writes_store_table_and_plot(tmp_path, capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    from flexmb.cli import main

    monkeypatch.chdir(tmp_path)
    study = ROOT / "examples" / "sweep_pendulum.py"
    rc = main(["sweep", str(study), "--grid", "length=0.5:2:2:log", "--grid", "steps_per_period=16,32",
               "--scheduler", "sync", "--out", "res.parquet"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "4 runs: 4 ok, 0 failed" in out and (tmp_path / "res.png").is_file()
    df = fm.load_results(tmp_path / "res.parquet")
    assert len(df) == 4 and set(df["steps_per_period"]) == {16, 32}
    # halving the step divides the period error by ~2^6 (nodal order 6 of p = 3)
    err = df.groupby("steps_per_period")["period_error"].mean()
    assert 40 < err[16] / err[32] < 90
    pandas().DataFrame({"length": [0.5, 1.0]}).to_csv(tmp_path / "sets.csv", index=False)
    assert main(["sweep", str(study), "--table", "sets.csv", "--scheduler", "sync", "--out", "t.parquet",
                 "--no-plot"]) == 0
    assert fm.load_results(tmp_path / "t.parquet")["period"].tolist() == pytest.approx(
        [EX.exact_period(0.5), EX.exact_period(1.0)], rel=1e-7)
    assert main(["sweep", str(study), "--grid", "length=0.5:2", "--scheduler", "sync"]) == 2
    assert "START:STOP:N" in capsys.readouterr().err
    assert main(["sweep", str(tmp_path / "nope.py"), "--scheduler", "sync"]) == 2


def test_cli_exit_1_when_a_run_failed(tmp_path, capsys):
    from flexmb.cli import main

    study = tmp_path / "fails.py"
    study.write_text(textwrap.dedent(f"""
        import importlib.util
        spec = importlib.util.spec_from_file_location("_ex", {str(ROOT / "examples" / "sweep_pendulum.py")!r})
        ex = importlib.util.module_from_spec(spec); spec.loader.exec_module(ex)
        parameters = {{"length": [1.0, -1.0]}}

        def build(length):
            if length < 0:
                raise ValueError("negative rod")
            return ex.build(length)

        outputs = ex.outputs
        """))
    rc = main(["sweep", str(study), "--scheduler", "sync", "--out", str(tmp_path / "r.parquet"), "--no-plot"])
    out = capsys.readouterr().out
    assert rc == 1 and "1 ok, 1 failed" in out and "ValueError" in out


def test_readme_parameter_study_example_runs(tmp_path, monkeypatch):
    """The README's code block, run serially (the cluster is covered above): x(1 s) for L = 1 m is IFToMM's."""
    import re

    section = (ROOT / "README.md").read_text().split("## Parameter studies", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    ref = float(re.search(r"x_end = ([\d.]+), the IFToMM", code).group(1))
    tables = []

    def serial_sweep(*args, **kwargs):
        tables.append(fm.studies.sweep(*args, **{**kwargs, "scheduler": None, "progress": False}))
        return tables[-1]

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(fm, "sweep", serial_sweep)
    exec(compile(code, "README.md", "exec"), {"__name__": "__main__"})
    df = tables[0]
    assert (df["status"] == "ok").all() and (tmp_path / "pendulum.parquet").is_dir()
    row = df[np.isclose(df["length"], 1.0)].iloc[0]
    assert row["x_end"] == pytest.approx(ref, abs=1e-6) and row["energy_error"] < 1e-6


def build_or_die(length):
    if length < 0:
        os._exit(3)  # a crash that takes the worker process down (segfault, out of memory)
    return EX.build(length)


@pytest.mark.slow  # dask tries the run on 4 workers (each restarted by its nanny) before giving up: ~20 s
def test_run_that_kills_its_worker_is_a_failed_row(client):
    df = fm.sweep(build_or_die, {"length": [1.0, -1.0, 2.0]}, EX.outputs, scheduler=client, progress=False)
    assert list(df["status"]) == ["ok", "failed", "ok"]
    assert df["error"].iloc[1] == "KilledWorker" and "ended its worker process" in df["message"].iloc[1]
    np.testing.assert_allclose(df["period"].iloc[[0, 2]], [EX.exact_period(1.0), EX.exact_period(2.0)], rtol=1e-7)


def test_progress_without_a_terminal_is_log_lines(monkeypatch, caplog):
    from flexmb.studies import progress as sp

    monkeypatch.setattr(sp, "LOG_SECONDS", 0.0)
    with caplog.at_level(logging.INFO, logger="flexmb.studies.progress"):
        bar = sp.StudyProgress(3, skipped=2, enabled=False)
        for ok in (True, False, True):
            bar.update(ok)
        bar.close()
    msgs = [r.getMessage() for r in caplog.records]
    assert msgs[0] == "2 runs already in the store, 3 to compute"
    assert msgs[-1].startswith("sweep: 3/3 runs done, 1 failed") and "ETA 0 s" in msgs[-1]
