"""The linearized equations of motion at an equilibrium: :func:`linearize`.

Two forms, both from the p = 1 time element (:mod:`flexmb.linear.pencil`):

* the *descriptor pencil* ``E y' = A y`` over the element's unknowns ``y`` (bodies: ``x, theta, pi, w``
  (+ modal ``q``); joints: ``s, phi, lambda, Qbar, nu_a, nu_b``), sparse, with the lever stiffness
  moved into the momentum rows; its finite generalized eigenvalues are the system's;
* the *second-order form* in the bodies' coordinates ``z (nv,)`` (position of the reference point,
  rotation increment, modal coordinates; velocities ``w = z'``)::

      M z'' + C z' + K z = W mu,     G z = 0

  (``mu``: the reactions of the constrained joint components; ``W``: their generalized directions),
  and in independent coordinates ``z = Z xi`` (``Z``: orthonormal basis of the null space of ``G``):
  ``Mr = Z^T M Z``, ``Cr = Z^T C Z``, ``Kr = Z^T K Z``.

Elimination (dense, per model size ``nv``): the momentum rows ``s (pi + B^T lambda) = s M w`` with the
constitutive rows; the joints' relative coordinates and attachment velocities from their kinematic rows
(``k = P_z z + P_w w``); the law rows ``A_lQ Qbar + L_z z + L_w w = 0`` split by the SVD of each
joint's ``A_lQ`` (6 x 6) into the free components' reactions (solved) and the held ones (the
multipliers ``mu``, with the constraints ``G z = 0`` from the left null space).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import NDArray

from flexmb.errors import ModelError
from flexmb.linear.pencil import ElementPencil

#: singular values of a joint's law block / of G below this fraction of the largest are zero
NULL_TOL = 1e-9
#: largest scaled static residual accepted as an equilibrium
EQUILIBRIUM_TOL = 1e-6


@dataclass
class Linearization:
    """Linearized equations at an equilibrium (see the module docstring for the symbols).

    ``E``, ``A``: sparse ``(n, n)`` descriptor pencil over the p = 1 element's unknowns; ``M``,
    ``C``, ``K (nv, nv)``, ``G (nc, nv)``, ``W (nv, nc)``: sparse (CSR); ``Z (nv, ndof)``, ``Mr``,
    ``Cr``, ``Kr (ndof, ndof)``: dense; ``coordinates``: names of the ``nv`` coordinates (``"body:x"``, ``"body:theta_z"``,
    ``"body:q3"``); ``equilibrium``: the state linearized about."""

    E: sp.csr_matrix
    A: sp.csr_matrix
    M: sp.csr_matrix
    C: sp.csr_matrix
    K: sp.csr_matrix
    G: sp.csr_matrix
    W: sp.csr_matrix
    Z: NDArray
    coordinates: list
    equilibrium: object = field(repr=False)
    #: the element's Jacobian at h = 0 (end-node rows per unit weight), for the physical pencil
    J0: sp.csr_matrix = field(default=None, repr=False)

    @cached_property
    def Mr(self) -> NDArray:
        return self.Z.T @ (self.M @ self.Z)

    @cached_property
    def Cr(self) -> NDArray:
        return self.Z.T @ (self.C @ self.Z)

    @cached_property
    def Kr(self) -> NDArray:
        return self.Z.T @ (self.K @ self.Z)

    @property
    def ndof(self) -> int:
        return self.Z.shape[1]

    def state_matrix(self) -> NDArray:
        """``A_ss (2 ndof, 2 ndof)`` of ``d/dt (xi, xi') = A_ss (xi, xi')`` (independent coordinates)."""
        Mr = self.Mr
        try:
            Mi_K = np.linalg.solve(Mr, self.Kr)
            Mi_C = np.linalg.solve(Mr, self.Cr)
        except np.linalg.LinAlgError:
            raise ModelError("linearize: the mass matrix in independent coordinates is singular (a massless "
                             "degree of freedom); give the bodies mass and inertia in every direction they can move") from None
        n = self.ndof
        return np.block([[np.zeros((n, n)), np.eye(n)], [-Mi_K, -Mi_C]])


def coordinate_names(cm) -> list:
    names = [""] * cm.nv
    for grp in cm.groups:
        for k, b in enumerate(grp.bodies):
            nm = cm.model.bodies[b].name
            labels = ["x", "y", "z", "theta_x", "theta_y", "theta_z"] + [f"q{i + 1}" for i in range(grp.nv - 6)]
            for c, lab in zip(grp.vel_cols[k], labels):
                names[c] = f"{nm}:{lab}"
    return names


def pencil(pen: ElementPencil, st, Q: NDArray):
    """The descriptor pencil ``(E, A)`` (CSR, element unknowns) at the node ``st`` at rest with
    reactions ``Q (nj, 6)``, and the evaluation ``(U, r0, r1, J0, J1, KB)``."""
    ix = pen.ix
    n = ix.size
    U = pen.unknowns(st, Q)
    r0, r1, J0, J1 = pen.evaluate(st, U)
    lam_dot = -r1[ix.lam]
    KB = pen.lever_stiffness(st, U, lam_dot.reshape(-1, 6), J0)
    diff = np.zeros(n, bool)
    diff[ix.diff] = True
    Dd = sp.diags(diff.astype(float))
    Da = sp.diags((~diff).astype(float))
    leak = abs(Da @ J1).max() if J1.nnz else 0.0
    if leak > 1e-9 * max(abs(J0).max(), 1.0):
        raise AssertionError(f"an algebraic row of the element depends on h ({leak:.3e}): the pencil split does not hold")
    E = (Dd @ J0) * (1.0 / 2.0)
    A = -(Dd @ J1) - Da @ J0
    P = sp.csr_matrix((np.ones(ix.pi.size), (ix.pi, np.arange(ix.pi.size))), shape=(n, ix.pi.size))
    Zc = sp.csr_matrix((np.ones(ix.z.size), (np.arange(ix.z.size), ix.z)), shape=(ix.z.size, n))
    A = A + P @ KB @ Zc
    return E.tocsr(), A.tocsr(), (U, r0, r1, J0, J1, KB)


def linearize(eq, *, check: bool = True) -> Linearization:
    """The linearized equations of motion at the equilibrium ``eq`` (from
    :func:`flexmb.linear.equilibrium.equilibrium`).

    Raises :class:`~flexmb.errors.ModelError` when ``eq`` is not an equilibrium (its static residual,
    recomputed, exceeds ``EQUILIBRIUM_TOL`` in the scales of :func:`equilibrium`; ``check=False`` skips
    the test: a frozen-time linearization about a state that is not at rest is not supported)."""
    from flexmb.linear.equilibrium import Equilibrium, _scales, static_system

    if not isinstance(eq, Equilibrium):
        raise ModelError(f"linearize: state={type(eq).__name__} is not an Equilibrium; compute one with "
                         f"fm.equilibrium(model, t)")
    pen, st, Q = eq.pencil, eq.start, eq.reactions
    if check:
        F, _, _ = static_system(pen, st, Q)
        _, fs = _scales(pen, st, F.size)
        res = float(np.max(np.abs(F) / fs, initial=0.0))
        if res > EQUILIBRIUM_TOL:
            raise ModelError(f"linearize: the state is not an equilibrium (largest scaled static residual "
                             f"{res:.3e} > {EQUILIBRIUM_TOL:.0e}); linearize about fm.equilibrium(model, t)")
    if getattr(eq, "linearization", None) is not None:
        return eq.linearization
    E, A, (U, r0, r1, J0, J1, KB) = pencil(pen, st, Q)
    M, C, K, G, W = second_order(pen, E, A, J0)
    Z = null_space(G, M.shape[0])
    eq.linearization = Linearization(E=E, A=A, M=M, C=C, K=K, G=G, W=W, Z=Z, coordinates=coordinate_names(pen.cm),
                                     equilibrium=eq, J0=J0)
    return eq.linearization


def null_space(G: sp.spmatrix, n: int) -> NDArray:
    """Orthonormal basis ``(n, ndof)`` of the null space of ``G`` (QR of ``G^T`` with column pivoting,
    rank from ``|R_kk|`` above ``NULL_TOL`` of the largest: redundant rows count once)."""
    if G.shape[0] == 0:
        return np.eye(n)
    Q, R, _ = sla.qr(G.T.toarray(), mode="full", pivoting=True)
    d = np.abs(np.diag(R))
    rank = int(np.count_nonzero(d > NULL_TOL * max(d.max(initial=0.0), 1e-300)))
    return Q[:, rank:].copy()


def _blocks(S: sp.spmatrix, b: int) -> NDArray:
    """The diagonal blocks ``(n / b, b, b)`` of a sparse block-diagonal matrix (AssertionError if an
    entry lies off the blocks)."""
    coo = S.tocoo()
    if np.any(coo.row // b != coo.col // b):
        raise AssertionError("linearize: a joint's rows couple the unknowns of another joint")
    out = np.zeros((S.shape[0] // b, b, b))
    np.add.at(out, (coo.row // b, coo.row % b, coo.col % b), coo.data)
    return out


def _bsr(blocks: NDArray) -> sp.csr_matrix:
    """The block-diagonal sparse matrix of ``blocks (n, b, b)``."""
    n, b, _ = blocks.shape
    return sp.bsr_matrix((blocks, np.arange(n), np.arange(n + 1)), shape=(n * b, n * b)).tocsr()


def second_order(pen: ElementPencil, E: sp.csr_matrix, A: sp.csr_matrix, J0: sp.csr_matrix):
    """``M, C, K (nv, nv)``, ``G (nc, nv)``, ``W (nv, nc)`` from the pencil (module docstring)."""
    ix, cm = pen.ix, pen.cm
    nv, nj = cm.nv, cm.nj
    # physical momentum rows: pi rows + B^T lambda rows; pi and lambda columns through the w rows
    Bt = -J0[ix.w][:, ix.lam]
    Em = E[ix.pi] + Bt @ E[ix.lam]
    Am = A[ix.pi] + Bt @ A[ix.lam]
    # (pi + B^T lambda) = J0_w,rest y_rest by the constitutive rows (J0_w,pi = -I, J0_w,lam = -B^T):
    # the pi and lambda columns cancel
    Em = sp.csr_matrix(Em + Em[:, ix.pi] @ J0[ix.w])
    for name, blk in (("pi", Am[:, ix.pi]), ("lambda", Am[:, ix.lam])):
        if blk.nnz and abs(blk).max() > 1e-9 * max(abs(Am).max(), 1.0):
            raise AssertionError(f"linearize: the momentum rows depend on {name} at rest; not supported")
    # joint by joint: relative coordinates (6) then attachment velocities (12)
    kcols = np.concatenate([ix.rel.reshape(nj, 6), ix.nu.reshape(nj, 12)], axis=1).reshape(-1)
    krows = kcols  # each kinematic unknown's row sits at its slot
    # kinematic algebraic unknowns k = P_z z + P_w w from their rows (A k-rows = -J0 k-rows; block
    # diagonal, 18 x 18 per joint: inverted block by block, so P_z and P_w are sparse)
    Akk_inv = _bsr(np.linalg.inv(_blocks(A[krows][:, kcols], 18)))
    Pz = -(Akk_inv @ A[krows][:, ix.z]).tocsr()
    Pw = -(Akk_inv @ A[krows][:, ix.w]).tocsr()

    def through_k(B):  # B y with k substituted: (on z, on w, on Qbar)
        Bk = B[:, kcols]
        return (B[:, ix.z] + Bk @ Pz).tocsr(), (B[:, ix.w] + Bk @ Pw).tocsr(), B[:, ix.q].tocsr()

    Mz, Mw, MQ = through_k(Am)
    Lz, Lw, LQ = through_k(A[ix.q])
    # per joint: its law block LQ (6 x 6) -> pseudo-inverse (free components), null spaces (held ones)
    blocks = _blocks(LQ, 6)
    Ub, sb, Vtb = np.linalg.svd(blocks)
    keep = sb > NULL_TOL * np.maximum(sb.max(axis=1, initial=0.0), 1.0)[:, None]
    inv_s = np.where(keep, 1.0 / np.where(keep, sb, 1.0), 0.0)
    pblocks = np.einsum("jki,jk,jlk->jil", Vtb, inv_s, Ub)  # V diag(1/s) U^T on the kept part
    pinv = _bsr(pblocks)
    jn, cn = np.nonzero(~keep)  # one null direction per (joint, singular value)
    rows6 = 6 * jn[:, None] + np.arange(6)[None, :]
    colsn = np.repeat(np.arange(jn.size), 6).reshape(-1, 6)
    Nr = sp.csr_matrix((Vtb[jn, cn, :].ravel(), (rows6.ravel(), colsn.ravel())), shape=(6 * nj, jn.size))
    Nl = sp.csr_matrix((Ub[jn, :, cn].ravel(), (rows6.ravel(), colsn.ravel())), shape=(6 * nj, jn.size))
    K = (-(Mz - MQ @ pinv @ Lz)).tocsr()
    C = (-(Mw - MQ @ pinv @ Lw)).tocsr()
    G = (Nl.T @ Lz).tocsr()
    Gw = Nl.T @ Lw
    if Gw.nnz and abs(Gw).max() > 1e-8 * max(abs(G).max() if G.nnz else 0.0, 1.0):
        raise AssertionError("linearize: a held joint component depends on the velocities (nonholonomic)")
    W = (MQ @ Nr).tocsr()
    Mm = Em[:, ix.w].tocsr()
    if Em[:, ix.z].nnz and abs(Em[:, ix.z]).max() > 1e-9 * abs(Mm).max():
        raise AssertionError("linearize: the momentum rows carry a rate of the configuration; not supported")
    return Mm, C, K, G, W
