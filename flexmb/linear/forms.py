"""The forms of the linearized equations: :class:`Linearization`, the descriptor pencil, the
second-order form and its frame (used by :func:`flexmb.linear.linearize.linearize`, the eigen,
state-space and trajectory modules).

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
from types import SimpleNamespace

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from numpy.typing import NDArray

from flexmb.errors import ModelError
from flexmb.linear.pencil import ElementPencil
from flexmb.linear.statics import node_unknowns, rate_matrix, spin_matrix

#: singular values of a joint's law block / of G below this fraction of the largest are zero
NULL_TOL = 1e-9


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
    coordinates: list
    equilibrium: object = field(repr=False)
    #: the element's Jacobian at h = 0 (end-node rows per unit weight), for the physical pencil
    J0: sp.csr_matrix = field(default=None, repr=False)
    #: at a point of a trajectory: the rates ``Zd``, ``Zdd (nv, ndof)`` of the basis ``Z`` carried along the
    #: motion (:mod:`flexmb.linear.trajectory`); None at an equilibrium (``Z`` constant)
    basis_rates: tuple | None = field(default=None, repr=False)
    #: the body velocities ``w (nv,)`` of the state (zero at rest; a steady rotation's; a trajectory's)
    velocities: NDArray | None = field(default=None, repr=False)
    #: the reactions' linearization (``second_order.reactions``: ``Qbar = Nr mu + Pz z + Pw w``, generalized
    #: force ``MQ Qbar``), for :mod:`flexmb.linear.statespace`
    reactions: object = field(default=None, repr=False)

    @cached_property
    def Z(self) -> NDArray:
        """Basis ``(nv, ndof)`` of the null space of ``G`` (dense pivoted QR, computed on first use)."""
        return null_space(self.G, self.M.shape[0])

    @cached_property
    def Mr(self) -> NDArray:
        return self.Z.T @ (self.M @ self.Z)

    @cached_property
    def Cr(self) -> NDArray:
        """``Z^T C Z`` (+ ``2 Z^T M Zd`` along a trajectory: ``z = Z(t) xi``)."""
        out = self.Z.T @ (self.C @ self.Z)
        if self.basis_rates is not None:
            out = out + 2.0 * self.Z.T @ (self.M @ self.basis_rates[0])
        return out

    @cached_property
    def Kr(self) -> NDArray:
        """``Z^T K Z`` (+ ``Z^T (C Zd + M Zdd)`` along a trajectory)."""
        out = self.Z.T @ (self.K @ self.Z)
        if self.basis_rates is not None:
            Zd, Zdd = self.basis_rates
            out = out + self.Z.T @ (self.C @ Zd + self.M @ Zdd)
        return out

    @cached_property
    def Lw(self) -> sp.csr_matrix:
        """``L (nv, nv)`` of ``w = z' + L z`` (:func:`velocity_map`; zero at rest)."""
        return velocity_map(self.equilibrium.pencil, getattr(self.equilibrium, "spin", None), self.A, self.velocities)

    @property
    def ndof(self) -> int:
        return self.Z.shape[1]

    def state_space(self, inputs, outputs):
        """``(A, B, C, D)`` for :mod:`scipy.signal`: named inputs (generalized forces on coordinates, the
        components of point forces and torques, joint actuators) and outputs (coordinates and rates,
        body points' positions and velocities, joint reactions): :func:`flexmb.linear.statespace.state_space`."""
        from flexmb.linear.statespace import state_space

        return state_space(self, inputs, outputs)

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


def pencil(pen: ElementPencil, st, Q: NDArray, spin=None, evaluation=None, w=None):
    """The descriptor pencil ``(E, A)`` (CSR, element unknowns) at the node ``st`` at rest (or in the
    steady rotation ``spin``, or with the body velocities ``w (nv,)``; frozen: inertial components) with
    reactions ``Q (nj, 6)``, and the evaluation ``(U, r0, r1, J0, J1, KB)`` (given: that of
    :func:`~flexmb.linear.equilibrium.static_system` at the same state)."""
    ix = pen.ix
    n = ix.size
    if evaluation is None:
        U, st = node_unknowns(pen, st, Q, spin, w)
        r0, r1, J0, J1 = pen.evaluate(st, U)
        KB = pen.lever_stiffness(st, U, -r1[ix.lam].reshape(-1, 6), J0)
    else:
        U, r0, r1, J0, J1, KB = evaluation
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


def moving_base_kinematics(pen: ElementPencil, w: NDArray, A: sp.csr_matrix) -> sp.csr_matrix:
    """``A_zz`` of the kinematic rows for rotation perturbations relative to the *moving* rotation of
    each body (angular velocity ``omega`` in ``w (nv,)``).  The element's rotation increment is relative
    to the fixed start rotation: ``theta' = T(theta)^-1 omega`` gives ``A_zz = omega x / 2`` at
    ``theta = 0``; a perturbation of a motion turning at ``omega``, ``R = exp(d) R*(t)``, has the
    increment ``log(exp(d) exp(omega t)) = d + omega t + (d x omega t) / 2 + ...``
    (Baker-Campbell-Hausdorff), whose rate adds the other half: ``d' = d omega + omega x d``."""
    ix = pen.ix
    return (A[ix.z][:, ix.z] + 0.5 * rate_matrix(pen, w)).tocsr()


def rotating_frame(pen: ElementPencil, spin, A: sp.csr_matrix, M, C, K, Ez, w: NDArray):
    """``C``, ``K`` of the perturbations in the frame turning with ``spin`` (the rigid rotation's
    generator ``Om`` on the bodies' translations and rotations; None: the inertial frame, ``Om = 0``,
    a frozen state in motion) of a motion with the body velocities ``w (nv,)``.  The frozen rows read
    ``s z = A_zz z + w`` (kinematics, :func:`moving_base_kinematics`) and ``s (M w + Ez z) = -K z - C w``
    (momenta ``p = M w``, reactions eliminated; ``Ez = (dM/dz) w``).  In the turning frame the
    configuration, the velocities and the momenta turn: ``s -> s + Om`` on the configuration and on
    the momentum vector (``(s + Om)(M w + Ez z)``: the momenta's rows turn, so ``M`` and ``Ez`` take
    ``Om`` from the left; ``d/dt`` of the substituted ``M(t) w`` carries ``M' = Om M - M Om``), so
    ``w = (s + L) z`` with ``L = Om - A_zz`` and

        M s^2 + (C + Ez + M L + Om M) s + (K + C L + Om M L + Om Ez)."""
    Om = spin_matrix(pen, spin)
    Lm = velocity_map(pen, spin, A, w)
    return (C + Ez + M @ Lm + Om @ M).tocsr(), (K + C @ Lm + Om @ M @ Lm + Om @ Ez).tocsr()


def velocity_map(pen: ElementPencil, spin, A: sp.csr_matrix, w: NDArray) -> sp.csr_matrix:
    """``L (nv, nv)`` of ``w = z' + L z`` (:func:`rotating_frame`): ``Om - A_zz`` (moving base; zero at rest)."""
    ix = pen.ix
    Azw = A[ix.z][:, ix.w]
    if abs(Azw - sp.eye(Azw.shape[0])).max() > 1e-9:
        raise AssertionError("linearize: the kinematic rows are not z' = w + A_zz z at the node")
    return (spin_matrix(pen, spin) - moving_base_kinematics(pen, w, A)).tocsr()


def null_space(G: sp.spmatrix, n: int) -> NDArray:
    """Orthonormal basis ``(n, ndof)`` of the null space of ``G`` (QR of ``G^T`` with column pivoting,
    rank from ``|R_kk|`` above ``NULL_TOL`` of the largest: redundant rows count once)."""
    if G.shape[0] == 0:
        return np.eye(n)
    Q, R, _ = sla.qr(G.T.toarray(), mode="full", pivoting=True)
    d = np.abs(np.diag(R))
    rank = int(np.count_nonzero(d > NULL_TOL * max(d.max(initial=0.0), 1e-300)))
    return Q[:, rank:].copy()


def momentum_rows(pen: ElementPencil, E: sp.csr_matrix, A: sp.csr_matrix, J0: sp.csr_matrix):
    """``(Em, Am)``: the bodies' momentum balance ``s Em y = Am y`` over the element unknowns, with no
    modified momenta nor multipliers (``nv`` rows).

    The modified-momentum rows plus ``B^T`` times the multiplier rows give ``s (pi + B^T lambda)``;
    the constitutive rows ``M w - pi - B^T lambda = 0`` (``J0_w,pi = -I``, ``J0_w,lam = -B^T``) replace
    ``pi + B^T lambda`` on the left and ``pi`` on the right (``v x pi`` of a reference point that moves
    in steady motion).  What is left on ``lambda`` is ``(S(v) B^T - B^T S(v_B)) lambda = -(B^T)' lambda``,
    the rate of the transport that the frozen constitutive rows do not carry (paper Eq. 8: ``Q_G =
    Lambda' + S(v) Lambda``): Newton-Euler ``p' + S(v) p = F + B^T R_A Qbar`` has no multiplier, so those
    columns are dropped (zero at rest)."""
    ix = pen.ix
    Bt = -J0[ix.w][:, ix.lam]
    Em = E[ix.pi] + Bt @ E[ix.lam]
    Am = A[ix.pi] + Bt @ A[ix.lam]
    Em = Em + Em[:, ix.pi] @ J0[ix.w]  # the pi and lambda columns cancel
    Am = Am + Am[:, ix.pi] @ J0[ix.w]  # the pi columns cancel
    keep = np.ones(ix.size)
    keep[ix.lam] = 0.0
    return sp.csr_matrix(Em), sp.csr_matrix(Am @ sp.diags(keep))


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
    Em, Am = momentum_rows(pen, E, A, J0)
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
    #: the momenta's dependence on the configuration, (dM/dz) w (nonzero in steady motion only)
    second_order.Ez = Em[:, ix.z].tocsr()
    #: the reactions ``Qbar = Nr mu + Pz z + Pw w`` and the bodies' generalized force ``MQ Qbar``
    #: (:mod:`flexmb.linear.statespace`)
    second_order.reactions = SimpleNamespace(MQ=MQ.tocsr(), Nr=Nr, Pz=-(pinv @ Lz).tocsr(), Pw=-(pinv @ Lw).tocsr())
    return Mm, C, K, G, W
