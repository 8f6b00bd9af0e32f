"""The layout of the unknown vector of one time element and the sparse-triplet collector.

This module is the one place that says where every internal unknown lives.

Unknown vector (internal unknowns of one time element, ``p`` internal points)
----------------------------------------------------------------------------
``U = [ body group 0 | body group 1 | ... | joints ]``.  Bodies are grouped by body type (in the
order of :data:`flexmb.dynamics.bodies.BODY_TYPES`); a group of ``n_g`` bodies whose type has
``S_g`` unknowns per internal point occupies a contiguous block, body-major::

    group_off[g] + (k p + i) S_g + slot          k-th body of the group, internal point i

What each slot means is the body type's business (the rigid body: ``x(3) | theta(3) | pi(6) |
w(6)``, :mod:`flexmb.dynamics.bodies.rigid`; the modal flexible body with ``nm`` modes:
``x(3) | theta(3) | q(nm) | pi(6 + nm) | w(6 + nm)``, :mod:`flexmb.dynamics.bodies.modal`); only the
body type's own module reads its slots.
Joints follow, 30 slots each::

    joint_off + (j p + i) 30 + [ s(3) | phi(3) | lambda(6) | Qbar(6) | nu_a(6) | nu_b(6) ]

* ``s`` relative position (frame A), ``phi`` relative rotation increment, ``lambda`` multipliers
  (at the attachment point of B, inertial), ``Qbar`` reaction wrench (frame A), ``nu_a``/``nu_b``
  attachment-point velocities of the two sides (internal only).

The residual vector uses the same slots: each equation sits at the slot of the unknown it is
paired with.
"""
from __future__ import annotations

import copy
import logging

import numpy as np
from numpy.typing import NDArray
import scipy.sparse as sp

from flexmb.dynamics.kernels import frozen, jit_kernel
from flexmb.errors import ModelError

log = logging.getLogger(__name__)

JOINT_SLOTS = 30


@jit_kernel
def _scatter_values(dest, vals, data, dropped):  # pragma: no cover - compiled
    """``data[d] += vals[i]`` for ``d = dest[i] >= 0``, ``dropped[-1 - d] += vals[i]`` otherwise (both
    zeroed first, entries in order); True when a dropped position sums to nonzero (or NaN)."""
    data[:] = 0.0
    dropped[:] = 0.0
    for i in range(dest.size):
        d = dest[i]
        if d >= 0:
            data[d] += vals[i]
        else:
            dropped[-1 - d] += vals[i]
    for k in range(dropped.size):
        if dropped[k] != 0.0:
            return True
    return False
@jit_kernel
def _unique_positions(rows, cols, n):  # pragma: no cover - compiled
    """Unique ``(row, col)`` positions of the entries ``rows, cols`` (``(E,)``, values in ``[0, n)``)
    in CSC order (by column, then row), by two stable counting sorts (``O(E + n)``).

    Returns ``inverse (E,)`` (entry -> unique position), ``rows_u``, ``cols_u`` (``(U,)``): the
    same arrays as ``np.unique(cols * n + rows, return_inverse=True)`` gives, without its sort."""
    E = rows.size
    # stable counting sort by row, then by column: lexicographic (column, row) order
    cnt = np.zeros(n + 1, dtype=np.int64)
    for e in range(E):
        cnt[rows[e] + 1] += 1
    for i in range(n):
        cnt[i + 1] += cnt[i]
    by_row = np.empty(E, dtype=np.int64)
    for e in range(E):
        r = rows[e]
        by_row[cnt[r]] = e
        cnt[r] += 1
    cnt[:] = 0
    for e in range(E):
        cnt[cols[e] + 1] += 1
    for i in range(n):
        cnt[i + 1] += cnt[i]
    order = np.empty(E, dtype=np.int64)
    for k in range(E):
        e = by_row[k]
        c = cols[e]
        order[cnt[c]] = e
        cnt[c] += 1
    inverse = np.empty(E, dtype=np.int64)
    rows_u = np.empty(E, dtype=np.int32)
    cols_u = np.empty(E, dtype=np.int64)
    u = -1
    pr = -1
    pc = -1
    for k in range(E):
        e = order[k]
        r = rows[e]
        c = cols[e]
        if r != pr or c != pc:
            u += 1
            rows_u[u] = r
            cols_u[u] = c
            pr = r
            pc = c
        inverse[e] = u
    return inverse, rows_u[:u + 1].copy(), cols_u[:u + 1].copy()


@jit_kernel
def _sum_unique(inverse, vals, n_unique):  # pragma: no cover - compiled
    """``out[inverse[e]] += vals[e]`` in entry order (``np.bincount(inverse, vals)``), ``(n_unique,)``."""
    out = np.zeros(n_unique)
    for e in range(inverse.size):
        out[inverse[e]] += vals[e]
    return out


@jit_kernel
def _kept_structure(keep, rows_u, cols_u, inverse, n):  # pragma: no cover - compiled
    """CSC structure of the unique positions where ``keep`` (``(U,)`` bool, positions in CSC order).

    Returns ``kept``, ``dropped`` (indices of the kept / dropped positions), ``indices`` (int32 rows
    of the kept), ``indptr`` (int32, ``(n + 1,)``) and ``dest`` (int32, ``(E,)``): for each entry, its
    slot in ``data`` or ``-1 -`` its slot among the dropped positions."""
    U = keep.size
    nk = 0
    for u in range(U):
        if keep[u]:
            nk += 1
    kept = np.empty(nk, dtype=np.int64)
    dropped = np.empty(U - nk, dtype=np.int64)
    indices = np.empty(nk, dtype=np.int32)
    indptr = np.zeros(n + 1, dtype=np.int32)
    slot = np.empty(U, dtype=np.int64)
    a = 0
    b = 0
    for u in range(U):
        if keep[u]:
            kept[a] = u
            indices[a] = rows_u[u]
            indptr[cols_u[u] + 1] += 1
            slot[u] = a
            a += 1
        else:
            dropped[b] = u
            slot[u] = -1 - b
            b += 1
    for j in range(n):
        indptr[j + 1] += indptr[j]
    dest = np.empty(inverse.size, dtype=np.int32)
    for e in range(inverse.size):
        dest[e] = slot[inverse[e]]
    return kept, dropped, indices, indptr, dest


#: names of the six relative-coordinate components of a joint (error messages, redundancy labels)
COMPONENT_NAMES = ("s_x", "s_y", "s_z", "phi_x", "phi_y", "phi_z")
# joint slots
JS, JPHI, JLAM, JQ, JNA, JNB = 0, 3, 6, 12, 18, 24


class Layout:
    """Index maps of the internal unknowns of one time element.

    Parameters
    ----------
    body_slots : array of int, shape (nb,)
        Unknowns per internal point of each body (by model body index).
    group_of : array of int, shape (nb,)
        Body-type group of each body; groups are stored in increasing group order.
    n_joints, p : int
    """

    def __init__(self, body_slots, group_of, n_joints: int, p: int):
        body_slots = np.asarray(body_slots, dtype=np.int64).reshape(-1)
        group_of = np.asarray(group_of, dtype=np.int64).reshape(-1)
        self.n_bodies = body_slots.size
        self.n_joints = int(n_joints)
        self.p = int(p)
        self.body_slots = body_slots
        self.group_of = group_of
        # storage order: by group, then by body index
        order = np.lexsort((np.arange(self.n_bodies), group_of))
        sizes = body_slots[order] * self.p
        starts = np.zeros(self.n_bodies, dtype=np.int64)
        starts[order] = np.concatenate([[0], np.cumsum(sizes)[:-1]]) if self.n_bodies else []
        self.body_start = starts
        self.joint_off = int(sizes.sum())
        self.size = self.joint_off + self.n_joints * self.p * JOINT_SLOTS

    # ------------------------------------------------------------------ index maps
    def body(self, b: NDArray, i: NDArray, slot0, n: int) -> NDArray:
        """Global indices, shape ``broadcast(b, i, slot0).shape + (n,)``, of slots ``slot0 .. slot0 + n``
        of body ``b`` (model index) at internal point ``i``."""
        b = np.asarray(b)
        start = self.body_start[b] + np.asarray(i) * self.body_slots[b] + slot0
        return np.asarray(start)[..., None] + np.arange(n)

    def joint(self, j: NDArray, i: NDArray, slot0, n: int) -> NDArray:
        j = np.asarray(j)
        i = np.asarray(i)
        return (self.joint_off + (j * self.p + i) * JOINT_SLOTS + slot0)[..., None] + np.arange(n)

    # ------------------------------------------------------------------ views
    def group_view(self, U: NDArray, bodies: NDArray, slots: int) -> NDArray:
        """``U`` block of a body group (``bodies``: its model indices, contiguous in storage) as
        ``(n_g, p, slots)``."""
        n = len(bodies)
        if n == 0:
            return U[:0].reshape(0, self.p, slots)
        starts = self.__dict__.get("_starts")
        if starts is None:  # the body starts as Python ints (a list lookup per call)
            starts = self._starts = self.body_start.tolist()
        s = starts[bodies[0]]
        return U[s:s + n * self.p * slots].reshape(n, self.p, slots)

    def joint_view(self, U: NDArray) -> NDArray:
        return U[self.joint_off:].reshape(self.n_joints, self.p, JOINT_SLOTS)

    def locate_body(self, index: int) -> tuple[int, int, int]:
        """``(body, internal point, slot)`` of a global body index (``index < joint_off``)."""
        order = np.argsort(self.body_start)
        b = int(order[np.searchsorted(self.body_start[order], index, side="right") - 1])
        i, slot = divmod(int(index - self.body_start[b]), int(self.body_slots[b]))
        return b, i, slot


def attachment_index(data, lay: Layout, bodies: NDArray, kind: str, parts) -> NDArray:
    """Global indices ``(m, p, c)`` of the slot runs ``parts`` (``((first slot, count), ...)``) of the
    bodies ``bodies (m,)`` (model indices) of a set of attachments, per ``kind`` of Jacobian block (a
    body type's attachment methods), fixed per model: built once per layout and kept on the attachment
    data ``data`` (the layout's unrecorded index map, so a replaying layout sees the same requests at
    every evaluation).  ``kind == "pose"``: the pair (the Gauss points' columns, every internal point's
    columns per constraint point ``(m, p, c p)``)."""
    cache = vars(data).setdefault("index", {})
    key = (kind, id(lay))
    hit = cache.get(key)
    if hit is None or hit[0] is not lay:
        p = lay.p
        b, ip = np.asarray(bodies)[:, None], np.arange(p)[None]
        idx = np.concatenate([Layout.body(lay, b, ip, slot, k) for slot, k in parts], axis=-1)
        if kind == "pose":
            m, c = idx.shape[0], idx.shape[-1]
            idx = (idx, np.broadcast_to(idx.reshape(m, 1, c * p), (m, p, c * p)))
        hit = cache[key] = (lay, idx)
    return hit[1]


def node_columns(data, vel_cols: NDArray, local: NDArray) -> NDArray:
    """The global velocity columns ``(m, c)`` of the bodies ``local (m,)`` (group positions) of a set of
    attachments at a time node (``vel_cols``: the group's), fixed per model: built once and kept on the
    attachment data ``data``, read-only (every node's frames share them)."""
    cols = getattr(data, "node_cols", None)
    if cols is None or cols.shape[0] != local.size:
        cols = data.node_cols = frozen(vel_cols[local])
    return cols


class ReplayLayout(Layout):
    """A :class:`Layout` that records the index arrays of the first evaluation and replays them.

    The element equations ask for the same index arrays in the same order at every evaluation (the
    pattern depends on the model only), so after the first evaluation they are returned from the
    record instead of being rebuilt.  ``rewind(kind)`` starts a new evaluation; each kind of
    evaluation (with the Jacobian: ``True``; residual only: ``False``) asks for its own sequence
    and has its own record.
    """

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self._records = {}
        self._record = []
        self._pos = -1  # -1: recording

    def rewind(self, kind=True) -> None:
        self._record = self._records.setdefault(kind, [])
        self._pos = 0 if self._record else -1

    def _replay(self, kind, a, i, slot0, n):
        if self._pos < 0:
            out = getattr(Layout, kind)(self, a, i, slot0, n)
            self._record.append((kind, n, out))
            return out
        k, nn, out = self._record[self._pos]
        assert k == kind and nn == n, "index requests changed between evaluations"
        self._pos += 1
        return out

    def body(self, b, i, slot0, n):
        return self._replay("body", b, i, slot0, n)

    def joint(self, j, i, slot0, n):
        return self._replay("joint", j, i, slot0, n)


class Triplets:
    """Collects Jacobian blocks ``(rows (..., r), cols (..., c), vals (..., r, c))``.

    The sequence of blocks is the same at every evaluation (it depends on the model only), so the
    sparsity pattern and the map from entries to CSC storage are computed once (:class:`Pattern`).

    Three modes:

    * ``Triplets()``: the first evaluation; indices and values are collected (``Pattern`` is built
      from them);
    * ``Triplets(pattern=pat)``: values only; each block's values are written straight into one
      preallocated array at the block's place recorded by the pattern (no index arrays, no
      broadcasting bookkeeping);
    * ``Triplets(jacobian=False)``: residual only; blocks are ignored.  Element code tests
      ``trip.jacobian`` and skips computing Jacobian values altogether (Newton with a reused
      factorization needs the residual only).
    """

    def __init__(self, *, pattern: "Pattern | None" = None, jacobian: bool = True) -> None:
        self.rows: list[NDArray] = []
        self.cols: list[NDArray] = []
        self.vals: list[NDArray] = []
        #: False: residual-only evaluation, the Jacobian blocks are not wanted
        self.jacobian = bool(jacobian)
        #: once the pattern exists, only values are collected (indices are not rebuilt)
        self.values_only = pattern is not None
        self._pattern = pattern
        self._k = 0
        self._buf = np.empty(pattern.n_entries) if pattern is not None else None
        #: shapes of the blocks (recorded on the first evaluation, used by :class:`Pattern`)
        self.shapes: list[tuple] = []

    def _put(self, vals) -> None:
        pat = self._pattern
        k = self._k
        o, shape = pat.offsets[k], pat.shapes[k]
        self._buf[o:pat.offsets[k + 1]].reshape(shape)[...] = vals
        self._k = k + 1

    def add(self, rows: NDArray, cols: NDArray, vals: NDArray) -> None:
        if not self.jacobian:
            return
        if self._pattern is not None:
            self._put(vals)
            return
        rows = np.asarray(rows)
        cols = np.asarray(cols)
        vals = np.asarray(vals, dtype=float)
        shape = np.broadcast_shapes(rows.shape[:-1] + (rows.shape[-1], 1), cols.shape[:-1] + (1, cols.shape[-1]),
                                    vals.shape)
        # each block broadcast into a fresh array (the same entries in the same order as broadcast_to and a
        # copying reshape, without their Python overhead: ~80 calls on X3's recording evaluation)
        r = np.empty(shape, dtype=rows.dtype)
        r[...] = rows[..., :, None]
        c = np.empty(shape, dtype=cols.dtype)
        c[...] = cols[..., None, :]
        v = np.empty(shape)
        v[...] = vals
        self.rows.append(r.reshape(-1))
        self.cols.append(c.reshape(-1))
        self.vals.append(v.reshape(-1))
        self.shapes.append(shape)

    def add_diag(self, rows: NDArray, cols: NDArray, vals) -> None:
        """Diagonal block: ``rows``, ``cols`` shape (..., n), ``vals`` broadcastable to it."""
        if not self.jacobian:
            return
        if self._pattern is not None:
            self._put(vals)
            return
        rows = np.asarray(rows)
        vals = np.broadcast_to(np.asarray(vals, dtype=float), rows.shape)
        self.rows.append(rows.reshape(-1))
        self.cols.append(np.broadcast_to(np.asarray(cols), rows.shape).reshape(-1))
        self.vals.append(vals.reshape(-1))
        self.shapes.append(rows.shape)

    @property
    def pattern(self) -> "Pattern | None":
        """The pattern of a values-only evaluation (None while the pattern is being recorded)."""
        return self._pattern

    @property
    def buffer(self) -> NDArray:
        """The values array of a values-only evaluation (``(pattern.n_entries,)``), for an evaluator that
        writes every block itself, in the pattern's order (then :meth:`all_written`)."""
        return self._buf

    def reserve(self, size: int) -> int:
        """The offset in :attr:`buffer` of the next block of a values-only evaluation, which its caller
        writes itself (``size`` values, C order of the block's shape); the block counts as written."""
        pat, k = self._pattern, self._k
        o = pat.offsets[k]
        if pat.offsets[k + 1] - o != size:
            raise AssertionError("Jacobian blocks changed between evaluations")
        self._k = k + 1
        return o

    def all_written(self) -> None:
        """Every block of the pattern has been written into :attr:`buffer`."""
        self._k = len(self._pattern.shapes)

    def values(self) -> NDArray:
        if self._pattern is not None:
            if self._k != len(self._pattern.shapes):
                raise AssertionError("Jacobian blocks changed between evaluations")
            return self._buf
        return np.concatenate(self.vals) if self.vals else np.zeros(0)


class Pattern:
    """Sparsity pattern built once from the first set of triplets; later only values are refilled.

    Owns the map from the collected value order (block after block, as :class:`Triplets` writes
    them) to the ``data`` array of the CSC matrix: ``map`` (entry -> unique position) and ``_dest``
    (entry -> slot in ``data``, or among the dropped positions), so that one compiled pass adds
    the values into ``data`` (duplicates summed in entry order, as ``bincount(map, vals)``), with
    no COO -> CSC conversion and no copy of the index arrays (shared with every matrix).

    Structural zeros: the element blocks are stored dense, and many of their entries are zero
    whatever the state (e.g. the translation rows of an attachment do not depend on the rotation
    of ...).  :meth:`keep_only` drops positions known to be zero (found by the caller at random
    states), which halves the matrix and the work of the sparse LU.  Every later evaluation checks
    that the dropped values are still exactly zero; if one is not, the pattern takes it back
    (``nnz`` grows, the linear solver sees a new pattern and orders it afresh), so a wrong guess
    costs time, never accuracy.
    """

    def __init__(self, trip: Triplets, n: int) -> None:
        rows = np.concatenate(trip.rows) if trip.rows else np.zeros(0, int)
        cols = np.concatenate(trip.cols) if trip.cols else np.zeros(0, int)
        self.n = n
        self.n_entries = rows.size
        # block shapes and offsets in the value array (values-only evaluations write there)
        self.shapes = list(trip.shapes)
        sizes = [int(np.prod(s)) for s in self.shapes]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64).tolist()
        if self.offsets[-1] != self.n_entries:
            raise AssertionError("block shapes do not add up to the collected entries")
        # unique (row, col) pairs in CSC order (compiled counting sorts: np.unique's sort of the keys
        # took 0.3-0.9 s at 1.8M entries, N = 3000 chain)
        if rows.size and (min(rows.min(), cols.min()) < 0 or max(rows.max(), cols.max()) >= n):
            raise AssertionError("Jacobian entry outside the unknowns")
        inverse, self._rows_u, self._cols_u = _unique_positions(
            np.ascontiguousarray(rows, dtype=np.int64), np.ascontiguousarray(cols, dtype=np.int64), int(n))
        self.map = inverse
        self.n_unique = self._rows_u.size
        if self.n_unique >= 2 ** 31 - 1:
            raise ModelError(f"the Newton matrix has {self.n_unique} nonzero positions, more than int32 indexes "
                             f"(2^31 - 1): split the model or shorten the time element (smaller p)")
        self._take_u = None
        if self.n_unique == self.n_entries:
            self._take_u = np.empty(self.n_unique, dtype=np.int64)
            self._take_u[inverse] = np.arange(self.n_unique)
        # the CSC structure of every position is built on first use (:meth:`__getattr__`): the run's
        # first evaluation drops the structural zeros (keep_only) before any matrix is made
        self.keep = np.ones(self.n_unique, dtype=bool)

    _BUILT = frozenset(("_kept", "_dropped", "indices", "indptr", "_dest", "nnz", "_template"))

    def __getattr__(self, name):
        # only called for attributes not set yet: the structure of all positions, built lazily
        if name in Pattern._BUILT and "keep" in self.__dict__:
            self._build(self.keep)
            return self.__dict__[name]
        raise AttributeError(name)

    def _build(self, keep: NDArray) -> None:
        """CSC structure of the unique positions ``keep`` (bool, ``(n_unique,)``)."""
        n = self.n
        self.keep = keep
        # destination of each collected entry: its slot in ``data`` (kept) or -1 - its slot among
        # the dropped positions (compiled scatter-add, :func:`_scatter_values`)
        self._kept, self._dropped, self.indices, self.indptr, self._dest = _kept_structure(
            keep, self._rows_u, self._cols_u, self.map, int(n))
        self.nnz = self._kept.size
        self._template = sp.csc_matrix((np.zeros(self.nnz), self.indices, self.indptr), shape=(n, n))
        self._template.has_canonical_format = True

    def unique_values(self, vals: NDArray) -> NDArray:
        """Values ``(n_unique,)`` at every position of the full pattern (duplicates summed)."""
        if self._take_u is not None:
            return vals[self._take_u]
        # compiled: duplicates summed in entry order, bit for bit as np.bincount(map, weights=vals)
        return _sum_unique(self.map, np.ascontiguousarray(vals, dtype=float), self.n_unique)

    def keep_only(self, nonzero: NDArray) -> None:
        """Drop the positions where ``nonzero`` (bool, ``(n_unique,)``) is False."""
        self._build(np.asarray(nonzero, dtype=bool).copy())

    def matrix(self, vals: NDArray) -> sp.csc_matrix:
        """The CSC matrix of the collected values ``vals (n_entries,)`` (sorted indices, no duplicates)."""
        if vals.size != self.n_entries:
            raise AssertionError("Jacobian blocks changed between evaluations")
        # one compiled pass: duplicates summed in entry order (as np.bincount does, bit for bit)
        data = np.empty(self.nnz)
        lost = _scatter_values(self._dest, np.ascontiguousarray(vals, dtype=float), data,
                               np.empty(self._dropped.size))
        if lost:  # a position taken for a structural zero is not: take it back
            full = self.unique_values(vals)
            back = (full != 0) & ~self.keep
            self._build(self.keep | back)
            log.debug("Jacobian pattern: %d positions taken back (nnz %d)", int(back.sum()), self.nnz)
            data = full[self._kept]
        # a shallow copy of the template shares indices/indptr and the canonical-format flag; a new
        # object per evaluation (a backend may keep the previous matrix), no format check
        J = copy.copy(self._template)
        J.data = data
        return J
