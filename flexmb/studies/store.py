"""The results store of a study: a directory of Parquet files written as runs finish, read back by
parameter-set key so that a killed study resumes where it stopped.

Layout of ``results.parquet/`` (a Parquet dataset: ``pandas.read_parquet("results.parquet")``
reads it)::

    part-<time>-<n>.parquet   rows of finished runs, one file per flush (written to a temporary
                              name, then renamed: a killed process leaves no half-written file)
    study.json                parameter names, flexmb version, creation time

When a study completes the parts are compacted into one file.  A key stored twice (a crash between
the compacted file's rename and the removal of the parts) is read once: an ``ok`` row wins over a
failed one, then the newest.

Array outputs are stored as (nested) lists and read back as numpy arrays.
"""
from __future__ import annotations

import json
import logging
import os
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

    def parts(self) -> list[Path]:
        return sorted(self.path.glob("part-*.parquet")) if self.path.is_dir() else []

    def read(self):
        """All stored rows as a DataFrame (one per key; empty DataFrame when nothing is stored)."""
        pd = require("pandas", "reading a sweep store")
        frames = []
        for p in self.parts():
            try:
                frames.append(pd.read_parquet(p))
            except Exception as exc:
                raise StoreError(f"cannot read {p}: {type(exc).__name__}: {exc}; remove that part file (its runs "
                                 f"are then recomputed)") from exc
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

    def add(self, row: dict) -> None:
        """Buffer one finished run (a flat row: parameters, outputs, run columns)."""
        self._buffer.append(row)

    def flush(self, meta: dict | None = None) -> None:
        """Write the buffered rows as one new part file (atomic rename)."""
        if not self._buffer:
            return
        pd = require("pandas", "writing a sweep store")
        require("pyarrow", "writing a sweep store")
        self.path.mkdir(parents=True, exist_ok=True)
        meta_path = self.path / _META
        if not meta_path.exists():
            _write_atomic(meta_path, json.dumps(meta or {}, indent=1, default=str).encode())
        df = pd.DataFrame([_listed(r) for r in self._buffer])
        self._count += 1
        name = f"part-{time.time_ns():020d}-{os.getpid()}-{self._count:05d}.parquet"
        tmp = self.path / f".{name}.{uuid.uuid4().hex}.tmp"
        df.to_parquet(tmp, index=False)
        os.replace(tmp, self.path / name)
        logger.debug("stored %d rows in %s", len(df), name)
        self._buffer.clear()

    def compact(self) -> None:
        """Rewrite all parts as one file (after a complete study)."""
        parts = self.parts()
        if len(parts) <= 1:
            return
        df = self.read()
        self._buffer = [dict(r) for r in df.to_dict("records")]
        self.flush()
        newest = self.parts()[-1]
        for p in parts:
            if p != newest:
                p.unlink(missing_ok=True)


def load_results(path: str | os.PathLike):
    """The rows of a sweep store (see :func:`flexmb.sweep`) as a pandas DataFrame, array outputs as
    numpy arrays."""
    store = ResultStore(path)
    if not store.path.is_dir():
        raise StoreError(f"no sweep results at {store.path}")
    return store.read()


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
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
