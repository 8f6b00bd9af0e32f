"""The files of a checkpoint: a directory that each write appends to and never rewrites.

::

    <path>/                      the checkpoint (any name, e.g. ``run.ckpt``)
        state.npz                the engine state of the last write, the run's settings and the list
                                 of the files below with their SHA-256 (replaced atomically, last)
        chunk-<n>-<token>.npz    the history rows recorded since the previous write (one per write)
        model-<token>.npz        the model's fingerprint and, when it pickles, the model (once per run)

A write (:meth:`Appender.write`) stores the new history rows as a new chunk, the model file when
it has none yet, then ``state.npz`` through a temporary file and a rename; every file is flushed to
disk (``fsync``) before the state that names it, and Ctrl-C is held back until the write is done.
A process killed at any moment leaves the previous ``state.npz`` and the files it names intact;
the files of an unfinished write are named by no state, are never read, and are deleted by the next
write. File names are never reused (a random token per writing session), so a new run writing into
the directory of an old one cannot damage it before its first state replaces the old one.

Targets (:func:`check_target`): a new path (created with its parents), an existing checkpoint
directory (its run is replaced at the first write), an empty directory, or a single-file checkpoint
of an older flexmb (replaced by a directory at the first write). Anything else (a device such as
``/dev/full``, a FIFO, another file, a directory holding other files) is refused before the run.
A symbolic link to a directory is followed: the checkpoint is written into the directory it points
to and the link stays; a link to anything else is refused.

Reading (:func:`read`) takes the state, checks every file it names against its digest, and joins
the chunks; single-file checkpoints of older flexmb (a Solution ``.npz`` holding the engine state in
its ``extra`` arrays) are read too, and the temporary file an older flexmb left beside one when it
was killed while writing (``run.npz.tmp.npz``) is deleted, and refused when it is given as the
checkpoint.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import re
import secrets
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from flexmb.dynamics.io.interrupts import held
from flexmb.errors import FlexmbError, ModelError, SolutionFileError

FORMAT = "flexmb-checkpoint"
VERSION = 1
STATE = "state.npz"
#: the files a checkpoint directory may hold (anything else makes a directory a foreign one)
OURS = re.compile(r"^(state\.npz(\.tmp-[0-9a-f]+)?|chunk-\d{6,}-[0-9a-f]+\.npz|model-[0-9a-f]+\.npz)$")
#: the temporary file an older flexmb wrote beside a single-file checkpoint (``run.npz.tmp.npz``)
OLD_TMP = ".tmp.npz"
#: where a single-file checkpoint's replacement directory is built before it takes the file's place
CONVERTING = ".converting"


# ------------------------------------------------------------------------------------------- targets
def _kind(st: os.stat_result) -> str:
    for test, name in ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):
        if test(st.st_mode):
            return name
    return "not a regular file or directory"


def _is_old_checkpoint(path: Path) -> bool:
    """A single-file checkpoint of an older flexmb: a Solution file whose meta has ``checkpoint``."""
    try:
        with np.load(path, allow_pickle=False) as f:
            return "__flexmb_solution__" in f.files and "checkpoint" in json.loads(str(f["meta"][()]))
    except Exception:
        return False


def check_target(path) -> str:
    """Check a ``checkpoint=`` target before the run: ``"new"``, ``"dir"`` (a checkpoint directory or an
    empty one) or ``"old"`` (an older flexmb's single-file checkpoint); anything else is a ModelError
    naming the path, what it is and the fix."""
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise ModelError(f"checkpoint={path!r} is not a path; give a directory path such as 'run.ckpt' or None")
    path = Path(path)
    fix = "give a new path (a directory is created there) or an existing checkpoint directory"
    if path.is_symlink() and not path.exists():
        raise ModelError(f"checkpoint={str(path)!r} is a symbolic link to a missing target ({os.readlink(path)}); {fix}")
    if path.is_symlink() and not path.is_dir():
        raise ModelError(f"checkpoint={str(path)!r} is a symbolic link to a file; a link is followed only to a "
                         f"directory: {fix}")
    if not path.exists():
        parent = next((p for p in path.parents if p.exists()), Path("."))
        if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
            raise ModelError(f"checkpoint={str(path)!r}: cannot create it, {str(parent)!r} is not a writable directory")
        return "new"
    if path.is_dir():
        foreign = sorted(e.name for e in os.scandir(path) if not OURS.match(e.name))
        if foreign:
            raise ModelError(f"checkpoint={str(path)!r} is a directory holding other files ({', '.join(foreign[:3])}"
                             f"{', ...' if len(foreign) > 3 else ''}), not a checkpoint directory; {fix}")
        if not os.access(path, os.W_OK | os.X_OK):
            raise ModelError(f"checkpoint={str(path)!r} is a checkpoint directory that is not writable")
        return "dir"
    st = path.stat()
    if not stat.S_ISREG(st.st_mode):
        raise ModelError(f"checkpoint={str(path)!r} is {_kind(st)}, not a checkpoint; {fix}")
    if not _is_old_checkpoint(path):
        raise ModelError(f"checkpoint={str(path)!r} is an existing file that is not a flexmb checkpoint; it would be "
                         f"replaced: {fix}")
    return "old"


# ------------------------------------------------------------------------------------------- writing
def _npz_bytes(arrays: dict) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _write_durable(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _sync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # platforms without directory handles
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Appender:
    """Appends a run's checkpoints to the directory ``path`` (checked by :func:`check_target`).

    ``chunks`` (``[name, sha256]`` of each chunk), ``counts`` (history rows written per key) and
    ``model`` (``[name, sha256]``) describe what the directory's state names; a run resumed into the
    directory it was read from continues them (:meth:`continuing`)."""

    path: Path
    kind: str
    chunks: list = field(default_factory=list)
    counts: dict = field(default_factory=dict)
    model: list | None = None
    token: str = field(default_factory=lambda: secrets.token_hex(4))

    @classmethod
    def open(cls, path, stored: "Stored | None" = None) -> "Appender":
        """The appender of target ``path``; ``stored``: the checkpoint the run was resumed from, whose
        files it continues when it is the same directory."""
        kind = check_target(path)
        path = Path(path)
        if kind == "new":
            path.mkdir(parents=True)
            kind = "dir"
        out = cls(path=path, kind=kind)
        if stored is not None and not stored.old_format and kind == "dir" and os.path.samefile(stored.path, path):
            out.chunks = [list(c) for c in stored.files["chunks"]]
            out.counts = dict(stored.files["counts"])
            out.model = list(stored.files["model"])
        return out

    def write(self, history: dict, state: dict, meta: dict, model_payload) -> None:
        """Append the rows of ``history`` (key -> list of rows, of which ``counts[key]`` are written),
        replace the state (``state``: arrays, ``meta``: JSON-ready settings); ``model_payload()``
        returns the model file's arrays when it has to be written (a new directory, a changed model:
        ``model`` is then None)."""
        with held():
            target = self.path if self.kind == "dir" else self.path.with_name(self.path.name + CONVERTING)
            if self.kind == "old":  # build the replacement of an older flexmb's file beside it
                if target.exists():
                    shutil.rmtree(target)
                target.mkdir()
            chunks, counts, model = list(self.chunks), dict(self.counts), self.model
            new = {k: rows[counts.get(k, 0):] for k, rows in history.items() if len(rows) > counts.get(k, 0)}
            if new:
                data = _npz_bytes({k: np.asarray(v, dtype=float) for k, v in new.items()})
                name = f"chunk-{len(chunks):06d}-{self.token}.npz"
                _write_durable(target / name, data)
                chunks.append([name, _sha(data)])
                counts.update({k: len(history[k]) for k in new})
            if model is None:
                data = _npz_bytes(model_payload())
                name = f"model-{self.token}.npz"
                _write_durable(target / name, data)
                model = [name, _sha(data)]
            files = {"chunks": chunks, "counts": counts, "model": model}
            head = {"format": FORMAT, "version": VERSION, "files": files, **meta}
            data = _npz_bytes({**state, "meta": np.array(json.dumps(head))})
            tmp = target / f"{STATE}.tmp-{self.token}"
            _write_durable(tmp, data)
            os.replace(tmp, target / STATE)
            _sync_dir(target)
            if self.kind == "old":  # the directory takes the old file's place
                os.unlink(self.path)
                os.rename(target, self.path)
                _sync_dir(self.path.parent)
                _remove_old_tmp(self.path)
                self.kind = "dir"
            self.chunks, self.counts, self.model = chunks, counts, model
            _clean(self.path, {STATE, model[0], *(c[0] for c in chunks)})

    def forget_model(self) -> None:
        """The next write stores the model file anew (the run's model is not the one on disk)."""
        self.model = None


def _clean(path: Path, keep: set) -> None:
    """Delete the checkpoint files of ``path`` that its state does not name (unfinished writes, a
    replaced run's files); other files are never touched."""
    for e in os.scandir(path):
        if OURS.match(e.name) and e.name not in keep:
            try:
                os.unlink(e.path)
            except OSError:
                pass


def _remove_old_tmp(path: Path) -> None:
    """An older flexmb's temporary file beside a single-file checkpoint ``path`` (a write it did not finish)."""
    tmp = path.with_name(path.name + OLD_TMP)
    try:
        if tmp.is_file() and not tmp.is_symlink():
            tmp.unlink()
    except OSError:
        pass


# ------------------------------------------------------------------------------------------- reading
@dataclass
class Stored:
    """A checkpoint as read: ``meta`` (settings, JSON), ``arrays`` (engine state and the history joined
    per key, in the keys the engine wrote), the pickled model (or None), the model's fingerprint (None
    for older checkpoints), ``files`` (what the state names) and, for older single-file checkpoints,
    the body and joint names of their results."""

    path: Path
    meta: dict
    arrays: dict
    model_blob: bytes | None
    fingerprint: dict | None
    files: dict | None = None
    old_format: bool = False
    names: tuple | None = None


def _damaged(path: Path, what: str) -> SolutionFileError:
    return SolutionFileError(f"checkpoint {str(path)!r}: {what}; the checkpoint is damaged (modified or lost files): "
                             f"re-run the simulation, or resume from a copy")


def _npz(path: Path, data: bytes | None = None) -> dict:
    with np.load(io.BytesIO(data) if data is not None else path, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def read(path) -> Stored:
    """The checkpoint at ``path`` (a checkpoint directory or an older flexmb's single file)."""
    from flexmb.results.solution import Solution

    path = Path(path)
    if not path.exists() and path.with_name(path.name + CONVERTING).joinpath(STATE).is_file():
        # killed while an older flexmb's file was being replaced by its directory: finish that
        os.rename(path.with_name(path.name + CONVERTING), path)
    if path.name.endswith(OLD_TMP) and path.with_name(path.name[:-len(OLD_TMP)]).exists():
        raise FlexmbError(f"{str(path)!r} is the temporary file of a checkpoint write that did not finish, not a "
                          f"checkpoint; resume from {path.name[:-len(OLD_TMP)]!r}")
    if not path.exists():
        raise FileNotFoundError(f"no checkpoint {str(path)!r}; write one with simulate(..., checkpoint=PATH)")
    if path.is_dir():
        return _read_dir(path)
    if path.name == STATE and path.parent.joinpath(STATE).is_file():
        raise FlexmbError(f"{str(path)!r} is a part of the checkpoint directory {str(path.parent)!r}; give the directory")
    sol = Solution.load(path)
    info = sol.meta.get("checkpoint")
    if not info:
        raise FlexmbError(f"{path} is a results file but not a checkpoint (no engine state); write checkpoints "
                          f"with simulate(..., checkpoint=PATH)")
    _remove_old_tmp(path)
    blob = sol.extra.get("ckpt/model")
    return Stored(path=path, meta=sol.meta, arrays=dict(sol.extra), old_format=True, fingerprint=None,
                  model_blob=None if blob is None else np.asarray(blob, dtype=np.uint8).tobytes(),
                  names=(sol.body_names, sol.joint_names))


def _read_dir(path: Path) -> Stored:
    if not path.joinpath(STATE).is_file():
        if any(OURS.match(e.name) for e in os.scandir(path)):
            raise FlexmbError(f"checkpoint {str(path)!r} holds no state yet: the run stopped before its first "
                              f"checkpoint write; run the simulation again")
        raise FlexmbError(f"{str(path)!r} is a directory but not a checkpoint (no {STATE}); write checkpoints with "
                          f"simulate(..., checkpoint=PATH)")
    try:
        state = _npz(path / STATE)
        head = json.loads(str(state.pop("meta")[()]))
    except Exception as exc:
        raise _damaged(path, f"{STATE} cannot be read ({type(exc).__name__}: {exc})") from exc
    if head.get("format") != FORMAT:
        raise _damaged(path, f"{STATE} is not a flexmb checkpoint state")
    if head.get("version", 0) > VERSION:
        raise FlexmbError(f"checkpoint {str(path)!r} has format version {head['version']}, this flexmb reads up to "
                          f"{VERSION}; upgrade flexmb")
    files = head["files"]

    def load(name: str, sha: str) -> dict:
        try:
            data = (path / name).read_bytes()
        except OSError as exc:
            raise _damaged(path, f"{name} cannot be read ({exc})") from exc
        if _sha(data) != sha:
            raise _damaged(path, f"{name} does not match its checksum")
        return _npz(path / name, data)

    parts: dict[str, list] = {}
    for name, sha in files["chunks"]:
        for k, v in load(name, sha).items():
            parts.setdefault(k, []).append(v)
    history = {k: np.concatenate(v) for k, v in parts.items()}
    for k, n in files["counts"].items():
        if history.get(k, np.zeros(0)).shape[0] != n:
            raise _damaged(path, f"the history {k!r} has {history.get(k, np.zeros(0)).shape[0]} rows, the state says {n}")
    model = load(*files["model"])
    fp = json.loads(str(model["fingerprint"][()]))
    blob = model["pickle"].tobytes() if "pickle" in model else None
    return Stored(path=path, meta=head, arrays={**state, **history}, model_blob=blob, fingerprint=fp, files=files)
