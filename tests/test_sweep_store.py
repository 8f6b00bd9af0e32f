"""The results store of a sweep: finished runs survive a kill -9 of the sweep at once (journal),
a resumed sweep neither repeats nor loses rows, damaged or left-over files are handled.

The study is the IFToMM A01 pendulum of examples/sweep_pendulum.py (periods against the exact
4 K(1/2) sqrt(L/g)); every sweep here is serial (``scheduler=None``) in a subprocess that is killed,
then resumed in this process, so no dask cluster is started."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

import flexmb as fm  # noqa: E402
from flexmb.studies import parameter_key  # noqa: E402
from flexmb.studies.store import ResultStore, StoreError  # noqa: E402

from sweep_study import Study, exact_period, kill  # noqa: E402


def test_finished_runs_survive_a_kill_within_a_second(tmp_path):
    """Default store settings: two runs finish, the third hangs in build; kill -9 one second after
    the second finished.  Both finished runs are in the store (before: nothing was written until 5 s
    had passed, so a kill lost up to 5 s of runs), and the resumed sweep computes only the others."""
    s = Study(tmp_path, [0.5, 1.0, 2.0, 4.0])
    s.hang.write_text("2.0 4.0")
    proc = s.start()
    s.wait(proc, lambda: len(s.finished_keys()) >= 2)
    finished = s.finished_keys()
    time.sleep(1.0)
    kill(proc)
    stored = fm.load_results(s.store)
    assert set(finished) <= set(stored["key"]) and len(stored) == 2
    np.testing.assert_allclose(stored.set_index("key").loc[finished, "period"], exact_period([0.5, 1.0]), rtol=1e-7)
    assert list(s.store.glob("journal-*.jsonl"))  # the rows since the last fold (every 5 s by default)

    s.hang.unlink()
    m = s.module()
    df = fm.sweep(m.build, {"length": s.lengths}, m.outputs, scheduler=None, store=s.store, progress=False)
    assert df.attrs["sweep"]["from_store"] == 2 and df.attrs["sweep"]["computed"] == 2
    assert sorted(s.finished_keys()) == sorted(parameter_key({"length": v}) for v in s.lengths)  # each once
    np.testing.assert_allclose(df["period"], exact_period(s.lengths), rtol=1e-7)
    # complete: the killed process's journal is folded into the one compacted part
    assert [p.name.startswith("part-") for p in s.store.iterdir() if p.name != "study.json"] == [True]
    assert fm.load_results(s.store).set_index("key").loc[df["key"], "period"].tolist() == df["period"].tolist()


def _row(length: float, status: str = "ok", period: float | None = None) -> dict:
    return {"length": length, "period": exact_period(length).item() if period is None else period,
            "xy": np.array([length, -length]), "status": status, "key": parameter_key({"length": length})}


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_journal_cut_short_kill_between_fold_and_removal_and_left_over_files(tmp_path):
    """What a kill leaves in the store, read back: a journal line cut short by a crash mid-write is
    left out (that run is recomputed); a journal whose rows are also in a part (a kill between the
    part's rename and the journal's removal) gives each row once; at compaction the journals and
    temporary files of dead processes go, those of live writers stay."""
    path = tmp_path / "s.parquet"
    rs = ResultStore(path)
    rs.add(_row(1.0), {"parameters": ["length"]})
    rs.add(_row(2.0))
    journal = next(path.glob("journal-*.jsonl"))
    rows = journal.read_text().splitlines()
    assert len(rows) == 2 and json.loads(rows[1])["xy"] == [2.0, -2.0]
    # a dead writer's journal: the same two rows (as if folded, then killed before the removal) and
    # a third row cut short
    dead = path / journal.name.replace(f"-{os.getpid()}.", f"-{_dead_pid()}.").replace("journal-0", "journal-1")
    dead.write_text("\n".join(rows) + "\n" + json.dumps(_listed_row(_row(4.0)))[:40])
    rs.flush()  # the part holds rows 1 and 2; this process's journal is removed
    assert not journal.exists() and len(list(path.glob("part-*.parquet"))) == 1
    back = ResultStore(path).read()
    assert sorted(back["length"]) == [1.0, 2.0] and back.set_index("length").loc[2.0, "xy"].tolist() == [2.0, -2.0]
    assert back["period"].tolist() == [exact_period(v).item() for v in back["length"]]  # bit-exact through JSON
    # a damaged line that is not the last: an error naming file and line
    bad = path / dead.name.replace("journal-1", "journal-2")
    bad.write_text("{broken\n" + rows[0] + "\n")
    with pytest.raises(StoreError, match=r"line 1: not a JSON row.*remove that line"):
        ResultStore(path).read()
    bad.unlink()
    # left-overs of a killed part write (dead process) and of a live writer (this process's parent)
    (path / f".tmp-{_dead_pid()}-abc-part-1-2-3.parquet").write_bytes(b"PAR1")
    live = path / dead.name.replace(dead.name.split("-")[3], f"{os.getppid()}.jsonl").replace("journal-1", "journal-3")
    live.write_text(json.dumps(_listed_row(_row(8.0))) + "\n")
    rs.add(_row(0.5, status="failed", period=float("nan")))
    rs.add(_row(1.0, status="failed", period=float("nan")))  # a failure never replaces a stored ok row
    rs.compact()
    names = sorted(p.name for p in path.iterdir())
    assert names == sorted(["study.json", live.name, next(path.glob("part-*")).name]), names
    back = fm.load_results(path).set_index("length")
    assert sorted(back.index) == [0.5, 1.0, 2.0, 8.0] and back.loc[1.0, "status"] == "ok"
    assert back.loc[0.5, "status"] == "failed" and np.isnan(back.loc[0.5, "period"])


def _listed_row(row: dict) -> dict:
    return {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in row.items()}
