"""Model constants packed once per run into a few flat arrays, unpacked in compiled code as views.

Why: numba unboxes every array argument of a kernel call (~0.1 us each, more for read-only ones, and
2-5x that in a run where the arrays are cold), so a kernel that receives a small model's ~80 constant
arrays in tuples pays ~10 us per call before it computes anything (``benchmarks/README.md``, "Small
models after PEND2": 20 arrays as arguments 2.8 us per call, the same concatenated into one flat array
with an offsets array 0.53-0.63 us).  The constants are the same at every call: they are copied once
into one flat array per kind and handed over as ``KINDS`` flats plus an index ``M``.

A *kind* is a dtype and a writability (numba types a read-only array apart from a writable one, and the
kernels that receive the unpacked pieces have been compiled for one of them:
:func:`flexmb.dynamics.kernels.frozen`); :data:`KINDS` lists them in the order :func:`pack` returns them.
``M (n_pieces, 5) int64``: piece ``k`` is ``flat[M[k, 0]:M[k, 1]]`` of its kind's flat, of shape
``M[k, 2:2 + ndim]`` (unused trailing entries 0).  The compiled views :func:`v1`, :func:`v2`, :func:`v3`
take one row of ``M`` (a row, not a literal index: numba would compile a specialization per literal)
and return a C-contiguous view of the flat's kind (no copy); a scalar (a flag, a size) is a piece of
one element read as ``flat[M[k, 0]]``.
"""
from __future__ import annotations

import numpy as np

from flexmb.dynamics.kernels import jit_kernel  # the kernels' compilation (cache, no fastmath)

#: (dtype, writable) of the flats, in :func:`pack`'s order
KINDS = ((np.float64, False), (np.float64, True), (np.int64, False), (np.int64, True), (np.int32, True),
         (np.bool_, False))
#: the kinds by name: read-only / writable float64, read-only / writable int64, writable int32, read-only bool
FR, FW, IR, IW, JW, BR = range(len(KINDS))


def pack(pieces) -> tuple:
    """``pieces``: a sequence of ``(kind, array or scalar)`` (kind an index of :data:`KINDS`; an array of up
    to 3 dimensions of that dtype, or a scalar stored as one element).  Returns the flats of every kind
    (read-only where the kind is; fresh copies: later changes of the pieces are not seen) followed by
    ``M`` (module docstring)."""
    parts = [[] for _ in KINDS]
    sizes = [0] * len(KINDS)
    M = np.zeros((len(pieces), 5), dtype=np.int64)
    for k, (kind, value) in enumerate(pieces):
        dtype = KINDS[kind][0]
        a = np.asarray(value)
        if a.dtype != dtype or a.ndim > 3:
            raise TypeError(f"pack: piece {k} is {a.dtype} of {a.ndim} dimensions; kind {kind} takes "
                            f"{np.dtype(dtype)} of at most 3")
        M[k, 0], M[k, 1] = sizes[kind], sizes[kind] + a.size
        M[k, 2:2 + a.ndim] = a.shape
        parts[kind].append(a.ravel())
        sizes[kind] += a.size
    flats = []
    for (dtype, writable), p in zip(KINDS, parts):
        flat = np.ascontiguousarray(np.concatenate(p) if p else np.zeros(0, dtype), dtype=dtype)
        flat.flags.writeable = writable
        flats.append(flat)
    M.flags.writeable = False
    return tuple(flats) + (M,)


def extend(packing: tuple, pieces) -> tuple:
    """``packing`` (a :func:`pack` result) with ``pieces`` appended: the same flats and ``M`` as
    ``pack(old pieces + pieces)``, without going over the old pieces again (a packing whose last pieces
    change, e.g. the LU structure behind a compiled Newton loop after fresh pivots:
    :meth:`flexmb.dynamics.solve.compiled_loop.FusedNewton.packed`)."""
    *flats, M = packing
    *more, M_more = pack(pieces)
    M_new = np.array(M_more)
    for k, (kind, _value) in enumerate(pieces):
        M_new[k, :2] += flats[kind].size
    out = []
    for (dtype, writable), old, add in zip(KINDS, flats, more):
        flat = np.concatenate([old, add])  # (a copy, like pack's)
        flat.flags.writeable = writable
        out.append(flat)
    M_all = np.concatenate([M, M_new])
    M_all.flags.writeable = False
    return tuple(out) + (M_all,)


@jit_kernel
def v1(flat, m):  # pragma: no cover - compiled
    """The 1-d piece of row ``m`` of ``M``: a view of ``flat``."""
    return flat[m[0]:m[1]]


@jit_kernel
def v2(flat, m):  # pragma: no cover - compiled
    """The 2-d piece of row ``m`` of ``M``: a view of ``flat``."""
    return flat[m[0]:m[1]].reshape((m[2], m[3]))


@jit_kernel
def v3(flat, m):  # pragma: no cover - compiled
    """The 3-d piece of row ``m`` of ``M``: a view of ``flat``."""
    return flat[m[0]:m[1]].reshape((m[2], m[3], m[4]))
