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
    study.json                      parameter names, flexmb version, creation time

When a study completes the parts and journals are compacted into one part.  A key stored twice (a
kill between a part's rename and the removal of the journal or parts it replaces) is read once: an
``ok`` row wins over a failed one, then the newest.  A journal's last line cut short (a crash of
the machine mid-write) is ignored: that run is computed again.

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

__all__ = ["ResultStore", "load_results", "StoreError"]

logger = logging.getLogger(__name__)

_META = "study.json"
_JOURNAL = "journal-*.jsonl"


class StoreError(FlexmbError, ValueError):
    """A results store that cannot be used (a plain file, a store of another kind, unreadable parts)."""


class ResultStore:
    """Append-only Parquet store of run records, keyed by parameter set.

    Parameters
    ----------
    path : str or Path
        Directory of the store (created on first write).
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
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

    def read(self):
        """All stored rows as a DataFrame (one per key; empty DataFrame when nothing is stored)."""
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
        df["_ok"] = df["status"].eq("ok")
        df = df.sort_values("_ok", kind="stable").drop_duplicates("key", keep="last").drop(columns="_ok")
        return _arrays_back(df.reset_index(drop=True))

    def done(self, rerun_failed: bool = False) -> dict[str, dict]:
        """key -> stored row (as a dict) of the runs that need not be recomputed."""
        df = self.read()
        if df.empty:
            return {}
        if rerun_failed:
            df = df[df["status"] == "ok"]
        return {row["key"]: row for row in df.to_dict("records")}

    def add(self, row: dict, meta: dict | None = None) -> None:
        """Store one finished run (a flat row: parameters, outputs, run columns): appended to this
        process's journal at once (it survives the death of this process), and buffered for the
        next :meth:`flush`."""
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

    def compact(self) -> None:
        """Rewrite all parts and the journals of finished processes as one part (after a complete
        study), and remove the temporary files that killed writers left behind."""
        self.flush()
        parts, journals = self.parts(), [j for j in self.journals() if _writer_gone(j)]
        for tmp in self.path.glob(".tmp-*") if self.path.is_dir() else ():
            if _writer_gone(tmp):
                tmp.unlink(missing_ok=True)
        if len(parts) <= 1 and not journals:
            return
        df = self.read()
        self._buffer = [dict(r) for r in df.to_dict("records")]
        self.flush()
        newest = self.parts()[-1]
        for p in parts + journals:
            if p != newest:
                p.unlink(missing_ok=True)

    def _start(self, meta: dict | None) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        meta_path = self.path / _META
        if not meta_path.exists():
            _write_atomic(meta_path, json.dumps(meta or {}, indent=1, default=str).encode())

    def _close_journal(self, remove: bool) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            if remove:
                self._journal.unlink(missing_ok=True)
            self._journal = None


def load_results(path: str | os.PathLike):
    """The rows of a sweep store (see :func:`flexmb.sweep`) as a pandas DataFrame, array outputs as
    numpy arrays."""
    store = ResultStore(path)
    if not store.path.is_dir():
        raise StoreError(f"no sweep results at {store.path}")
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
