"""Checkpoints (issue 18 section 3): appended to, never rewritten; safe against kill -9 at any moment
of a write; resumed bit-identically; their target checked before the run; refused with another
model unless asked, and then only from a state the model's joints accept; Ctrl-C during the set-up
is a SimulationInterrupted without results."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import flexmb as fm
from checkpoint_cases import CASES, flexible_bar, pendulum, run

HERE = Path(__file__).parent
OLD_FILE = HERE / "data" / "checkpoint_single_file.npz"  # written by flexmb before this layout (pendulum, t = 0.5 of 1 s)

ARRAYS = ("t", "body_position", "body_rotation", "body_velocity", "body_angular_velocity", "joint_force",
          "joint_moment", "joint_force_internal", "joint_moment_internal", "joint_multiplier", "kinetic_energy",
          "potential_energy")


def assert_identical(a: fm.Solution, b: fm.Solution) -> None:
    for name in ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape and np.array_equal(x, y), name
    for k, v in a.extra.items():
        assert np.array_equal(v, b.extra[k]), k
    for k in ("iterations", "h", "t_start"):
        assert np.array_equal(a.stats[k], b.stats[k]), k


def stop_at(t_stop: float):
    return lambda t, s: t >= t_stop - 1e-12


# ------------------------------------------------------------------------------ append-only writes
def test_a_write_appends_what_is_new(tmp_path):
    """One write per element: every write adds one chunk holding that element's rows (the same size
    at the 5th and the 45th write), the state stays small; before, every write rewrote the whole
    history (a file growing with the run)."""
    ck = tmp_path / "run.ckpt"
    full = run("pendulum")
    part = run("pendulum", checkpoint=ck, checkpoint_every=1e-9, on_step=stop_at(0.9))
    chunks = sorted(ck.glob("chunk-*.npz"))
    assert len(chunks) == part.nt - 1  # 45 elements, 45 writes
    sizes = [c.stat().st_size for c in chunks]
    assert sizes[4] == sizes[44]
    with np.load(chunks[44]) as f:
        assert f["ckpt/rec/t"].tolist() == [part.t[45]]
    assert (ck / "state.npz").stat().st_size < 3 * sizes[4] + 20_000
    with pytest.raises(fm.SolutionFileError, match=r"load_checkpoint\(path\)"):
        fm.Solution.load(ck)
    assert_identical(full, fm.resume(ck))


def test_the_energy_audit_resumes_bit_identically(tmp_path):
    """The energy audit's running state (the energy span and the worst element, replaced at every node,
    not appended to) is saved whole at every write: a damped, driven run stopped after several writes
    resumes to the same audit entries as the uninterrupted run."""
    def damped():
        bob = fm.RigidBody("bob", mass=1.0, inertia=np.full(3, 1e-3), position=(-1.0, 0.0, 0.0))
        pin = fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1), damping=0.3)
        push = fm.PointTorque("bob", lambda t: (0.0, 0.0, 2.0 * np.sin(5.0 * t)))
        return fm.Model([bob], [pin], [fm.Gravity((0.0, -9.81, 0.0)), push])

    full = fm.simulate(damped(), 1.0, 0.02, p=2)
    ck = tmp_path / "run.ckpt"
    fm.simulate(damped(), 1.0, 0.02, p=2, checkpoint=ck, checkpoint_every=1e-9, on_step=stop_at(0.6))
    rest = fm.resume(ck, damped())
    assert_identical(full, rest)
    audit = [k for k in full.meta if k.startswith("energy_")]
    assert "energy_jump_t" in audit
    for k in audit:
        assert rest.meta[k] == full.meta[k], k


def test_the_recorder_lists_only_grow():
    """A checkpoint appends the new rows of the recorder's lists: each list must keep its rows as they
    were, except the running values the recorder names in ``REPLACED`` (stored whole)."""
    from flexmb.dynamics.simulate import Run, SimulationOptions

    run_ = Run.start(flexible_bar(), 0.2, 0.02, 2, 0.0, SimulationOptions())
    def lists():  # the recorder's lists, its statistics and its body-type outputs, copied
        rec = run_.rec
        out = {k: v for k, v in vars(rec).items() if isinstance(v, list) and k not in rec.REPLACED}
        out.update({f"stats/{k}": v for k, v in rec.stats.items()}, **rec.body_extra)
        return {k: [np.array(r, copy=True) for r in v] for k, v in out.items()}

    run_.step()
    before = lists()
    for _ in range(3):
        run_.step()
    after = lists()
    for k, rows in before.items():
        assert len(after[k]) >= len(rows) and all(np.array_equal(a, b) for a, b in zip(rows, after[k])), k
    assert set(run_.rec.REPLACED) <= set(vars(run_.rec))


def test_the_interval_is_timed_from_the_end_of_a_write(tmp_path, monkeypatch):
    """A write that takes longer than the interval does not make every element write: the next write
    is due ``checkpoint_every`` after the end of the previous one."""
    from flexmb.dynamics.io.checkpoint import Checkpoints
    from flexmb.dynamics.io.checkpoint_files import Appender
    from flexmb.dynamics.simulate import Run, SimulationOptions

    run_ = Run.start(pendulum(), 1.0, 0.02, 2, 0.0, SimulationOptions())
    run_.step()
    slow = Appender.write

    def slow_write(self, *args):
        time.sleep(0.3)
        return slow(self, *args)

    monkeypatch.setattr(Appender, "write", slow_write)
    ck = Checkpoints(tmp_path / "run.ckpt", 0.2, run_)
    ck.write(run_)
    assert not ck.due()
    time.sleep(0.25)
    assert ck.due()


@pytest.mark.parametrize("case", ["pendulum", "adaptive", "flexible"])
def test_resume_from_a_checkpoint_resumed_into_itself(tmp_path, case):
    """Stopped twice and resumed into the same checkpoint each time: the chunks of both legs are
    kept, and the run equals the uninterrupted one bit for bit (fixed steps, error-controlled
    steps, a flexible body's modal history)."""
    t_end = CASES[case][1]["t_end"]
    full = run(case)
    ck = tmp_path / "run.ckpt"
    # writes at the stops only: a timed write (every 60 s by default) inside a leg slowed by numba
    # compilations on a loaded machine added a chunk the count below did not expect
    run(case, checkpoint=ck, checkpoint_every=1e9, on_step=stop_at(0.3 * t_end))
    n_first = len(list(ck.glob("chunk-*.npz")))
    fm.resume(ck, checkpoint_every=1e9, on_step=stop_at(0.6 * t_end), show_progress=False)
    assert len(list(ck.glob("chunk-*.npz"))) == n_first + 1
    assert_identical(full, fm.resume(ck, show_progress=False))
    assert_identical(full, fm.load_checkpoint(ck))


def test_an_older_single_file_checkpoint_resumes(tmp_path):
    """A checkpoint an older flexmb wrote as one file resumes: its history is kept to the bit, the run
    goes on to t_end along the pendulum's motion, and the file becomes a checkpoint directory (its
    leftover temporary file ``run.npz.tmp.npz`` from a killed write is removed, and is never taken for
    a checkpoint)."""
    ck = tmp_path / "run.npz"
    shutil.copy(OLD_FILE, ck)
    tmp = tmp_path / "run.npz.tmp.npz"
    tmp.write_bytes(b"half a write")
    with pytest.raises(fm.FlexmbError, match="temporary file.*resume from 'run.npz'"):
        fm.resume(tmp)
    old = fm.Solution.load(ck)
    rest = fm.resume(ck)
    assert rest.meta["complete"] and ck.is_dir() and not tmp.exists()
    n = old.nt
    for name in ("t", "body_position", "body_velocity"):
        assert np.array_equal(getattr(rest, name)[:n], getattr(old, name)), name
    # (the node reactions at the last node of a partial run are one-sided: recovered again with the next element)
    assert np.array_equal(rest.joint_force[:n - 1], old.joint_force[:n - 1])
    # the rest follows the same pendulum run from the start (to round-off of the engine since then)
    full = run("pendulum")
    assert np.abs(rest.body_position - full.body_position).max() < 1e-9
    assert_identical(rest, fm.load_checkpoint(ck))


def test_an_interrupted_replacement_of_an_older_file_is_completed(tmp_path, monkeypatch):
    """The older flexmb's file is replaced by its directory in two steps (the file removed, the
    directory built beside it renamed into its place): a run stopped between them (here: the rename
    fails) leaves the complete directory beside, which the next read puts in place."""
    from flexmb.dynamics.io.checkpoint import CheckpointWriteError

    ck = tmp_path / "run.npz"
    shutil.copy(OLD_FILE, ck)
    rename = os.rename
    monkeypatch.setattr(os, "rename", lambda *a: (_ for _ in ()).throw(OSError("stopped here")))
    with pytest.raises(CheckpointWriteError, match="stopped here"):
        fm.resume(ck, on_step=stop_at(0.6))
    monkeypatch.setattr(os, "rename", rename)
    assert not ck.exists() and (tmp_path / "run.npz.converting" / "state.npz").is_file()
    assert fm.load_checkpoint(ck).t[-1] == pytest.approx(0.6) and ck.is_dir()
    assert fm.resume(ck).meta["complete"]


# ------------------------------------------------------------------------------ kill -9
def _killed(case: str, ck: Path, kill: str | None = None, delay: float | None = None, resume: bool = False) -> None:
    """Run ``case`` with a checkpoint write after every element in a subprocess that is killed (SIGKILL):
    by itself at the point ``kill`` of a write, or ``delay`` seconds after its first write (``resume``:
    the subprocess resumes the checkpoint instead)."""
    if resume:
        cmd = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(HERE)!r}); import flexmb as fm; "
               f"fm.resume({str(ck)!r}, checkpoint_every=1e-9, show_progress=False)"]
    else:
        cmd = [sys.executable, str(HERE / "checkpoint_cases.py"), case, str(ck)] + ([kill] if kill else [])
    env = {**os.environ, "FLEXMB_PROGRESS": "0"}
    state = ck / "state.npz"
    before = state.stat().st_mtime_ns if state.exists() else None
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if delay is None:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == -9, (proc.returncode, err.decode()[-2000:])
        return
    deadline = time.time() + 600
    while not state.exists() or state.stat().st_mtime_ns == before:
        assert proc.poll() is None and time.time() < deadline, proc.stderr.read().decode()[-2000:]
        time.sleep(0.005)
    time.sleep(delay)
    proc.kill()
    proc.wait()
    assert proc.returncode == -9, "the run ended before it was killed: lengthen it"


# the first write syncs 4 files (chunk, model, state, directory), the next ones 3 (chunk, state, directory)
# (the state's own fsync and a later write's chunk are like the rename and the first chunk: slow-marked)
@pytest.mark.parametrize("kill", ["fsync:5", pytest.param("fsync:6", marks=pytest.mark.slow), "replace:2", "replaced:2",
                                  pytest.param("fsync:11", marks=pytest.mark.slow)],
                         ids=["in-chunk", "in-state", "before-rename", "after-rename", "later-chunk"])
def test_kill_during_a_write_leaves_a_checkpoint_that_resumes_bit_identically(tmp_path, kill):
    """Killed (SIGKILL) at each step of a write: before the new chunk is on disk, before and right
    after the state's rename; the checkpoint resumes to the uninterrupted run bit for bit, and the
    unfinished write's files are deleted by the resumed run's first write."""
    from flexmb.dynamics.io.checkpoint_files import read

    def named(path):
        files = read(path).files
        return {"state.npz", files["model"][0], *(c[0] for c in files["chunks"])}

    ck = tmp_path / "run.ckpt"
    _killed("pendulum", ck, kill)
    left = {p.name for p in ck.iterdir()} - named(ck)
    assert bool(left) == (kill in ("fsync:5", "fsync:6", "replace:2", "fsync:11")), left  # the unfinished write
    assert fm.load_checkpoint(ck).nt >= 2
    rest = fm.resume(ck, checkpoint_every=1e-9)
    assert_identical(run("pendulum"), rest)
    assert {p.name for p in ck.iterdir()} == named(ck)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["chain", "adaptive", "flexible-long"])
def test_kill_at_random_moments(tmp_path, case):
    """Killed at random moments of a run that writes after every element, then of two resumed runs:
    the final run equals the uninterrupted one bit for bit."""
    rng = np.random.default_rng(18)
    ck = tmp_path / "run.ckpt"
    _killed(case, ck, delay=float(rng.uniform(0.0, 0.2)))
    for _ in range(2):
        t_ck = fm.load_checkpoint(ck).t[-1]
        _killed(case, ck, delay=float(rng.uniform(0.0, 0.2)), resume=True)
        assert fm.load_checkpoint(ck).t[-1] > t_ck
    assert_identical(run(case), fm.resume(ck, show_progress=False))


# ------------------------------------------------------------------------------ targets
@pytest.mark.parametrize("target", ["/dev/null", "/dev/full"])
def test_a_device_is_refused_before_the_run(target):
    """As root, the atomic rename replaced /dev/full by a regular file; a target that is not a new
    path, a checkpoint directory or an older checkpoint file is refused before anything runs."""
    if not os.path.exists(target):
        pytest.skip(f"no {target}")
    t0 = time.perf_counter()
    with pytest.raises(fm.ModelError, match="character device"):
        run("pendulum", checkpoint=target)
    assert Path(target).is_char_device()
    with pytest.raises(fm.ModelError, match="character device"):
        fm.resume(OLD_FILE, checkpoint=target)
    assert time.perf_counter() - t0 < 60


def test_other_targets(tmp_path):
    """A file that is not a checkpoint and a directory of other files are refused and left alone; a
    symbolic link to a directory is followed (the checkpoint goes into the directory, the link
    stays); a link to a file, or to nothing, is refused."""
    note = tmp_path / "notes.txt"
    note.write_text("mine")
    with pytest.raises(fm.ModelError, match="not a flexmb checkpoint"):
        run("pendulum", checkpoint=note)
    assert note.read_text() == "mine"
    with pytest.raises(fm.ModelError, match="holding other files"):
        run("pendulum", checkpoint=tmp_path)
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    run("pendulum", checkpoint=link, on_step=stop_at(0.5))
    assert link.is_symlink() and (real / "state.npz").is_file()
    assert fm.resume(link).meta["complete"]
    (tmp_path / "to_file").symlink_to(note)
    (tmp_path / "to_nothing").symlink_to(tmp_path / "missing")
    for bad, what in (("to_file", "link to a file"), ("to_nothing", "missing target")):
        with pytest.raises(fm.ModelError, match=what):
            run("pendulum", checkpoint=tmp_path / bad)


def test_a_failed_write_stops_the_run_with_its_results(tmp_path, monkeypatch):
    """A write the file system refuses (here: the disk is full at the 4th state rename) stops the run
    with CheckpointWriteError carrying the results; the checkpoint keeps its previous write and
    resumes bit-identically."""
    import errno

    from flexmb.dynamics.io.checkpoint import CheckpointWriteError

    calls = [0]
    replace = os.replace

    def full_disk(*args):
        calls[0] += 1
        if calls[0] == 4:
            raise OSError(errno.ENOSPC, "No space left on device")
        return replace(*args)

    ck = tmp_path / "run.ckpt"
    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(CheckpointWriteError, match="No space left") as info:
        run("pendulum", checkpoint=ck, checkpoint_every=1e-9)
    monkeypatch.setattr(os, "replace", replace)
    assert info.value.solution.nt == 5 and fm.load_checkpoint(ck).nt == 4
    assert_identical(run("pendulum"), fm.resume(ck))


# ------------------------------------------------------------------------------ another model
@pytest.fixture(scope="module")
def pendulum_checkpoint(tmp_path_factory):
    """The 1 m pendulum's checkpoint at t = 0.5 s (of 1 s)."""
    ck = tmp_path_factory.mktemp("pendulum") / "run.ckpt"
    run("pendulum", checkpoint=ck, on_step=stop_at(0.5))
    return ck


@pytest.mark.parametrize("model, message", [
    (pendulum(length=2.0), r"joint 'pin' frame B origin: \[1.0, 0.0, 0.0\] in the checkpoint, \[2.0, 0.0, 0.0\] in the model"),
    (pendulum(mass=2.0), r"body 'bob' mass: 1.0 in the checkpoint, 2.0 in the model"),
    (pendulum(gravity=1.62), r"force #0 \(Gravity\) g: \[0.0, -9.81, 0.0\] in the checkpoint, \[0.0, -1.62, 0.0\]"),
], ids=["length", "mass", "gravity"])
def test_another_model_is_refused_naming_what_differs(pendulum_checkpoint, model, message):
    """Before: the 2 m pendulum went on from the 1 m one's state, violating its joint, and ended 1.3 m
    off with only an energy warning.  Now the fingerprint names the difference; the checkpoint is
    left as it was."""
    state = (pendulum_checkpoint / "state.npz").read_bytes()
    with pytest.raises(fm.ModelError, match=message + r".*allow_model_change=True"):
        fm.resume(pendulum_checkpoint, model)
    assert (pendulum_checkpoint / "state.npz").read_bytes() == state


def test_other_bodies_are_refused_even_when_allowed(pendulum_checkpoint):
    """Before: a reshape error.  A state and a history cannot be carried over to other bodies."""
    for allow in (False, True):
        with pytest.raises(fm.ModelError, match=r"body 'bob1' \(RigidBody #1\) is not in the checkpoint's model.*same "
                                                r"bodies and joints"):
            fm.resume(pendulum_checkpoint, pendulum(bodies=2), allow_model_change=allow)


def test_an_allowed_change_needs_a_state_the_joints_accept(pendulum_checkpoint):
    """The 1 m pendulum's bob is 1 m from the pin of the 2 m pendulum: refused even when allowed."""
    with pytest.raises(fm.ModelError, match=r"violates joint 'pin' \(s_y\) of the model by [0-9.]+e\+07 x its assembly "
                                            r"tolerance \(its parameters differ"):
        fm.resume(pendulum_checkpoint, pendulum(length=2.0), allow_model_change=True, checkpoint=None)


def test_an_allowed_change_goes_on_with_the_new_model(tmp_path, pendulum_checkpoint, caplog):
    """Gravity switched off at t = 0.5 s: the pendulum turns on uniformly at the speed it had (closed
    form); ``meta["model_changes"]`` records the change, the checkpoint stores the new model (resumed
    again it is the reference: the old model is refused)."""
    ck = tmp_path / "run.ckpt"
    shutil.copytree(pendulum_checkpoint, ck)
    free = pendulum(gravity=0.0)
    rest = fm.resume(ck, free, allow_model_change=True, t_end=2.0)
    assert [c["t"] for c in rest.meta["model_changes"]] == [pytest.approx(0.5)]
    assert "force #0 (Gravity) g" in rest.meta["model_changes"][0]["differences"][0]
    assert any("with another model" in r.getMessage() for r in caplog.records)
    k = int(np.argmin(np.abs(rest.t - 0.5)))
    # (1e-6: the p = 2 element's secular drift is 1e-8 relative per second here; with gravity on, the
    # speed would change by 100 %)
    om = rest.body_angular_velocity[k:, 0, 2]
    assert np.abs(om - om[0]).max() < 1e-6 * abs(om[0])
    x, y = rest.body_position[k:, 0, 0], rest.body_position[k:, 0, 1]
    angle = np.unwrap(np.arctan2(y, x))
    assert np.abs(angle - angle[0] - om[0] * (rest.t[k:] - rest.t[k])).max() < 1e-6
    assert fm.resume(ck, free, t_end=2.5).meta["complete"]  # the checkpoint's model is now the free one
    with pytest.raises(fm.ModelError, match="force #0"):
        fm.resume(ck, pendulum(), t_end=2.5)


def test_a_changed_drive_is_caught_at_the_resumed_node(tmp_path):
    """What a user function computes is not in the fingerprint; a drive that prescribes another angle
    at the resumed node shows as a violated joint."""
    def driven(amplitude):
        bob = fm.RigidBody("bob", mass=1.0, inertia=np.full(3, 1e-3), position=(-1.0, 0.0, 0.0))
        return fm.Model([bob], [fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1),
                                            angle=lambda t: amplitude * np.sin(3 * t))])

    ck = tmp_path / "run.ckpt"
    fm.simulate(driven(0.5), 1.0, 0.02, p=2, checkpoint=ck, on_step=stop_at(0.5))
    with pytest.raises(fm.ModelError, match=r"violates joint 'pin' \(phi_z\).*drive function"):
        fm.resume(ck, driven(0.7))
    assert fm.resume(ck, driven(0.5)).meta["complete"]


def test_a_flexible_body_built_from_other_data_is_refused(tmp_path):
    ck = tmp_path / "run.ckpt"
    run("flexible", checkpoint=ck, on_step=stop_at(0.1))
    with pytest.raises(fm.ModelError, match=r"body 'F' data: sha256:\w+ in the checkpoint, sha256:\w+ in the model"):
        fm.resume(ck, flexible_bar(E=8e7))


# ------------------------------------------------------------------------------ Ctrl-C in the set-up
def test_ctrl_c_during_the_set_up_is_a_simulation_interrupt(pendulum_checkpoint):
    """Ctrl-C while the model is compiled and assembled (here: while the set-up evaluates a drive at
    t0) or while a checkpoint is loaded: SimulationInterrupted without results, saying so."""
    calls = []

    def interrupted(t):  # Ctrl-C at the n-th call
        calls.append(t)
        if len(calls) == n:
            raise KeyboardInterrupt
        return 0.0 * np.asarray(t)

    bob = fm.RigidBody("bob", mass=1.0, inertia=np.full(3, 1e-3), position=(-1.0, 0.0, 0.0))
    model = fm.Model([bob], [fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1), angle=interrupted)])
    phases = []
    for n in range(1, 100):  # Ctrl-C at every call of the drive until the run has started
        calls.clear()
        with pytest.raises(fm.SimulationInterrupted) as info:
            fm.simulate(model, 1.0, 0.02)
        if "interrupted at t = 0 s" in str(info.value):  # in the first element: the initial node is a result
            assert info.value.solution.nt == 1
            break
        assert info.value.solution is None and "no results" in str(info.value)
        phases.append(str(info.value).split("while ")[1][:11])
    assert set(phases) == {"checking th", "setting up "}, phases  # check_simulate_args, Run.start
    calls.clear()
    n = 1
    with pytest.raises(fm.SimulationInterrupted, match="while loading the checkpoint.*no results"):
        fm.resume(pendulum_checkpoint, model, allow_model_change=True)


def test_ctrl_c_while_the_engine_loads():
    """Ctrl-C while ``fm.simulate`` imports numba (here: an import hook raising it) is a
    SimulationInterrupted; the next access loads the engine."""
    code = """
import sys
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == "numba":
            raise KeyboardInterrupt
hook = Interrupt()
sys.meta_path.insert(0, hook)
import flexmb as fm
try:
    fm.simulate
except fm.SimulationInterrupted as exc:
    print("interrupted:", exc.solution is None, exc)
sys.meta_path.remove(hook)
print("then:", fm.simulate.__name__)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=HERE.parent, timeout=600)
    assert "interrupted: True simulation interrupted while loading the engine" in out.stdout, out.stderr[-2000:]
    assert "then: simulate" in out.stdout
