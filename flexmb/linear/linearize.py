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
    ``C``, ``K (nv, nv)``; ``G (nc, nv)``; ``W (nv, nm)``; ``Z (nv, ndof)``; ``Mr``, ``Cr``, ``Kr (ndof,
    ndof)``; ``coordinates``: names of the ``nv`` coordinates (``"body:x"``, ``"body:theta_z"``,
    ``"body:q3"``); ``equilibrium``: the state linearized about."""

    E: sp.csr_matrix
    A: sp.csr_matrix
    M: NDArray
    C: NDArray
    K: NDArray
    G: NDArray
    W: NDArray
    Z: NDArray
    coordinates: list
    equilibrium: object = field(repr=False)
    #: the element's Jacobian at h = 0 (end-node rows per unit weight), for the physical pencil
    J0: sp.csr_matrix = field(default=None, repr=False)

    @property
    def Mr(self) -> NDArray:
        return self.Z.T @ self.M @ self.Z

    @property
    def Cr(self) -> NDArray:
        return self.Z.T @ self.C @ self.Z

    @property
    def Kr(self) -> NDArray:
        return self.Z.T @ self.K @ self.Z

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
    E, A, (U, r0, r1, J0, J1, KB) = pencil(pen, st, Q)
    M, C, K, G, W = second_order(pen, E, A, J0)
    Z = null_space(G, M.shape[0])
    return Linearization(E=E, A=A, M=M, C=C, K=K, G=G, W=W, Z=Z, coordinates=coordinate_names(pen.cm), equilibrium=eq,
                         J0=J0)


def null_space(G: NDArray, n: int) -> NDArray:
    """Orthonormal basis ``(n, ndof)`` of the null space of ``G`` (SVD; relative tolerance ``NULL_TOL``)."""
    if G.shape[0] == 0:
        return np.eye(n)
    _, s, Vt = np.linalg.svd(G, full_matrices=True)
    rank = int(np.count_nonzero(s > NULL_TOL * max(s.max(initial=0.0), 1e-300)))
    return Vt[rank:].T.copy()


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
    kcols = np.concatenate([ix.rel, ix.nu])
    krows = kcols  # each kinematic unknown's row sits at its slot
    # kinematic algebraic unknowns k = P_z z + P_w w from their rows (A k-rows = -J0 k-rows)
    Akk = A[krows][:, kcols].tocsc()
    if nj:
        lu = spla.splu(Akk)
        Pz = -lu.solve(A[krows][:, ix.z].toarray())
        Pw = -lu.solve(A[krows][:, ix.w].toarray())
    else:
        Pz = np.zeros((0, nv))
        Pw = np.zeros((0, nv))

    def through_k(B):  # B y with k substituted: (on z, on w, on Qbar)
        Bk = B[:, kcols].toarray()
        return (B[:, ix.z].toarray() + Bk @ Pz, B[:, ix.w].toarray() + Bk @ Pw, B[:, ix.q].toarray())

    Mz, Mw, MQ = through_k(Am)
    Lrows = A[ix.q]
    Lz, Lw, LQ = through_k(Lrows)
    # per joint: LQ block (6 x 6) -> pseudo-inverse, null spaces
    pinv = np.zeros((6 * nj, 6 * nj))
    Nr, Nl = [], []
    for j in range(nj):
        sl = slice(6 * j, 6 * j + 6)
        Uj, sj, Vtj = np.linalg.svd(LQ[sl, sl])
        r = int(np.count_nonzero(sj > NULL_TOL * max(sj.max(initial=0.0), 1.0)))
        pinv[sl, sl] = (Vtj[:r].T / sj[:r]) @ Uj[:, :r].T
        for c in range(r, 6):
            e = np.zeros(6 * nj)
            e[sl] = Vtj[c]
            Nr.append(e)
            e = np.zeros(6 * nj)
            e[sl] = Uj[:, c]
            Nl.append(e)
    Nr = np.array(Nr).reshape(-1, 6 * nj).T
    Nl = np.array(Nl).reshape(-1, 6 * nj).T
    K = -(Mz - MQ @ pinv @ Lz)
    C = -(Mw - MQ @ pinv @ Lw)
    G = Nl.T @ Lz
    Gw = Nl.T @ Lw
    if Gw.size and np.abs(Gw).max() > 1e-8 * max(np.abs(G).max(initial=0.0), 1.0):
        raise AssertionError("linearize: a held joint component depends on the velocities (nonholonomic)")
    W = MQ @ Nr
    Mm = Em[:, ix.w].toarray()
    if Em[:, ix.z].nnz and abs(Em[:, ix.z]).max() > 1e-9 * np.abs(Mm).max():
        raise AssertionError("linearize: the momentum rows carry a rate of the configuration; not supported")
    return Mm, C, K, G, W
