"""The results store of a study: a directory of Parquet files written as runs finish, read back by
parameter-set key so that a killed study resumes where it stopped.

Layout of ``results.parquet/`` (``pandas.read_parquet("results.parquet")`` reads the Parquet parts;
:func:`load_results` reads the journals too)::

    part-<time>-<pid>-<n>.parquet   rows of finished runs, one file per fold of the journal
                                    (written to a temporary name, flushed to disk, then renamed: a
                                    killed process leaves no half-written part)
    journal-<time>-<host>-<pid>.jsonl
                                    one JSON line per finished run, appended (one ``write`` system
                                    call) the moment its record reaches the sweep: a finished run
                                    survives the death of the sweep process (kill -9, Ctrl-C, out
                                    of memory) at once; folded into a part every ``store_every`` s
                                    (the part is fsync'ed: from then on it also survives a crash
                                    of the machine) and removed
    study.json                      parameter names, flexmb version, creation time; the
                                    fingerprints of the study versions that wrote rows (see
                                    :mod:`flexmb.studies.fingerprint`) and the current one

When a study completes the parts and journals are compacted into one part.  A key stored twice (a
kill between a part's rename and the removal of the journal or parts it replaces) is read once: an
``ok`` row wins over a failed one, then the newest.  A journal's last line cut short (a crash of
the machine mid-write) is ignored: that run is computed again.

Every row carries the ``fingerprint`` of the study that computed it (the code of ``build`` and
``outputs``, ``simulate_kwargs``, the shared inputs, the flexmb version).  Rows of another
fingerprint are refused (:meth:`ResultStore.done`, ``if_changed="error"``), recomputed
(``"recompute"``: a row of the current fingerprint wins over any other) or kept (``"keep"``: they
are relabelled as the current version's when the sweep completes).

Array outputs are stored as (nested) lists and read back as numpy arrays.
"""
from __future__ import annotations

import json
import logging
import os
import re
import socket
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from flexmb.errors import FlexmbError
from flexmb.studies.deps import require
from flexmb.studies.fingerprint import combined, differences

__all__ = ["ResultStore", "load_results", "StoreError", "FINGERPRINT", "IF_CHANGED"]

logger = logging.getLogger(__name__)

_META = "study.json"

#: the column of a stored row that names the study version that computed it
FINGERPRINT = "fingerprint"

#: what a sweep does with stored rows of another study version
IF_CHANGED = ("error", "recompute", "keep")
_JOURNAL = "journal-*.jsonl"


class StoreError(FlexmbError, ValueError):
    """A results store that cannot be used (a plain file, a store of another kind, unreadable parts)."""


class ResultStore:
    """Append-only Parquet store of run records, keyed by parameter set.

    Parameters
    ----------
    path : str or Path
        Directory of the store (created on first write).
    fingerprint : dict, optional
        The study writing to it (:func:`flexmb.studies.fingerprint.study_fingerprint`); its
        :func:`~flexmb.studies.fingerprint.combined` digest labels every row added.
    """

    def __init__(self, path: str | os.PathLike, fingerprint: dict | None = None) -> None:
        self.path = Path(path)
        self.fingerprint = fingerprint
        self.current = combined(fingerprint) if fingerprint else None
        self._meta_written = False
        if self.path.exists() and not self.path.is_dir():
            raise StoreError(f"store {self.path} is a file, not a sweep results directory; give a new path (the "
                             f"store is a directory of Parquet parts) or remove the file")
        if self.path.is_dir() and any(self.path.iterdir()) and not (self.path / _META).is_file():
            raise StoreError(f"{self.path} is a non-empty directory that is not a sweep results store (no {_META}); "
                             f"give another path")
        self._buffer: list[dict] = []
        self._count = 0
        self._journal: Path | None = None
        self._fd: int | None = None

    def parts(self) -> list[Path]:
        return sorted(self.path.glob("part-*.parquet")) if self.path.is_dir() else []

    def journals(self) -> list[Path]:
        return sorted(self.path.glob(_JOURNAL), key=_stamp) if self.path.is_dir() else []

    def meta(self) -> dict:
        """The contents of ``study.json`` ({} before the first write)."""
        try:
            return json.loads((self.path / _META).read_text())
        except FileNotFoundError:
            return {}
        except ValueError as exc:
            raise StoreError(f"{self.path / _META} is damaged ({exc}); restore it or give another store path") from None

    def read(self, current: str | None = None):
        """All stored rows as a DataFrame, one per key (empty DataFrame when nothing is stored): a
        row of the fingerprint ``current`` (default: the store's latest) wins, then an ``ok`` row,
        then the newest."""
        pd = require("pandas", "reading a sweep store")
        frames = []
        for p in sorted(self.parts() + self.journals(), key=_stamp):  # oldest first: the newest row of a key wins
            try:
                frames.append(pd.read_parquet(p) if p.suffix == ".parquet" else pd.DataFrame(_journal_rows(p)))
            except StoreError:
                raise
            except Exception as exc:
                raise StoreError(f"cannot read {p}: {type(exc).__name__}: {exc}; remove that file (its runs "
                                 f"are then recomputed)") from exc
        frames = [f for f in frames if not f.empty]
        if not frames:
            return pd.DataFrame()
        df = pd.concat(frames, ignore_index=True)
        if FINGERPRINT not in df:
            df[FINGERPRINT] = None
        df[FINGERPRINT] = df[FINGERPRINT].astype(object).where(df[FINGERPRINT].notna(), None)
        current = current or self.meta().get(FINGERPRINT)
        df["_rank"] = 2 * df[FINGERPRINT].eq(current).astype(int) + df["status"].eq("ok").astype(int)
        df = df.sort_values("_rank", kind="stable").drop_duplicates("key", keep="last").drop(columns="_rank")
        return _arrays_back(df.reset_index(drop=True))

    def done(self, rerun_failed: bool = False, if_changed: str = "error") -> dict[str, dict]:
        """key -> stored row (as a dict) of the runs that need not be recomputed.

        Rows of another study version than this store's ``fingerprint`` (``if_changed``):
        ``"error"`` raises :class:`StoreError` saying what changed, ``"recompute"`` leaves them
        out (their runs are computed again), ``"keep"`` returns them."""
        df = self.read(self.current)
        if df.empty:
            return {}
        if self.current is not None:
            stale = df[FINGERPRINT].ne(self.current)
            if stale.any() and if_changed == "error":
                raise StoreError(self._changed_message(df.loc[stale, FINGERPRINT]))
            if if_changed == "recompute":
                df = df[~stale]
        if rerun_failed:
            df = df[df["status"] == "ok"]
        return {row["key"]: row for row in df.to_dict("records")}

    def _changed_message(self, stale) -> str:
        versions = stale.value_counts(dropna=False)
        known = self.meta().get("fingerprints", {})
        old = known.get(versions.index[0]) if versions.index[0] is not None else None
        what = "; ".join(differences(old, self.fingerprint))
        more = f" (and {len(versions) - 1} other version(s))" if len(versions) > 1 else ""
        return (f"store {self.path} holds {len(stale)} run(s) computed by another version of this study{more}; what "
                f"changed: {what}. Their rows would not be what this sweep computes: pass if_changed=\"recompute\" to "
                f"compute them again (their rows are replaced), if_changed=\"keep\" to take them as they are (they then "
                f"count as this version's), or give another store path (flexmb sweep: --if-changed)")

    def add(self, row: dict, meta: dict | None = None) -> None:
        """Store one finished run (a flat row: parameters, outputs, run columns): appended to this
        process's journal at once (it survives the death of this process), and buffered for the
        next :meth:`flush`."""
        row = {**row, FINGERPRINT: self.current}
        line = json.dumps(_listed(row), default=_json_value, allow_nan=True, separators=(",", ":")) + "\n"
        if self._fd is None:
            self._start(meta)
            self._journal = self.path / f"journal-{time.time_ns():020d}-{_host()}-{os.getpid()}.jsonl"
            self._fd = os.open(self._journal, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        data = line.encode()
        while data:  # one write() for a line of any usual size; a short write (a full disk) goes on
            data = data[os.write(self._fd, data):]
        self._buffer.append(row)

    def flush(self, meta: dict | None = None) -> None:
        """Fold the buffered rows into one new part file (written, fsync'ed, renamed), then remove
        this process's journal, whose rows the part now holds."""
        if not self._buffer:
            return
        pd = require("pandas", "writing a sweep store")
        require("pyarrow", "writing a sweep store")
        self._start(meta)
        df = pd.DataFrame([_listed(r) for r in self._buffer])
        self._count += 1
        name = f"part-{time.time_ns():020d}-{os.getpid()}-{self._count:05d}.parquet"
        tmp = _tmp_path(self.path / name)
        df.to_parquet(tmp, index=False)
        _fsync(tmp)
        os.replace(tmp, self.path / name)
        logger.debug("stored %d rows in %s", len(df), name)
        self._buffer.clear()
        self._close_journal(remove=True)

    def close(self) -> None:
        """Fold what is buffered (see :meth:`flush`) and close the journal."""
        self.flush()
        self._close_journal(remove=False)

    def compact(self, adopt=()) -> None:
        """Rewrite all parts and the journals of finished processes as one part (after a complete
        study), and remove the temporary files that killed writers left behind; the rows of the
        keys ``adopt`` (kept rows of another study version) get the current fingerprint."""
        self.flush()
        adopt = set(adopt)
        parts, journals = self.parts(), [j for j in self.journals() if _writer_gone(j)]
        for tmp in self.path.glob(".tmp-*") if self.path.is_dir() else ():
            if _writer_gone(tmp):
                tmp.unlink(missing_ok=True)
        if len(parts) <= 1 and not journals and not adopt:
            return
        df = self.read(self.current)
        if adopt and self.current is not None:
            df.loc[df["key"].isin(adopt), FINGERPRINT] = self.current
        self._buffer = [dict(r) for r in df.to_dict("records")]
        self.flush()
        newest = self.parts()[-1]
        for p in parts + journals:
            if p != newest:
                p.unlink(missing_ok=True)

    def _start(self, meta: dict | None) -> None:
        """Create the store; record this study version in ``study.json`` (once per instance)."""
        self.path.mkdir(parents=True, exist_ok=True)
        if self._meta_written:
            return
        old = self.meta()
        new = {**(meta or {}), **old} if old else dict(meta or {})
        if self.current is not None:
            new["fingerprints"] = {**old.get("fingerprints", {}), self.current: self.fingerprint}
            new[FINGERPRINT] = self.current
        if new != old or not (self.path / _META).exists():
            _write_atomic(self.path / _META, json.dumps(new, indent=1, default=str).encode())
        self._meta_written = True

    def _close_journal(self, remove: bool) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            if remove:
                self._journal.unlink(missing_ok=True)
            self._journal = None


def load_results(path: str | os.PathLike):
    """The rows of a sweep store (see :func:`flexmb.sweep`) as a pandas DataFrame, one per parameter
    set, array outputs as numpy arrays; column ``fingerprint``: the study version that computed
    the row (its parts are in the store's ``study.json``)."""
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        raise StoreError(f"load_results({path!r}): give the path of a sweep results directory, as passed to "
                         f"sweep(store=...) or flexmb sweep --out")
    store = ResultStore(path)
    if not store.path.is_dir():
        raise StoreError(f"load_results: no sweep results at {store.path} (no such directory); give the path passed "
                         f"to sweep(store=...) or flexmb sweep --out")
    if not store.parts() and not store.journals():
        raise StoreError(f"load_results: {store.path} holds no results yet (no run has finished in it); give the "
                         f"path passed to sweep(store=...) or flexmb sweep --out")
    return store.read()


def _journal_rows(path: Path) -> list[dict]:
    """The rows of a journal; a last line cut short (a crash mid-write) is left out."""
    lines = path.read_bytes().split(b"\n")
    rows = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except ValueError:
            if n == len(lines):  # no newline after it: the write did not complete
                logger.debug("%s: incomplete last line left out (its run is recomputed)", path)
                continue
            raise StoreError(f"{path}, line {n}: not a JSON row ({line[:60]!r}); remove that line (its run is "
                             f"then recomputed)") from None
    return rows


def _json_value(v: Any) -> Any:
    """JSON form of the numpy scalars and arrays a row may hold."""
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    raise TypeError(f"{type(v).__name__} in a sweep row")


def _stamp(path: Path) -> tuple:
    """(creation time in ns, name) of a part or journal file, from its name."""
    fields = path.name.lstrip(".").split("-")
    return (int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else 0, path.name)


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", socket.gethostname()) or "host"


def _tmp_path(path: Path) -> Path:
    """A temporary name beside ``path`` that says which process writes it."""
    return path.with_name(f".tmp-{os.getpid()}-{uuid.uuid4().hex[:12]}-{path.name}")


def _writer_gone(path: Path) -> bool:
    """Whether the process that wrote ``path`` (a journal: its host and process id are in the name;
    a temporary file: its process id) has ended; files of other hosts count as live (their process
    cannot be checked from here)."""
    fields = path.name.lstrip(".").split(".")[0].split("-")
    if path.name.startswith("journal-"):
        if len(fields) < 4 or fields[2] != _host():
            return False
        pid = fields[3]
    else:  # .tmp-<pid>-<uuid>-<name>
        pid = fields[1] if len(fields) > 1 else ""
    if not pid.isdigit():
        return False
    if int(pid) == os.getpid():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _listed(row: dict) -> dict:
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in row.items()}


def _arrays_back(df):
    """Parquet lists come back as object arrays (of arrays for 2-D); make them plain float arrays."""
    for col in df.columns:
        if df[col].dtype != object:
            continue
        sample = next((v for v in df[col] if v is not None and not (isinstance(v, float) and np.isnan(v))), None)
        if isinstance(sample, (np.ndarray, list)):
            df[col] = [None if v is None else np.array(_tolist(v), dtype=float) for v in df[col]]
    return df


def _tolist(v: Any) -> Any:
    if isinstance(v, np.ndarray) and v.dtype == object:
        return [_tolist(x) for x in v]
    return v.tolist() if isinstance(v, np.ndarray) else v


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = _tmp_path(path)
    tmp.write_bytes(data)
    os.replace(tmp, path)
