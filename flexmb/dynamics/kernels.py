"""The compilation of flexmb's kernels (:func:`jit_kernel`) and what they share: the rotation helpers, the
generic scatter helpers and the kernels' fixed-shape scratch on the stack (:func:`scratch`).  The laws themselves live with their owners, one compiled implementation each:
the rigid body (:mod:`flexmb.dynamics.bodies.rigid_kernels`), the joints
(:mod:`flexmb.dynamics.elements.joint_law`), the force elements (:mod:`flexmb.dynamics.elements.force_law`),
the node projection (:mod:`flexmb.dynamics.node.kernels`), the end values and the predictor
(:mod:`flexmb.dynamics.march.kernels`).  Each kernel loops over the bodies (or joints) of one type and
the points of a time element and computes values only; the sparsity structure (which value goes to
which row and column) is fixed per model and built once in NumPy next to each kernel's caller.

The rotation helpers reproduce :mod:`flexmb.rotations` point by point (power series in
``x = |theta|^2`` below ``x = 4``, closed forms above, the same tables), so the kernels agree with
the NumPy functions to round-off (``tests/test_kernels.py``).

Compilation: ``nopython``, ``fastmath`` off, ``cache=True`` (compiled once per machine and
signature, then loaded from the on-disk cache: a second process pays no compilation).  When
numba cannot write a cache next to this module (read-only install) it uses ``NUMBA_CACHE_DIR``
or the user cache directory; when no cache location is usable the kernels compile in memory
once per process and a note is logged.  Compiled callers pass flags and sizes as typed values
(``np.bool_(True)``, ``np.int64(6)``, a variable), never as literal constants: numba compiles a callee
once more for every literal argument (``Literal[bool](True)``), and that duplicate reaches down through
every kernel the flag is passed to (``tests/test_compile_specializations.py``).  Likewise numba types a
read-only array apart from a writable one: the model's constant arrays reach the kernels read-only and
C-contiguous (:func:`frozen`; empty stand-ins made in compiled code are read-only module constants), so
that models whose data happen to be built one way or the other share one specialization of the fused
element (its call tree took ~70 s of CPU to compile, and a clean test run compiled it six times).
"""
from __future__ import annotations

import logging

import numpy as np
from numba import njit, types
from numba.extending import intrinsic, overload

from flexmb import rotations as _rot
from flexmb.numba_cache import refresh as _refresh_cache

log = logging.getLogger(__name__)
_refresh_cache()  # stale cached kernels of changed callees removed first (flexmb/numba_cache.py)

_SER = _rot.SERIES
S_ALPHA = np.ascontiguousarray(_SER["alpha"])
S_BETA = np.ascontiguousarray(_SER["beta"])
S_GAMMA = np.ascontiguousarray(_SER["gamma"])
S_DELTA = np.ascontiguousarray(_SER["delta"])
S_DELTA_X = np.ascontiguousarray(_SER["delta_x"])
X_SERIES = float(_rot.X_SERIES)


def frozen(value):
    """``value`` with every array in it (an array, or nested tuples of them; other items as they are)
    read-only and C-contiguous: the form in which model constants reach the kernels (module docstring).
    A read-only contiguous array is returned as it is; a writable one as a read-only view (the owner's
    flags are left alone); a non-contiguous one as a read-only copy."""
    if isinstance(value, tuple):
        return tuple(frozen(v) for v in value)
    if not isinstance(value, np.ndarray):
        return value
    if not value.flags.c_contiguous:
        value = np.ascontiguousarray(value)
    if value.flags.writeable:
        value = value.view()
        value.flags.writeable = False
    return value


def jit_kernel(fn):
    """``njit(cache=True)``; without a usable cache location, ``njit`` with a logged note."""
    try:
        return njit(cache=True, fastmath=False, nogil=True)(fn)
    except RuntimeError as exc:  # numba: "cannot cache function ...: no locator available"
        log.info("numba cannot cache %s (%s); set NUMBA_CACHE_DIR to a writable directory to avoid "
                 "compiling it in every process", fn.__name__, exc)
        return njit(cache=False, fastmath=False, nogil=True)(fn)


def as_unsigned(a):
    """The integer array ``a`` viewed as the unsigned integers of its width (no copy), for index arrays
    whose entries are known non-negative: numba guards every access through a signed index against a
    negative value (Python's wraparound: a compare and a select per access, which also keeps the loop from
    being optimized), not through an unsigned one.  In the sparse LU's loops
    (:mod:`flexmb.dynamics.solve.refactor_lu`), the same bits: X3's Newton matrix (378 unknowns) 0.79x the
    time per refactorization and 0.69x per solve, the N = 1000 chain's (48,000) 0.87x and 0.79x.  Compiled
    code and Python alike."""
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


@overload(as_unsigned)
def _as_unsigned(a):  # pragma: no cover - compiled
    if not isinstance(a, types.Array) or not isinstance(a.dtype, types.Integer):
        return None
    if not a.dtype.signed:
        return lambda a: a
    kind = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[a.dtype.bitwidth]
    return lambda a: a.view(kind)


# ============================================================================ scratch arrays
def scratch(shape):
    """``np.empty(shape)`` (float64) for a kernel's scratch of a fixed shape (literal integers, e.g.
    ``scratch((3, 3))``): in compiled code an array on the calling kernel's stack, without numba's heap
    allocation and its reference counting.  Such an array lives as long as the kernel's call: it is never
    returned nor kept (a kernel's outputs are its arguments or ``np.empty``).  Why: every ``np.empty`` in
    compiled code is a heap allocation, a free and reference counting of its memory (~50 ns for a 3 x 3
    array in a loop, against ~1 ns on the stack).  The compiled pendulum element made 426 allocations per
    call (``NUMBA_NRT_STATS``), 300 with the laws' scratch here: 99-104 -> 93-94 us per call; X3's element
    evaluation 414 -> 259, 80-82 -> 72-73 us (benchmarks/README.md, session 14).  Python: ``np.empty``."""
    return np.empty(shape)


def scratch_zeros(shape):
    """:func:`scratch` filled with zeros (``np.zeros(shape)``)."""
    return np.zeros(shape)


def _literal_dims(shape):
    """The dimensions of a literal shape type (an integer or a tuple of integers), else None."""
    if isinstance(shape, types.IntegerLiteral):
        return (shape.literal_value,)
    if isinstance(shape, types.BaseTuple) and shape.types and all(isinstance(t, types.IntegerLiteral)
                                                                   for t in shape.types):
        return tuple(t.literal_value for t in shape.types)
    return None


def _stack_array(dims, zero: bool):
    """The type and code generation of a C-contiguous float64 array of ``dims`` in an ``alloca`` of the
    function being compiled (its entry block: one slot whatever loop the call is in) without a meminfo
    (numba's reference counting skips a null meminfo)."""
    from numba.core import cgutils
    from numba.np.arrayobj import make_array, populate_array

    arrty = types.Array(types.float64, len(dims), "C")
    size = int(np.prod(dims, dtype=np.int64))

    def codegen(context, builder, sig, args):  # pragma: no cover - compile time
        buf = cgutils.alloca_once(builder, context.get_data_type(types.float64), size=max(size, 1))
        if zero:
            cgutils.memset(builder, buf, context.get_constant(types.intp, 8 * size), 0)
        ary = make_array(arrty)(context, builder)
        intp = context.get_value_type(types.intp)
        strides, step = [], 8
        for d in reversed(dims):
            strides.insert(0, step)
            step *= d
        populate_array(ary, data=buf, shape=[intp(d) for d in dims], strides=[intp(s) for s in strides],
                       itemsize=intp(8), meminfo=None)
        return ary._getvalue()

    return arrty, codegen


@intrinsic
def _stack(typingctx, shape, zero):  # pragma: no cover - compile time
    """:func:`_stack_array` of a literal ``shape``, zero-filled for a literal ``zero`` True."""
    dims = _literal_dims(shape)
    if dims is None or not isinstance(zero, types.BooleanLiteral):
        return None
    arrty, codegen = _stack_array(dims, zero.literal_value)
    return arrty(shape, zero), codegen


def _overload_stack(zero: bool):
    """The compiled :func:`scratch` (``zero`` False) or :func:`scratch_zeros` (True)."""
    def impl(shape):  # pragma: no cover - compile time
        if _literal_dims(shape) is None:
            return None
        return (lambda shape: _stack(shape, True)) if zero else (lambda shape: _stack(shape, False))
    return impl


# inlined into the calling kernel (numba IR), so that the alloca is the kernel's own, not a frame that ends
# before the array is used
overload(scratch, prefer_literal=True, inline="always")(_overload_stack(False))
overload(scratch_zeros, prefer_literal=True, inline="always")(_overload_stack(True))


# ============================================================================ rotation helpers
@jit_kernel
def _horner(c, x):
    out = c[c.size - 1]
    for k in range(c.size - 2, -1, -1):
        out = out * x + c[k]
    return out


@jit_kernel
def coeffs_exp_tangent(x):
    """``alpha = sin a / a``, ``beta = (1 - cos a)/a^2``, ``gamma = (a - sin a)/a^3`` at ``x = a^2``."""
    if x < X_SERIES:
        return _horner(S_ALPHA, x), _horner(S_BETA, x), _horner(S_GAMMA, x)
    a = np.sqrt(x)
    alpha = np.sin(a) / a
    sh = np.sin(0.5 * a) / a
    beta = 2.0 * sh * sh
    return alpha, beta, (1.0 - alpha) / x


@jit_kernel
def coeffs_delta(x):
    """``delta = (1 - (a/2) cot(a/2)) / a^2`` and ``d delta / dx`` at ``x = a^2``."""
    if x < X_SERIES:
        return _horner(S_DELTA, x), _horner(S_DELTA_X, x)
    a = np.sqrt(x)
    sh = np.sin(0.5 * a)
    kappa = 0.5 * a * np.cos(0.5 * a) / sh
    delta = (1.0 - kappa) / x
    kappa_x = kappa / (2.0 * x) - 1.0 / (8.0 * sh * sh)
    return delta, -(kappa_x + delta) / x


@jit_kernel
def quadratic(c0, c1, c2, t, out):
    """``out = c0 I + c1 skew(t) + c2 t t^T`` (3x3)."""
    for a in range(3):
        for b in range(3):
            out[a, b] = c2 * t[a] * t[b]
        out[a, a] += c0
    out[0, 1] -= c1 * t[2]
    out[0, 2] += c1 * t[1]
    out[1, 0] += c1 * t[2]
    out[1, 2] -= c1 * t[0]
    out[2, 0] -= c1 * t[1]
    out[2, 1] += c1 * t[0]


@jit_kernel
def exp_tangent(t, R, T):
    """``R = exp(t)``, ``T = tangent(t)`` (3x3 each)."""
    x = t[0] * t[0] + t[1] * t[1] + t[2] * t[2]
    alpha, beta, gamma = coeffs_exp_tangent(x)
    quadratic(1.0 - beta * x, alpha, beta, t, R)
    quadratic(alpha, beta, gamma, t, T)


@jit_kernel
def tangent_inv_and_d(t, v, Ti, dTi):
    """``Ti = T(t)^-1`` and ``dTi = d(T(t)^-1 v)/dt`` (3x3 each), as :func:`flexmb.rotations.d_tangent_inv`."""
    x = t[0] * t[0] + t[1] * t[1] + t[2] * t[2]
    delta, delta_x = coeffs_delta(x)
    quadratic(1.0 - delta * x, -0.5, delta, t, Ti)
    tv = t[0] * v[0] + t[1] * v[1] + t[2] * v[2]
    txv0 = t[1] * v[2] - t[2] * v[1]
    txv1 = t[2] * v[0] - t[0] * v[2]
    txv2 = t[0] * v[1] - t[1] * v[0]
    ttv0 = t[1] * txv2 - t[2] * txv1
    ttv1 = t[2] * txv0 - t[0] * txv2
    ttv2 = t[0] * txv1 - t[1] * txv0
    ttv = (ttv0, ttv1, ttv2)
    # -c1 skew(v) with c1 = -1/2; c2 (tv I + t v^T - 2 v t^T); 2 c2_x ttv t^T (c1_x = 0)
    for a in range(3):
        for b in range(3):
            dTi[a, b] = delta * (t[a] * v[b] - 2.0 * v[a] * t[b]) + 2.0 * (delta_x * ttv[a]) * t[b]
        dTi[a, a] += delta * tv
    dTi[0, 1] += -0.5 * v[2]
    dTi[0, 2] += 0.5 * v[1]
    dTi[1, 0] += 0.5 * v[2]
    dTi[1, 2] += -0.5 * v[0]
    dTi[2, 0] += -0.5 * v[1]
    dTi[2, 1] += 0.5 * v[0]

# ============================================================================ generic helpers
@jit_kernel
def scatter_wrench(res, rows, BT, w, fac):
    """``res[rows] += fac * BT @ w`` unbuffered (repeated rows accumulate): the generalized force of
    wrenches ``w (m, p, 6)`` through the maps ``BT (m, p, r, 6)`` onto the rows ``rows (m, p, r)``
    (each product summed as ``np.einsum`` sums six terms: two interleaved partial sums)."""
    m, p, nr = BT.shape[0], BT.shape[1], BT.shape[2]
    for q in range(m):
        for k in range(p):
            for a in range(nr):
                res[rows[q, k, a]] += fac * dot6(BT[q, k, a], w[q, k])


@jit_kernel
def dot6(a, b):
    """``a . b`` of two 6-vectors summed as ``np.einsum`` does (two interleaved partial sums)."""
    s0 = a[0] * b[0]
    s1 = a[1] * b[1]
    s0 += a[2] * b[2]
    s1 += a[3] * b[3]
    s0 += a[4] * b[4]
    s1 += a[5] * b[5]
    return s0 + s1


@jit_kernel
def scatter_add(res, rows, vals):
    """``res[rows] += vals`` unbuffered (repeated rows accumulate, like ``np.add.at``), for index and
    value arrays of the same shape (flattened here, C order)."""
    r = rows.ravel()
    v = vals.ravel()
    for a in range(r.size):
        res[r[a]] += v[a]


# ============================================================================ Jacobian value writers
@jit_kernel
def put(buf, o, a, fac):
    """``buf[o:o + a.size] = fac * a`` (C order); returns the next offset."""
    f = a.reshape(a.size)
    for q in range(a.size):
        buf[o + q] = fac * f[q]
    return o + a.size


@jit_kernel
def put_chain(buf, o, dR, rowsel, pos, J, sgn):
    """``sgn dR[rowsel[z], k] @ J[pos[z], k]`` for every ``z``, ``k`` (``dR (n, p, r, 6)``, ``J (m, p, 6,
    c)``) into ``buf`` from ``o`` (C order of ``(z, k, r, c)``); returns the next offset: the chain rule of
    one block (:func:`flexmb.dynamics.elements.attachments.chain`)."""
    p, nr, nc = J.shape[1], dR.shape[2], J.shape[3]
    for z in range(pos.size):
        j, q = rowsel[z], pos[z]
        for k in range(p):
            for a in range(nr):
                for e in range(nc):
                    s = 0.0
                    for b in range(6):
                        s += dR[j, k, a, b] * J[q, k, b, e]
                    buf[o] = sgn * s
                    o += 1
    return o
