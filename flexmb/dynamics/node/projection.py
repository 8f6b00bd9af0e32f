"""The joints at a time node: attachment frames, relative rates, multipliers as body momenta, and the
node-velocity projection in the mass metric, with everything that depends only on the model built
once per model.

At a node the end momenta give the body velocities ``w2 = M^-1 (pi + Lambda)`` (``nv,``), which
satisfy the velocity constraints ``G w = target`` only to O(h^2).  The output velocities are

    w = w2 - M^-1 G^T mu,   (G M^-1 G^T) mu = G w2 - target,

the least kinetic-energy change onto the constraints.  ``G`` (``n_rows x nv``, one row per
constrained component of a joint, plus the ``x_A . y_B`` row of a universal joint) is never
assembled: with ``C_b, C_a (nj, 7, 6)`` the rate blocks of a joint on its attachments' velocities
``nu = B w`` (``B (6, c)``: the body type's node velocity map),

* ``G w``: the joints' relative rates :func:`joint_rates` of ``nu_a, nu_b``;
* ``G^T mu``: the multipliers ``loc (nj, 7)`` as a wrench on B (:func:`joint_wrench`) handed to the
  bodies as generalized momenta (:func:`generalized`, the same map as the gauge reset's);
* ``G M^-1 G^T``: a sum over the bodies of ``G_b M_b^-1 G_b^T``, ``G_b`` the rows ``C B`` of G on the
  attachments of body ``b`` ("entry rows", grouped by body).  The rows, entry rows, sparsity pattern,
  its ordering and the symbolic factorization are fixed per model (:class:`NodeProjector`, built at the
  first node and cached on the compiled model); per node only the values are computed, into the
  factor's storage.

Every value is compiled, for every body type (:mod:`flexmb.dynamics.node.kernels`: the attachments'
velocity maps ``B`` padded to the widest body type; the joints' node laws of
:mod:`flexmb.dynamics.elements.joint_law`).  ``G M^-1 G^T`` is symmetric positive definite once
redundant equations are dropped: up to :data:`DENSE_ROWS` rows the whole projection is one compiled
call with a dense Cholesky (:func:`flexmb.dynamics.node.kernels.project_dense`); above, CHOLMOD (scikit-sparse, extra ``sparse``: analysis
once, numeric factorization per node) or without it SuperLU in symmetric mode on the pattern
permuted once by a minimum-degree ordering (``benchmarks/README.md``, "Output recording and the
node-velocity projection", has the measurements).  When the factorization declines or has a pivot
below :data:`SINGULAR_PIVOT` of its row's diagonal (a singular configuration, dependent rows left),
every backend takes the least-norm solution (:func:`_least_norm`, dense up to
:data:`LEAST_NORM_DENSE` rows, LSQR above): nothing along the null space, where an LU solve put
multipliers of ~1e16 (docs/theory.md section 4); when that fails too, no projection (``mu = None``)
or, for the set-up projection, least squares.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.linalg.lapack as lapack
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import NDArray

from flexmb import rotations as rot
from flexmb.dynamics.bodies.modal_residual import state_extras
from flexmb.dynamics.elements.joint_law import node_rate_rows, node_rate_wrench, node_rates
from flexmb.dynamics.kernels import frozen
from flexmb.dynamics.node import kernels as nk
from flexmb.dynamics.node.selection import Selection

#: largest number of constraint rows factored as a dense matrix (measured crossover, see module doc)
DENSE_ROWS = 60
#: backends of the projection's factorization (:class:`_SpdFactor`, :func:`node_projector`)
BACKENDS = ("auto", "dense", "cholmod", "superlu")


class NodeFrames:
    """Joint attachment frames at one node: ``xa, xb (nj, 3)``, ``Ra, Rb (nj, 3, 3)`` and the velocity
    maps ``nu = B w[cols]`` of both sides padded to the widest body type: ``Ba, Bb (nj, 6, cw)``, ``ca,
    cb (nj, cw)``, ``wa, wb (nj,)`` the columns used (0 on the ground)
    (:meth:`~flexmb.dynamics.elements.attachments.AttachmentSet.node_frames`); derived once on request:
    ``RaT`` (``Ra^T``), ``d = xb - xa``, ``ncross = x_A x y_B`` (the axis of a universal joint's cross
    condition; zero when the selection ``sel`` keeps no universal joint's cross condition; ``sel`` None:
    the model's full constraint set, :class:`~flexmb.dynamics.node.selection.Selection`)."""

    __slots__ = ("xa", "Ra", "Ba", "ca", "wa", "xb", "Rb", "Bb", "cb", "wb", "universal", "_RaT", "_d", "_ncross")

    def __init__(self, cm, st, sel: Selection | None = None):
        # read-only, like the ground side's arrays (kept by the attachments): one argument type for every
        # node kernel (a mix compiled each once per combination)
        fa, fb = frozen(cm.att_a.node_frames(cm, st)), frozen(cm.att_b.node_frames(cm, st))
        self.xa, self.Ra, self.Ba, self.ca, self.wa = fa
        self.xb, self.Rb, self.Bb, self.cb, self.wb = fb
        self.universal = (sel if sel is not None else Selection.full(cm)).any_universal
        self._RaT = self._d = self._ncross = None

    @classmethod
    def of_arrays(cls, side_a, side_b, universal: bool) -> "NodeFrames":
        """Frames from both sides' arrays ``(x, R, B, cols, width)`` computed elsewhere (the compiled node
        stage, :mod:`flexmb.dynamics.node.stage`), all read-only like :meth:`__init__`'s: the writable ones
        are the stage's fresh arrays, made read-only in place (per node: ~0.1 us each against ~0.5 us for
        :func:`~flexmb.dynamics.kernels.frozen`'s views); ``universal``: the selection's ``any_universal``."""
        fr = cls.__new__(cls)
        for a in side_a + side_b:
            if a.flags.writeable:
                a.flags.writeable = False
        fr.xa, fr.Ra, fr.Ba, fr.ca, fr.wa = side_a
        fr.xb, fr.Rb, fr.Bb, fr.cb, fr.wb = side_b
        fr.universal = universal
        fr._RaT = fr._d = fr._ncross = None
        return fr

    @property
    def RaT(self) -> NDArray:
        if self._RaT is None:
            self._RaT = np.swapaxes(self.Ra, 1, 2)
        return self._RaT

    @property
    def d(self) -> NDArray:
        if self._d is None:
            self._d = self.xb - self.xa
        return self._d

    @property
    def ncross(self) -> NDArray:
        if self._ncross is None:
            self._ncross = (rot.cross(self.Ra[:, :, 0], self.Rb[:, :, 1]) if self.universal
                            else np.zeros_like(self.xa))
        return self._ncross

    @property
    def sides(self) -> tuple:
        """The arguments of the compiled node kernels: ``(xa, Ra, xb, Rb, Ba, ca, wa, Bb, cb, wb)``."""
        return self.xa, self.Ra, self.xb, self.Rb, self.Ba, self.ca, self.wa, self.Bb, self.cb, self.wb


def node_frames(cm, st, sel: Selection | None = None) -> NodeFrames:
    """The :class:`NodeFrames` of node ``st`` under the selection ``sel``, computed once per node: kept
    on ``st`` with the arrays they were computed from (positions, rotations, body-type end values), so
    that the gauge reset of the end values and the node's output (projection, reactions) share them; a
    node whose arrays were replaced gets fresh frames.  The frames do not depend on the momenta or
    multipliers."""
    key = (st.x, st.R, state_extras(st))
    hit = getattr(st, "_node_frames", None)
    universal = (sel if sel is not None else Selection.full(cm)).any_universal
    if hit is not None and hit[0][0] is key[0] and hit[0][1] is key[1] and len(hit[0][2]) == len(key[2]) \
            and all(a is b for a, b in zip(hit[0][2], key[2])) and hit[1].universal == universal:
        return hit[1]
    fr = NodeFrames(cm, st, sel)
    st._node_frames = (key, fr)
    return fr


def keep_frames(st, fr: NodeFrames) -> None:
    """Keep ``fr``, the frames of the node ``st`` computed elsewhere, where :func:`node_frames` finds them."""
    st._node_frames = ((st.x, st.R, state_extras(st)), fr)


def attachment_velocities(fr: NodeFrames, w: NDArray) -> tuple[NDArray, NDArray]:
    """``nu_a, nu_b = B w (nj, 6)``: the velocities of both sides' attachments for body velocities
    ``w (nv,)``; zero on the ground."""
    n = fr.xa.shape[0]
    nu_a, nu_b = np.empty((n, 6)), np.empty((n, 6))
    w = np.ascontiguousarray(w, dtype=float)
    nk.attachment_velocities(fr.Ba, fr.ca, fr.wa, w, nu_a)
    nk.attachment_velocities(fr.Bb, fr.cb, fr.wb, w, nu_b)
    return nu_a, nu_b


def joint_rates(fr: NodeFrames, nu_a: NDArray, nu_b: NDArray) -> NDArray:
    """Rates ``(nj, 7)`` of the joints' relative coordinates for attachment velocities ``nu (nj, 6)``:
    velocity of B's origin relative to frame A, relative angular velocity (frame A components), and
    the rate ``(x_A x y_B) . (omega_b - omega_a)`` of a universal joint's ``x_A . y_B``
    (:func:`flexmb.dynamics.elements.joint_law.node_rates`)."""
    out = np.empty((nu_a.shape[0], 7))
    c = np.ascontiguousarray
    node_rates(c(nu_a, dtype=float), c(nu_b, dtype=float), fr.xa, fr.Ra, fr.xb, fr.Rb, fr.universal, out)
    return out


def body_rates(fr: NodeFrames, w: NDArray) -> NDArray:
    """:func:`joint_rates` for the body velocities ``w (nv,)`` (one compiled call,
    :func:`flexmb.dynamics.node.kernels.joint_rates`)."""
    out = np.empty((fr.xa.shape[0], 7))
    xa, Ra, xb, Rb, Ba, ca, wa, Bb, cb, wb = fr.sides
    nk.joint_rates(np.ascontiguousarray(w, dtype=float), xa, Ra, xb, Rb, Ba, ca, wa, Bb, cb, wb, fr.universal, out)
    return out


def rate_blocks(fr: NodeFrames) -> tuple[NDArray, NDArray]:
    """``C_b, C_a (nj, 7, 6)``: :func:`joint_rates` as ``C_b nu_b + C_a nu_a``."""
    n = fr.Ra.shape[0]
    Cb, Ca = np.empty((n, 7, 6)), np.empty((n, 7, 6))
    node_rate_rows(fr.xa, fr.Ra, fr.xb, fr.Rb, fr.universal, Cb, Ca)
    return Cb, Ca


def joint_wrench(fr: NodeFrames, loc: NDArray) -> NDArray:
    """The transpose of :func:`joint_rates` on B's side: multipliers ``loc (nj, 7)`` of the rate rows
    as the wrench on B ``(nj, 6)`` (force; moment at B's origin; inertial components).  A receives
    the opposite wrench transported to its origin (:func:`generalized`)."""
    out = np.empty((loc.shape[0], 6))
    node_rate_wrench(fr.Ra, fr.Rb, fr.universal, np.ascontiguousarray(loc, dtype=float), out)
    return out


def generalized(cm, fr: NodeFrames, lam: NDArray) -> NDArray:
    """Joint wrenches ``lam (nj, 6)`` (on B at its origin; inertial) as generalized momenta of the
    bodies ``(nv,)``: ``+lam`` through B's map on body b, ``-lam`` transported to A's origin on body a."""
    out = np.zeros(cm.nv)
    nk.generalized(np.ascontiguousarray(lam, dtype=float), fr.xa, fr.xb, fr.Ba, fr.ca, fr.wa, fr.Bb, fr.cb, fr.wb,
                   out)
    return out


def _cholmod():
    """scikit-sparse's CHOLMOD module, or None (optional dependency, extra ``sparse``)."""
    global _CHOLMOD
    if _CHOLMOD is None:
        try:
            from sksparse import cholmod
        except ImportError:  # pragma: no cover - depends on the installation
            cholmod = False
        _CHOLMOD = cholmod
    return _CHOLMOD or None


_CHOLMOD = None


#: relative pivot (diagonally scaled Cholesky, squared) below which the rows count as dependent
SINGULAR_PIVOT = 1e-12
#: the least-norm fallback of the sparse backends is dense up to this many rows (LSQR above)
LEAST_NORM_DENSE = 2000


def _numerically_singular(A: NDArray, c: NDArray) -> bool:
    """Whether the Cholesky factor ``c`` (lower) of ``A`` has a pivot below :data:`SINGULAR_PIVOT`
    relative to ``A``'s diagonal (scale-free: rows of different units)."""
    d = np.diag(A)
    return bool(np.any(np.diag(c) ** 2 < SINGULAR_PIVOT * np.where(d > 0, d, 1.0)))


def _least_norm(A: NDArray, b: NDArray) -> NDArray:
    """Least-norm solution of the symmetric ``A x = b`` (dense) in the metric of its diagonal: the
    eigenvalues of the scaled matrix below :data:`SINGULAR_PIVOT` are dropped.  At a change point of a
    loop (a parallelogram's cranks aligned) ``G M^-1 G^T`` loses a rank and the plain solve puts
    ``1 / sigma^2`` into the self-stress direction: impulses of 1e9 N s where the reactions are 30 N
    (they do not change the velocities, ``G^T n = 0``, but the reactions are recovered from them)."""
    d = np.diag(A)
    sc = 1.0 / np.sqrt(np.where(d > 0, d, 1.0))
    lam, V = np.linalg.eigh(sc[:, None] * A * sc[None, :])
    keep = lam > SINGULAR_PIVOT * max(float(lam.max()), 0.0)
    y = V[:, keep] @ ((V[:, keep].T @ (sc * b)) / lam[keep])
    return sc * y


class _SpdFactor:
    """Factorization of the ``n x n`` symmetric matrix with entries at ``(rows, cols)`` (fixed pattern).

    ``slot (k,)`` maps each pattern entry to its place in the storage (``np.bincount`` target, ``size``
    values); :meth:`solve` factors the values and solves.  ``backend``: ``"dense"`` (LAPACK Cholesky),
    ``"cholmod"`` (symbolic analysis once, numeric factorization per call), ``"superlu"`` (symmetric mode,
    minimum-degree ordering of the pattern computed once) or ``"auto"`` (:data:`BACKENDS`: dense up to
    :data:`DENSE_ROWS` rows, above CHOLMOD where scikit-sparse is installed, else SuperLU); the one chosen
    is ``self.backend``."""

    def __init__(self, n: int, rows: NDArray, cols: NDArray, backend: str = "auto"):
        if backend not in BACKENDS:
            raise ValueError(f"node projection backend={backend!r}; use one of {', '.join(BACKENDS)}")
        if backend == "cholmod" and _cholmod() is None:
            raise ValueError("node projection backend='cholmod': scikit-sparse is not installed (extra 'sparse'); "
                             "use 'auto', 'dense' or 'superlu'")
        self.n = n
        self.perm = self.iperm = None
        if backend == "dense" or (backend == "auto" and n <= DENSE_ROWS):
            self.backend = "dense"
            self.slot = rows * n + cols
            self.size = n * n
            return
        key = np.sort(rows * n + cols)
        key = key[np.r_[True, key[1:] != key[:-1]]]  # the pattern (np.unique, without its hashing)
        r0, c0 = key // n, key % n
        deg = np.bincount(r0, minlength=n).astype(float)
        dummy = np.where(r0 == c0, deg[r0] + 1.0, -1.0)  # an SPD matrix of the pattern (diagonally dominant)
        if backend == "cholmod" or (backend == "auto" and _cholmod() is not None):
            self.backend = "cholmod"
            pr, pc = rows, cols
        else:
            self.backend = "superlu"
            P = sp.csc_matrix((dummy, (r0, c0)), shape=(n, n))
            # SuperLU's perm_c: original index -> position (A Pc = L U); perm: position -> original index
            self.iperm = spla.splu(P, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                                   options=dict(SymmetricMode=True)).perm_c.astype(np.int64)
            self.perm = np.argsort(self.iperm)
            pr, pc = self.iperm[rows], self.iperm[cols]
        # CSC storage (permuted for SuperLU: Ap[i, j] = A[perm[i], perm[j]])
        keyp, self.slot = np.unique(pc * n + pr, return_inverse=True)
        self.indices = (keyp % n).astype(np.int32)
        self.indptr = np.searchsorted(keyp // n, np.arange(n + 1)).astype(np.int32)
        self.size = keyp.size
        if self.backend == "cholmod":
            self._chol = _cholmod().analyze(self.matrix(dummy[np.argsort(c0 * n + r0)]), mode="simplicial")

    def matrix(self, data: NDArray):
        """The stored matrix (dense, or CSC, permuted for SuperLU)."""
        if self.backend == "dense":
            return data.reshape(self.n, self.n)
        return sp.csc_matrix((data, self.indices, self.indptr), shape=(self.n, self.n))

    def solve(self, data: NDArray, rhs: NDArray, singular: str = "none") -> NDArray | None:
        """``A^-1 rhs`` for the values ``data`` of A; the least-norm solution when A is singular (a pivot
        below :data:`SINGULAR_PIVOT` of its diagonal, any backend); None only when that fails too and
        ``singular="none"``."""
        A = self.matrix(data)
        b = rhs if self.perm is None else rhs[self.perm]
        try:
            if self.backend == "dense":  # LAPACK directly: the SciPy wrappers cost more than n <= 60 itself
                c, info = lapack.dpotrf(A, lower=1, clean=0, overwrite_a=0)
                x = lapack.dpotrs(c, b, lower=1)[0] if info == 0 else None
                if info != 0 or _numerically_singular(A, c):
                    # at a singular configuration: no 1 / sigma^2 multipliers.  A = G M^-1 G^T is positive
                    # semi-definite, so a declined Cholesky (info > 0) is a zero eigenvalue that round-off
                    # made slightly negative (a node on a parallelogram's change point: -5e-17 of the
                    # largest, scaled), not an indefinite matrix: LU would solve it with multipliers of
                    # 1e16 and node velocities of 300 m/s (docs/theory.md, section 4)
                    x = _least_norm(A, b)
            elif self.backend == "cholmod":
                self._chol.cholesky_inplace(A)
                # a pivot below SINGULAR_PIVOT of its row's diagonal: singular, like the dense test
                d = A.diagonal()[self._chol.P()]
                if np.any(self._chol.D() < SINGULAR_PIVOT * np.where(d > 0, d, 1.0)):
                    x = None  # -> least norm (_fallback)
                else:
                    x = self._chol(b)
            else:
                lu = spla.splu(A, permc_spec="NATURAL", diag_pivot_thresh=0.0, options=dict(SymmetricMode=True))
                d = A.diagonal()
                x = None if np.any(np.abs(lu.U.diagonal()) < SINGULAR_PIVOT * np.where(d > 0, d, 1.0)) else lu.solve(b)
        except Exception as exc:
            chol = _cholmod()
            if not isinstance(exc, (sla.LinAlgError, RuntimeError) + ((chol.CholmodError,) if chol else ())):
                raise
            x = None
        if x is None or not np.all(np.isfinite(x)):
            x = self._fallback(A, b, singular)
            if x is None:
                return None
        return x if self.iperm is None else x[self.iperm]

    def dense(self, data: NDArray) -> NDArray:
        """The matrix of the values ``data`` as a dense array in the original row order."""
        if self.backend == "dense":
            return data.reshape(self.n, self.n)
        A = self._both_triangles(self.matrix(data)).toarray()
        return A if self.iperm is None else A[self.iperm][:, self.iperm]

    def _both_triangles(self, A):
        """The stored matrix ``A`` (CSC) with both triangles: CHOLMOD's storage may hold the lower one
        only, so it is symmetrized from that one; the other backends store both."""
        return (sp.tril(A) + sp.tril(A, -1).T).tocsc() if self.backend == "cholmod" else A

    def _fallback(self, A, b, singular: str):
        """Singular (a declined or near-zero pivot of the positive semi-definite ``G M^-1 G^T``: dependent
        rows, a singular configuration): the least-norm solution, which puts nothing along the null
        space (LU with partial pivoting, used before for the sparse backends, put multipliers of ~1e16
        there: the dense backend's finding, docs/theory.md section 4).  Dense eigen-decomposition up to
        :data:`LEAST_NORM_DENSE` rows, LSQR from zero (which converges to the minimum-norm solution of a
        consistent system) above; None when that fails and ``singular="none"``."""
        A = self._both_triangles(A)
        if A.shape[0] <= LEAST_NORM_DENSE:
            x = _least_norm(A.toarray() if sp.issparse(A) else np.asarray(A), b)
            if np.all(np.isfinite(x)):
                return x
        x = spla.lsqr(sp.csc_matrix(A), b, atol=1e-14, btol=1e-14)[0]
        if np.all(np.isfinite(x)):
            return x
        return None if singular == "none" else x


class NodeProjector:
    """The node-velocity projection of a compiled model: rows, labels, attachment pairs, sparsity
    pattern and ordering of ``G M^-1 G^T`` (built once; rebuilt by :func:`node_projector` when the
    set of constrained components changes, e.g. after redundant equations are dropped)."""

    def __init__(self, cm, sel: Selection, backend: str = "auto"):
        #: the selection's key (:class:`~flexmb.dynamics.node.selection.Selection`)
        self.key = sel.key
        #: the factorization backend asked for (:data:`BACKENDS`; the one chosen: ``factor.backend``)
        self.backend = backend
        mask = np.concatenate([sel.constrained, sel.universal[:, None]], axis=1)
        self.jj, self.cc = np.nonzero(mask)
        self.n = self.jj.size
        self._labels = None
        row_of = -np.ones((cm.nj, 7), dtype=np.int64)
        row_of[self.jj, self.cc] = np.arange(self.n)
        # prescribed rates of driven constrained components
        drv = [(row_of[j, c], j, c) for (j, c, _f, _df) in cm.jnt_drives if row_of[j, c] >= 0]
        self.drv_row, self.drv_j, self.drv_c = (np.array(v, dtype=np.int64).reshape(-1) for v in zip(*drv)) \
            if drv else (np.zeros(0, np.int64),) * 3
        # the rows of G on each attachment of a body ("entry rows": one per side, joint and constrained
        # component), grouped by body (side B before side A, rows in order): per body b the block
        # G_b M_b^-1 G_b^T of its entry rows, its pairs in row-major order (compiled: node.kernels.gram_values)
        side, joint, body = [], [], []
        for k, att in enumerate((cm.att_b, cm.att_a)):
            on = ~att.ground[self.jj]
            side.append(np.full(int(on.sum()), k, dtype=np.int64))
            joint.append(np.nonzero(on)[0])  # positions in the rows
            body.append(att.body[self.jj[on]])
        row = np.concatenate(joint)
        body = np.concatenate(body)
        order = np.argsort(body, kind="stable")
        self.ent_side = np.ascontiguousarray(np.concatenate(side)[order])
        self.ent_row = row[order]
        self.ent_joint = np.ascontiguousarray(self.jj[self.ent_row], dtype=np.int64)
        self.ent_comp = np.ascontiguousarray(self.cc[self.ent_row], dtype=np.int64)
        self.ent_body = np.ascontiguousarray(body[order], dtype=np.int64)
        self.ptr = np.ascontiguousarray(np.flatnonzero(np.r_[True, self.ent_body[1:] != self.ent_body[:-1], True])
                                        if body.size else np.zeros(1, np.int64), dtype=np.int64)
        rows, cols = [], []
        for b0, b1 in zip(self.ptr[:-1], self.ptr[1:]):
            r = self.ent_row[b0:b1]
            rows.append(np.repeat(r, r.size))
            cols.append(np.tile(r, r.size))
        rows = np.concatenate(rows) if rows else np.zeros(0, np.int64)
        cols = np.concatenate(cols) if cols else np.zeros(0, np.int64)
        self.factor = _SpdFactor(self.n, rows, cols, backend)
        self._no_target = frozen(np.zeros(self.n))
        self.pair_slot = np.ascontiguousarray(self.factor.slot, dtype=np.int64)
        self.jj, self.cc = (np.ascontiguousarray(a, dtype=np.int64) for a in (self.jj, self.cc))

    def _singular_node(self, cm, st, data: NDArray, viol: NDArray, found=False):
        """At a node on a singular configuration of the loops (``found``, or looked up): the rows'
        multipliers by :func:`deflated_solve` (no component along the self-stresses); else None."""
        if found is False:
            found = singular_node(st, self.key)
        if found is None:
            return None
        labels, n, _ = found
        row = {lab: r for r, lab in enumerate(self.labels)}
        V = np.zeros((self.n, n.shape[1]))
        for a, lab in enumerate(labels):
            if lab in row:
                V[row[lab]] = n[a]
        rs = np.array([1.0 / cm.length_scale if isinstance(c, int) and c < 3 else 1.0 for _, c in self.labels])
        return deflated_solve(self.factor.dense(data), viol, rs, V)

    @property
    def labels(self) -> list:
        """Row labels ``(joint, component)``, component 0-5 or ``"cross"`` (built at the first request)."""
        if self._labels is None:
            self._labels = [(int(j), int(c) if c < 6 else "cross") for j, c in zip(self.jj, self.cc)]
        return self._labels

    def target(self, cm, t: float) -> NDArray:
        """Right-hand side of ``G w = target`` at ``t``: the drive rates of driven components (read-only,
        like the frames: one argument type for the kernels)."""
        if not self.drv_row.size:
            return self._no_target
        from flexmb.dynamics.elements.joints import drive_targets

        out = np.zeros(self.n)
        _, rate = drive_targets(cm, np.array([t]))
        out[self.drv_row] = rate[self.drv_j, self.drv_c, 0]
        return frozen(out)

    def matrix_values(self, cm, st, fr: NodeFrames, Mi: NDArray) -> NDArray:
        """Values of ``G M^-1 G^T`` in the factor's storage; ``Mi`` the inverse mass blocks
        (:func:`inverse_mass_blocks`): per body, the block of its entry rows ``g = C[joint, comp] B``
        (compiled: :func:`flexmb.dynamics.node.kernels.gram_values`)."""
        Cb, Ca = rate_blocks(fr)
        out = np.zeros(self.factor.size)
        nk.gram_values(np.stack([Cb, Ca]), np.stack([fr.Bb, fr.Ba]), self.ent_side, self.ent_joint, self.ent_comp,
                       self.ent_body, self.ptr, self.pair_slot, np.stack([fr.wb, fr.wa]), Mi, out)
        return out

    def project(self, cm, st, w2: NDArray, fr: NodeFrames, singular: str = "none", Mi: NDArray | None = None):
        """``(w, mu, loc)``: the projected velocities ``(nv,)``, the multipliers ``mu (n,)`` of the rows
        and the same as ``loc (nj, 7)`` (``mu``, ``loc`` None and ``w = w2`` when the rows are
        singular and ``singular="none"``).  ``Mi``: the inverse mass blocks, if computed."""
        if Mi is None:
            Mi = inverse_mass_blocks(cm, st)
        w2 = np.ascontiguousarray(w2, dtype=float)
        viol = np.empty(self.n)
        xa, Ra, xb, Rb, Ba, ca, wa, Bb, cb, wb = fr.sides
        nk.violation(w2, xa, Ra, xb, Rb, Ba, ca, wa, Bb, cb, wb, fr.universal, self.jj, self.cc,
                     self.target(cm, st.t), viol)
        data = self.matrix_values(cm, st, fr, Mi)
        mu = self._singular_node(cm, st, data, viol)
        if mu is None:
            mu = self.factor.solve(data, viol, singular)
        if mu is None:
            return w2, None, None
        return self._corrected(cm, fr, Mi, w2, mu)

    def _corrected(self, cm, fr: NodeFrames, Mi: NDArray, w2: NDArray, mu: NDArray):
        """``(w, mu, loc)`` for the rows' multipliers ``mu``: ``w = w2 - M^-1 G^T mu``."""
        w, loc = np.empty(cm.nv), np.empty((cm.nj, 7))
        xa, Ra, xb, Rb, Ba, ca, wa, Bb, cb, wb = fr.sides
        mu = np.ascontiguousarray(mu, dtype=float)
        nk.correction(Mi, cm.vel_off, body_widths(cm), Ra, Rb, fr.universal, xa, xb, Ba, ca, wa, Bb, cb, wb,
                      self.jj, self.cc, mu, w2, loc, w)
        return w, mu, loc

    def project_momenta(self, cm, st, p: NDArray, fr: NodeFrames, Mi: NDArray | None = None,
                        tol: float = SINGULAR_PIVOT):
        """:meth:`project` of the momenta ``p (nv,)``: ``(w, w2, mu, loc)`` with ``w2 = M^-1 p``.  With the
        dense factor the whole projection is one compiled call
        (:func:`flexmb.dynamics.node.kernels.project_dense`); a Cholesky that declines (a pivot below
        ``tol``) hands the matrix to the factor's solve with its singular-row handling."""
        if Mi is None:
            Mi = inverse_mass_blocks(cm, st)
        p = np.ascontiguousarray(p, dtype=float)
        nvb = body_widths(cm)
        if self.factor.backend != "dense":
            w2 = np.empty(cm.nv)
            nk.apply_blocks(Mi, cm.vel_off, nvb, p, w2)
            w, mu, loc = self.project(cm, st, w2, fr, Mi=Mi)
            return w, w2, mu, loc
        n = self.n
        w2, A, mu, loc, w = np.empty(cm.nv), np.zeros((n, n)), np.empty(n), np.empty((cm.nj, 7)), np.empty(cm.nv)
        singular = singular_node(st, self.key)
        if singular is not None:
            tol = np.inf  # the compiled Cholesky declines: the matrix and the violation for the deflated solve
        xa, Ra, xb, Rb, Ba, ca, wa, Bb, cb, wb = fr.sides
        if nk.project_dense(Mi, cm.vel_off, nvb, p, xa, Ra, xb, Rb, Ba, ca, wa, Bb, cb, wb, fr.universal, self.jj,
                            self.cc, self.target(cm, st.t), self.ent_side, self.ent_joint, self.ent_comp,
                            self.ent_body, self.ptr, self.pair_slot, tol, w2, A, mu, loc, w):
            return w, w2, mu, loc
        x = self._singular_node(cm, st, A.reshape(-1), mu, singular)
        mu = self.factor.solve(A.reshape(-1), mu, "none") if x is None else x  # (mu holds the violation)
        if mu is None:
            return w2, w2, None, None
        w, mu, loc = self._corrected(cm, fr, Mi, w2, mu)
        return w, w2, mu, loc


def singular_node(st, key: bytes):
    """The self-stresses of the loops at a node on a singular configuration, as the node carries them
    (``st.self_stresses``, set by the singular-node check of the element that ended there,
    :func:`flexmb.dynamics.variants.singular_node.node_self_stresses`) for the constraint selection of
    key ``key``, or None (a regular node, or not checked)."""
    hit = getattr(st, "self_stresses", None)
    return hit[1] if hit is not None and hit[0] == key else None


def deflated_solve(A: NDArray, b: NDArray, rs: NDArray, V: NDArray) -> NDArray:
    """``mu (n,)`` with ``A mu = b`` on the complement of the self-stresses ``V (n, k)`` (orthonormal in
    the rows scaled by ``rs``: ``1/L`` on translations) and no component along them: with
    ``A^ = D A D``, ``D = diag(rs)``, ``P = I - V V^T``, ``(P A^ P + V V^T) y = P D b`` and ``mu = D y``.
    At a node on a change point ``A = G M^-1 G^T`` is singular along ``V`` (``G^T D V = 0``) and
    nearly so at 1e-5 of one (its eigenvalue ~ sigma^2): the plain solve puts ``(G w2)_V / sigma^2``
    there, multipliers of 1e16 (exactly singular: LU) or a 1 N s impulse at 9e-6 of the change point
    (p = 1: reactions of 140 N at the neighbouring nodes against 18 N), which leave the velocities alone
    (``G^T D V = 0``) but are recovered as node reactions; here they are zero (least norm)."""
    P = np.eye(rs.size) - V @ V.T
    Ah = rs[:, None] * A * rs[None, :]
    return rs * _least_norm(P @ Ah @ P + V @ V.T, P @ (rs * b))


def body_widths(cm) -> NDArray:
    """Velocity coordinates of each body ``(nb,)`` (kept in ``cm.cache``)."""
    hit = cm.cache.body_widths
    if hit is None:
        hit = np.zeros(cm.nb, dtype=np.int64)
        for grp in cm.groups:
            hit[grp.bodies] = grp.nv
        cm.cache.body_widths = hit
    return hit


def inverse_mass_blocks(cm, st) -> NDArray:
    """The inverse mass blocks of every body at a node, ``(nb, cw, cw)`` padded to the widest body
    type (each group's ``inverse_mass_blocks``)."""
    cw = max((g.nv for g in cm.groups), default=6)
    if len(cm.groups) == 1 and cm.groups[0].nv == cw:
        return np.ascontiguousarray(cm.groups[0].inverse_mass_blocks(st))
    out = np.zeros((cm.nb, cw, cw))
    for grp in cm.groups:
        out[grp.bodies, :grp.nv, :grp.nv] = grp.inverse_mass_blocks(st)
    return out


def apply_blocks(cm, blocks: NDArray, x: NDArray) -> NDArray:
    """The block-diagonal matrix ``blocks`` (:func:`inverse_mass_blocks`) times ``x (nv,)``."""
    out = np.empty(cm.nv)
    nk.apply_blocks(blocks, cm.vel_off, body_widths(cm), np.ascontiguousarray(x, dtype=float), out)
    return out


def node_projector(cm, sel: Selection | None = None, backend: str | None = None) -> NodeProjector:
    """The :class:`NodeProjector` of the selection ``sel`` (None: the model's full set) (built at the first
    call, kept in ``cm.cache``; rebuilt when the selection changes).  ``backend``: the factorization of
    ``G M^-1 G^T`` (:data:`BACKENDS`; default: the cached projector's, at first ``"auto"``); a projector
    built with another backend replaces the cached one, and the model's later projections use it (tests
    compare the backends so)."""
    sel = sel if sel is not None else Selection.full(cm)
    proj = cm.cache.node_projector
    want = backend if backend is not None else (proj.backend if proj is not None else "auto")
    if proj is None or proj.key != sel.key or proj.backend != want:
        proj = NodeProjector(cm, sel, want)
        cm.cache.node_projector = proj
    return proj
