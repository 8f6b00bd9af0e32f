"""Answers of deterministic set-up computations kept by a digest of everything they read.

A run compiles its model afresh, and the benchmarks and parameter sweeps build a new model for every
run: a cache keyed by objects never hits there, and one keyed by objects that are changed in place would
answer for contents it has not seen.  :class:`Memo` keys an answer by :func:`digest`, a BLAKE2b hash of
the inputs' contents (arrays: shape, dtype and bytes; other values: their ``repr``), so equal digests
mean equal inputs and a changed input is computed again.  Used for the check of a flexible body's
strain-energy factors (:func:`flexmb.fe.reduction.energy_factors.factors_match`), the recorded Jacobian
pattern, the LU structure of a Newton matrix (:mod:`flexmb.dynamics.solve.pivot_memo`) and a modal group's
kernel data (:func:`flexmb.dynamics.bodies.modal_matrices.group_data`).
"""
from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Any, Callable

import numpy as np

__all__ = ["Memo", "digest"]


def digest(*parts: Any) -> bytes:
    """BLAKE2b (20 bytes) of ``parts`` in order: arrays by shape, dtype and bytes (C order), None and
    other values by their ``repr`` (numbers, strings, tuples of them)."""
    h = hashlib.blake2b(digest_size=20)
    for a in parts:
        if isinstance(a, np.ndarray):
            a = np.ascontiguousarray(a)
            h.update(repr(("array", a.shape, a.dtype.str)).encode())
            if a.size:
                h.update(a.view(np.uint8).reshape(-1))
        else:
            h.update(repr(("value", a)).encode())
    return h.digest()


class Memo:
    """At most ``size`` answers, by digest, the least recently used dropped first (thread-safe: runs of a
    sweep may share the process; two threads missing the same key both compute it, the answers being
    equal)."""

    def __init__(self, size: int) -> None:
        self.size = int(size)
        self._d: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: bytes, make: Callable[[], Any]) -> Any:
        """The answer kept for ``key`` (a :func:`digest`), else ``make()`` (kept; an exception is not)."""
        with self._lock:
            hit = self._d.get(key)
            if hit is not None:
                self._d.move_to_end(key)
                return hit
        hit = make()
        with self._lock:
            self._d[key] = hit
            while len(self._d) > self.size:
                self._d.popitem(last=False)
        return hit

    def __len__(self) -> int:
        return len(self._d)
