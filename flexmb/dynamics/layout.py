"""The layout of the unknown vector of one time element and the sparse-triplet collector.

Unknown vector (internal unknowns of one time element, ``p`` internal points)
----------------------------------------------------------------------------
``U = [ bodies | joints ]`` with, for body ``b`` and internal point ``i`` (18 slots)::

    body_off + (b p + i) 18 + [ x(3) | theta(3) | pi(6) | w(6) ]

and for joint ``j`` (30 slots)::

    joint_off + (j p + i) 30 + [ s(3) | phi(3) | lambda(6) | Qbar(6) | nu_a(6) | nu_b(6) ]

* ``x`` centre-of-mass position, ``theta`` rotation increment from the element-start orientation,
  ``pi`` modified momenta (force part, moment part about the centre of mass, inertial components),
  ``w`` velocity (v, omega) (internal only);
* ``s`` relative position (frame A), ``phi`` relative rotation increment, ``lambda`` multipliers
  (at the attachment point of B, inertial), ``Qbar`` reaction wrench (frame A), ``nu_a``/``nu_b``
  attachment-point velocities of the two bodies (internal only).

The residual vector uses the same slots: each equation sits at the slot of the unknown it is
paired with (body: kinematics of x, of theta, momentum balance, constitutive law of the body;
joint: relative kinematics (position level), multiplier definition, constitutive law of the joint,
definitions of nu_a and nu_b).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
import scipy.sparse as sp

BODY_SLOTS = 18
JOINT_SLOTS = 30

# body slots
BX, BTH, BPI, BW = 0, 3, 6, 12
# joint slots
JS, JPHI, JLAM, JQ, JNA, JNB = 0, 3, 6, 12, 18, 24


@dataclass(frozen=True)
class Layout:
    """Index maps of the internal unknowns of one time element."""

    n_bodies: int
    n_joints: int
    p: int

    @property
    def body_off(self) -> int:
        return 0

    @property
    def joint_off(self) -> int:
        return self.n_bodies * self.p * BODY_SLOTS

    @property
    def size(self) -> int:
        return self.joint_off + self.n_joints * self.p * JOINT_SLOTS

    def body(self, b: NDArray, i: NDArray, slot0: int, n: int) -> NDArray:
        """Global indices, shape ``b.shape + (n,)``, of slots ``slot0..slot0+n`` of body ``b`` at point ``i``."""
        b = np.asarray(b)
        i = np.asarray(i)
        return (self.body_off + (b * self.p + i) * BODY_SLOTS + slot0)[..., None] + np.arange(n)

    def joint(self, j: NDArray, i: NDArray, slot0: int, n: int) -> NDArray:
        j = np.asarray(j)
        i = np.asarray(i)
        return (self.joint_off + (j * self.p + i) * JOINT_SLOTS + slot0)[..., None] + np.arange(n)


class ReplayLayout(Layout):
    """A :class:`Layout` that records the index arrays of the first evaluation and replays them.

    The element equations ask for the same index arrays in the same order at every evaluation (the
    pattern depends on the model only), so after the first evaluation they are returned from the
    record instead of being rebuilt.  ``rewind()`` starts a new evaluation.
    """

    def __init__(self, n_bodies: int, n_joints: int, p: int):
        super().__init__(n_bodies, n_joints, p)
        object.__setattr__(self, "_record", [])
        object.__setattr__(self, "_pos", -1)  # -1: recording

    def rewind(self) -> None:
        object.__setattr__(self, "_pos", 0 if self._record else -1)

    def _replay(self, kind, a, i, slot0, n):
        if self._pos < 0:
            out = getattr(Layout, kind)(self, a, i, slot0, n)
            self._record.append((kind, slot0, n, out))
            return out
        k, s0, nn, out = self._record[self._pos]
        assert k == kind and s0 == slot0 and nn == n, "index requests changed between evaluations"
        object.__setattr__(self, "_pos", self._pos + 1)
        return out

    def body(self, b, i, slot0, n):
        return self._replay("body", b, i, slot0, n)

    def joint(self, j, i, slot0, n):
        return self._replay("joint", j, i, slot0, n)

    def body_view(self, U: NDArray) -> NDArray:
        """``U`` body part as ``(n_bodies, p, 18)``."""
        return U[: self.joint_off].reshape(self.n_bodies, self.p, BODY_SLOTS)

    def joint_view(self, U: NDArray) -> NDArray:
        return U[self.joint_off :].reshape(self.n_joints, self.p, JOINT_SLOTS)


class Triplets:
    """Collects Jacobian blocks ``(rows (..., r), cols (..., c), vals (..., r, c))``.

    The sequence of blocks is the same at every evaluation (it depends on the model only), so the
    sparsity pattern and the map from entries to CSC storage are computed once (:class:`Pattern`).
    """

    def __init__(self, values_only: bool = False) -> None:
        self.rows: list[NDArray] = []
        self.cols: list[NDArray] = []
        self.vals: list[NDArray] = []
        #: once the pattern exists, only values are collected (indices are not rebuilt)
        self.values_only = values_only

    def add(self, rows: NDArray, cols: NDArray, vals: NDArray) -> None:
        if self.values_only:
            rows = np.asarray(rows)
            cols = np.asarray(cols)
            shape = np.broadcast_shapes(rows.shape[:-1] + (rows.shape[-1], 1), cols.shape[:-1] + (1, cols.shape[-1]),
                                        np.shape(vals))
            self.vals.append(np.broadcast_to(np.asarray(vals, dtype=float), shape).reshape(-1))
            return
        rows = np.asarray(rows)
        cols = np.asarray(cols)
        vals = np.asarray(vals, dtype=float)
        shape = vals.shape
        r = np.broadcast_to(rows[..., :, None], shape)
        c = np.broadcast_to(cols[..., None, :], shape)
        self.rows.append(r.reshape(-1))
        self.cols.append(c.reshape(-1))
        self.vals.append(vals.reshape(-1))

    def add_diag(self, rows: NDArray, cols: NDArray, vals) -> None:
        """Diagonal block: ``rows``, ``cols`` shape (..., n), ``vals`` broadcastable to it."""
        rows = np.asarray(rows)
        vals = np.broadcast_to(np.asarray(vals, dtype=float), rows.shape)
        if self.values_only:
            self.vals.append(vals.reshape(-1))
            return
        self.rows.append(rows.reshape(-1))
        self.cols.append(np.broadcast_to(np.asarray(cols), rows.shape).reshape(-1))
        self.vals.append(vals.reshape(-1))

    def values(self) -> NDArray:
        return np.concatenate(self.vals) if self.vals else np.zeros(0)


class Pattern:
    """Sparsity pattern built once from the first set of triplets; later only values are refilled."""

    def __init__(self, trip: Triplets, n: int) -> None:
        rows = np.concatenate(trip.rows) if trip.rows else np.zeros(0, int)
        cols = np.concatenate(trip.cols) if trip.cols else np.zeros(0, int)
        self.n = n
        self.n_entries = rows.size
        # unique (row, col) pairs in CSC order
        key = cols.astype(np.int64) * n + rows
        uniq, inverse = np.unique(key, return_inverse=True)
        self.map = inverse
        self.indices = (uniq % n).astype(np.int32)
        col_of = (uniq // n).astype(np.int64)
        self.indptr = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(np.bincount(col_of, minlength=n), out=self.indptr[1:])
        self.nnz = uniq.size

    def matrix(self, vals: NDArray) -> sp.csc_matrix:
        if vals.size != self.n_entries:
            raise AssertionError("Jacobian blocks changed between evaluations")
        data = np.bincount(self.map, weights=vals, minlength=self.nnz)
        return sp.csc_matrix((data, self.indices, self.indptr), shape=(self.n, self.n))
