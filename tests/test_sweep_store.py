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

from sweep_study import EXAMPLE, ROOT, Study, exact_period, kill, needs, pandas  # noqa: E402

pytestmark = needs("pandas", "pyarrow")

import flexmb as fm  # noqa: E402
from flexmb.studies import parameter_key  # noqa: E402
from flexmb.studies.store import ResultStore, StoreError  # noqa: E402

from flexmb.studies.store import FINGERPRINT  # noqa: E402


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


# --- the study version that shaped the rows --------------------------------------------------------



def _example():
    import importlib.util

    spec = importlib.util.spec_from_file_location("_flexmb_store_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def x_end_only(sol, length):
    return {"x_end": float(sol.body("bob").position[-1, 0])}


def test_a_second_sweep_with_other_outputs_or_settings_is_refused_recomputed_or_kept(tmp_path):
    """Before, a sweep with other outputs on the same store returned the stored rows (the old
    outputs' columns), without a word."""
    ex, store = _example(), tmp_path / "s.parquet"

    def run(outputs=None, lengths=(1.0, 2.0), **kw):
        return fm.sweep(ex.build, {"length": list(lengths)}, outputs or ex.outputs, scheduler=None, store=store,
                        progress=False, **kw)

    first = run()
    assert FINGERPRINT not in first and first.attrs["sweep"]["computed"] == 2
    again = run()  # the same study (a fresh import of its file would do too): nothing computed
    assert again.attrs["sweep"]["computed"] == 0 and list(again["period"]) == list(first["period"])
    for kw, what in [({"outputs": x_end_only}, r"outputs \(_flexmb_store_example.outputs -> test_sweep_store.x_end_only\)"),
                     ({"simulate_kwargs": {"rtol": 1e-10}}, r"simulate_kwargs \(\{\} -> \{'rtol': 1e-10\}\)"),
                     ({"shared": {"steps_per_period": 16}}, r"shared \(\[\] -> \['steps_per_period'\]\)")]:
        with pytest.raises(StoreError, match=rf"holds 2 run\(s\) computed by another version.*{what}.*"
                                             r'if_changed="recompute".*if_changed="keep".*another store path'):
            run(**kw)
    # recompute: the new outputs for every requested set, the old rows replaced
    new = run(x_end_only, lengths=(1.0, 2.0, 4.0), if_changed="recompute")
    assert new.attrs["sweep"]["computed"] == 3 and "period" not in new
    np.testing.assert_allclose(new["x_end"], -np.array([1.0, 2.0, 4.0]) * 0.49047, rtol=1e-4)  # x(0.8 T) / L
    back = fm.load_results(store).set_index("length")
    assert sorted(back.index) == [1.0, 2.0, 4.0] and back[FINGERPRINT].nunique() == 1 and back["period"].isna().all()
    # keep: the stored rows are taken as they are, and from then on count as this version's
    kept = run(lengths=(1.0, 8.0), if_changed="keep")
    assert kept.attrs["sweep"]["computed"] == 1 and np.isnan(kept["period"].iloc[0]) and kept["x_end"].iloc[0] < 0
    assert kept["period"].iloc[1] == pytest.approx(exact_period(8.0), rel=1e-7)
    with pytest.raises(StoreError, match="holds 2 run"):  # 2.0 and 4.0 were not adopted
        run(lengths=(1.0, 8.0))
    assert run(lengths=(1.0, 8.0), if_changed="keep").attrs["sweep"]["computed"] == 0


def test_a_store_that_did_not_record_its_study_is_refused_until_kept(tmp_path):
    ex, store = _example(), tmp_path / "old.parquet"
    store.mkdir()
    (store / "study.json").write_text(json.dumps({"parameters": ["length"], "flexmb_version": "0.1.0"}))
    pandas().DataFrame([{"length": 1.0, "period": 2.0, "status": "ok", "key": parameter_key({"length": 1.0})}]).to_parquet(
        store / "part-00000000000000000001-1-00001.parquet")
    kw = dict(scheduler=None, store=store, progress=False)
    with pytest.raises(StoreError, match=r"holds 1 run\(s\).*what changed: not recorded"):
        fm.sweep(ex.build, {"length": [1.0]}, ex.outputs, **kw)
    assert fm.sweep(ex.build, {"length": [1.0]}, ex.outputs, if_changed="keep", **kw)["period"].tolist() == [2.0]
    assert fm.sweep(ex.build, {"length": [1.0]}, ex.outputs, **kw).attrs["sweep"]["computed"] == 0


FINGERPRINTED = '''
import numpy as np
G = 9.81{g_comment}
LENGTHS = {lengths}
CACHE = {{}}


def helper(x):
    return x * G{helper_extra}


def build(length):{doc}
    if length in {{"a", "b", "c", "d"}}:
        return None
    return helper(length) + len(LENGTHS)
'''


def _fingerprinted(tmp_path, name, **changes):
    import importlib.util

    fields = dict(g_comment="", lengths="[1.0, 2.0]", helper_extra="", doc="")
    fields.update(changes)
    path = tmp_path / f"{name}.py"
    path.write_text(FINGERPRINTED.format(**fields))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fingerprint_sees_code_and_constants_not_layout(tmp_path):
    from flexmb.studies.fingerprint import _digest, study_fingerprint

    base = _fingerprinted(tmp_path, "base")
    same = [_fingerprinted(tmp_path, "moved", g_comment="  # m/s^2\n\n\n", doc="  # a comment\n    # another"),
            _fingerprinted(tmp_path, "base2")]
    other = [_fingerprinted(tmp_path, "g", g_comment="\nG = 9.80"), _fingerprinted(tmp_path, "l", lengths="[1.0, 3.0]"),
             _fingerprinted(tmp_path, "h", helper_extra=" + 0.0")]
    d = _digest(base.build)
    assert [_digest(m.build) for m in same] == [d, d]
    assert len({d, *(_digest(m.build) for m in other)}) == 4
    base.CACHE["model"] = object()  # a cache filled by runs is not a constant of the study
    assert _digest(base.build) == d
    # shared inputs: a mode shape's sign and last-bit rounding do not count, a change of the model does
    rng = np.random.default_rng(0)
    phi = rng.standard_normal((30, 3))
    fp = study_fingerprint(base.build, None, None, {"phi": phi, "E": 2.1e11})["shared"]
    flipped = phi * np.array([1.0, -1.0, 1.0]) * (1 + 1e-15)
    assert study_fingerprint(base.build, None, None, {"phi": flipped, "E": 2.1e11 * (1 + 1e-15)})["shared"] == fp
    assert study_fingerprint(base.build, None, None, {"phi": phi * 1.001, "E": 2.1e11})["shared"] != fp
    assert study_fingerprint(base.build, None, None, {"phi": phi, "E": 2.0e11})["shared"] != fp


def test_fingerprint_does_not_depend_on_string_hashing(tmp_path):
    """A frozenset constant in the code ({"a", "b", ...}) and a set in simulate_kwargs give the same
    digest in processes with different hash seeds (else every resume would count as a change)."""
    _fingerprinted(tmp_path, "seeded")
    code = (f"import importlib.util, sys; sys.path.insert(0, {str(ROOT)!r})\n"
            f"spec = importlib.util.spec_from_file_location('seeded', {str(tmp_path / 'seeded.py')!r})\n"
            f"m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
            f"from flexmb.studies.fingerprint import study_fingerprint, combined\n"
            f"print(combined(study_fingerprint(m.build, None, {{'tags': {{'x', 'y', 'z'}}}}, None)))")
    digests = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert len(digests) == 1 and len(digests.pop().strip()) == 16


def test_fingerprint_does_not_depend_on_reused_object_ids(tmp_path):
    """The walk creates temporaries (a closure's cell list, an object's attribute dict); a later
    temporary that got a freed one's id was digested as "seen" instead of by its contents, so the
    same study gave another digest now and then (a resumed sweep refused its own rows: 2 digests in
    300 repetitions before the fix)."""
    from flexmb.studies.fingerprint import _digest

    source = (
        "class Opts:\n"
        "    def __init__(self):\n"
        "        self.a = 1\n"
        "        self.b = [1.0, 2.0]\n"
        "OPTS = Opts()\n"
        "def helper(x):\n"
        "    return 2 * x\n"
        "def build(length, steps=32, *, opts=OPTS):\n"
        "    cells = [length]\n"
        "    def inner():\n"
        "        return cells\n"
        "    return helper(length) + len(inner()) + opts.a\n")
    path = tmp_path / "ids.py"
    path.write_text(source)
    import importlib.util

    spec = importlib.util.spec_from_file_location("ids", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    junk, digests = [], set()
    for i in range(300):
        digests.add(_digest(module.build))
        junk.append([{} for _ in range(i % 7)])  # churn the allocator between walks
        if len(junk) > 5:
            junk.pop(0)
    assert len(digests) == 1


def test_cli_resumes_a_reloaded_study_file_and_names_the_option_when_it_changed(tmp_path, capsys):
    """Each `flexmb sweep` imports the study file again (new function objects): the same file
    resumes; an edited outputs stops with exit status 2 and the option to pass."""
    from flexmb.cli import main

    study = tmp_path / "study.py"
    text = EXAMPLE.read_text()
    study.write_text(text)
    args = ["sweep", str(study), "--grid", "length=1,2", "--scheduler", "sync", "--out", str(tmp_path / "r.parquet"),
            "--no-plot"]
    assert main(args) == 0 and main(args) == 0
    assert "(2 from the store, 0 computed" in capsys.readouterr().out
    study.write_text(text.replace('"energy_error": float(', '"energy_err": float('))
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "what changed: outputs" in err and "--if-changed" in err
    assert main(args + ["--if-changed", "recompute"]) == 0
    assert "energy_err" in fm.load_results(tmp_path / "r.parquet")


# two processes killed (~6.5 s of CPU): slow.  Its contract in the fast suite: a kill -9 with the default
# settings loses no finished run and the resume computes only the others, each once
# (test_finished_runs_survive_a_kill_within_a_second); what a kill in a fold leaves is read back right
# (test_journal_cut_short_kill_between_fold_and_removal_and_left_over_files)
@pytest.mark.slow
def test_killed_again_and_again_neither_repeats_nor_loses_a_run(tmp_path):
    """kill -9 at random moments (in a run, between runs, in a fold of the journal) of a sweep with
    the default store settings, twice, then a resume to the end: every run finished a second
    before a kill is stored; no stored run is computed again; the store ends with one row per
    parameter set, the exact periods, and no journal or temporary file left."""
    import random

    lengths = [round(0.25 + 0.05 * i, 2) for i in range(16)]
    s = Study(tmp_path, lengths, store_every=0.3)  # folds often, so that some kills land in one
    s.hang.write_text(str(lengths[-1]))  # the first rounds cannot finish the study before they are killed
    hang_key = parameter_key({"length": lengths[-1]})
    rng = random.Random(18)
    stored: set[str] = set()
    for _ in range(2):
        calls_before = len(s.called_keys())
        proc = s.start()
        n = len(s.finished_keys())
        s.wait(proc, lambda: len(s.finished_keys()) > n or hang_key in s.called_keys()[calls_before:])
        durable = set(s.finished_keys())
        time.sleep(1.0 + rng.uniform(0.0, 0.6))
        kill(proc)
        assert set(s.called_keys()[calls_before:]).isdisjoint(stored)  # nothing stored was computed again
        stored = set(fm.load_results(s.store)["key"])
        assert durable <= stored  # nothing finished a second before the kill was lost
    s.hang.unlink()
    calls_before = len(s.called_keys())
    m = s.module()
    df = fm.sweep(m.build, {"length": lengths}, m.outputs, scheduler=None, store=s.store, progress=False)
    assert set(s.called_keys()[calls_before:]).isdisjoint(stored)
    assert df.attrs["sweep"]["from_store"] == len(stored) and (df["status"] == "ok").all()
    np.testing.assert_allclose(df["period"], exact_period(lengths), rtol=1e-7)
    back = fm.load_results(s.store)
    assert sorted(back["key"]) == sorted(df["key"]) and back["key"].is_unique
    assert sorted(p.name.split("-")[0] for p in s.store.iterdir()) == ["part", "study.json"]
