"""Configuration-dependent mass matrix, quadratic-velocity terms, elastic forces and preload
stiffening of a modal (floating-frame) body, from the inertia invariants of
:class:`~flexmb.fe.reduction.body_data.FlexibleBodyData`, batched over the bodies of a group.

Velocity coordinates in the body frame ``Wb = (V, Omega, qdot)`` (``N = 6 + nm``): velocity of the
frame origin and angular velocity in body components, modal rates.  With ``u(x0) = x0 + Phi(x0) q``
the kinetic energy of the reduced field is exactly ``T = 1/2 Wb^T Mb(q) Wb`` with ::

    Mb(q) = [[ m I,        -skew(S),   S1 ],        S(q)   = S0 + S1 q         int rho u
             [ skew(S),     J(q),      Psi(q)],     J(q)   = int rho (|u|^2 I - u u^T)
             [ S1^T,        Psi^T,     Mq ]]        Psi(q) = int rho skew(u) Phi

a polynomial ``Mb(q) = M0 + q_k M1[k] + q_k q_l M2[k, l]`` (``M2`` symmetric in ``(k, l)``, only in
the ``J`` block).  Modes are padded to the group's largest count with inert unit modes (unit mass
and stiffness, no coupling) that stay zero.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from flexmb import rotations as rot

I3 = np.eye(3)
#: Levi-Civita symbol
EPS = np.zeros((3, 3, 3))
EPS[0, 1, 2] = EPS[1, 2, 0] = EPS[2, 0, 1] = 1.0
EPS[0, 2, 1] = EPS[2, 1, 0] = EPS[1, 0, 2] = -1.0


def _jfrom(S: NDArray) -> NDArray:
    """``tr(S) I - S`` over leading axes."""
    return np.trace(S, axis1=-2, axis2=-1)[..., None, None] * I3 - S


def mass_polynomial(inv, nm_pad: int):
    """``M0 (N, N)``, ``M1 (nm, N, N)``, ``M2 (nm, nm, N, N)`` of one body (``N = 6 + nm_pad``)
    from its :class:`~flexmb.fe.reduction.invariants.InertiaInvariants` (modes beyond its own count inert)."""
    nm = inv.modal_first_moment.shape[0]
    N = 6 + nm_pad
    S0 = np.asarray(inv.first_moment, float)
    S1 = np.asarray(inv.modal_first_moment, float).T  # (3, nm)
    C = np.asarray(inv.modal_cross_moment, float)
    D = np.asarray(inv.modal_second_moment, float)
    M0 = np.zeros((N, N))
    M0[:3, :3] = inv.mass * I3
    M0[:3, 3:6] = -rot.skew(S0)
    M0[3:6, :3] = rot.skew(S0)
    M0[3:6, 3:6] = _jfrom(np.asarray(inv.second_moment, float))
    M0[:3, 6:6 + nm] = S1
    M0[6:6 + nm, :3] = S1.T
    psi0 = np.einsum("iab,kab->ik", EPS, C)  # int rho x0 x phi_k
    M0[3:6, 6:6 + nm] = psi0
    M0[6:6 + nm, 3:6] = psi0.T
    M0[6:6 + nm, 6:6 + nm] = inv.modal_mass
    M0[6 + nm:, 6 + nm:] = np.eye(nm_pad - nm)
    M1 = np.zeros((nm_pad, N, N))
    M2 = np.zeros((nm_pad, nm_pad, N, N))
    if nm:
        M1[:nm, :3, 3:6] = -rot.skew(S1.T)
        M1[:nm, 3:6, :3] = rot.skew(S1.T)
        M1[:nm, 3:6, 3:6] = _jfrom(C + C.transpose(0, 2, 1))
        dpsi = np.einsum("iab,kjab->kij", EPS, D)  # [k, :, j] = int rho phi_k x phi_j
        M1[:nm, 3:6, 6:6 + nm] = dpsi
        M1[:nm, 6:6 + nm, 3:6] = dpsi.transpose(0, 2, 1)
        M2[:nm, :nm, 3:6, 3:6] = _jfrom(0.5 * (D + D.transpose(0, 1, 3, 2)))
    return M0, M1, M2


class MassModel:
    """Mass polynomials of the bodies of a group: ``M0 (n, N, N)``, ``M1 (n, nm, N, N)``,
    ``M2 (n, nm, nm, N, N)``."""

    def __init__(self, M0, M1, M2):
        self.M0, self.M1, self.M2 = M0, M1, M2

    def matrix(self, q: NDArray) -> NDArray:
        """``Mb(q)`` for ``q (n, ..., nm)`` -> ``(n, ..., N, N)``."""
        extra = q.ndim - 2
        sl = (slice(None),) + (None,) * extra
        M = self.M0[sl] + np.einsum("b...k,bkrs->b...rs", q, self.M1)
        return M + np.einsum("b...k,b...l,bklrs->b...rs", q, q, self.M2)

    def terms(self, q: NDArray, Wb: NDArray):
        """Momenta and kinetic terms at ``q (n, p, nm)``, ``Wb (n, p, N)``.

        Returns ``M (n,p,N,N)``, ``Pb = M Wb (n,p,N)``, ``A (n,p,N,nm)`` with ``A[..., k] = dM/dq_k Wb``
        (so ``dPb/dq = A``), ``g (n,p,nm) = dT/dq = 1/2 Wb^T dM/dq_k Wb`` and ``dg/dq (n,p,nm,nm)``
        (``dg/dWb = A^T``).
        """
        M = self.matrix(q)
        Pb = np.einsum("bprs,bps->bpr", M, Wb)
        dM = self.M1[:, None] + 2.0 * np.einsum("bpl,bklrs->bpkrs", q, self.M2)  # (n,p,nm,N,N)
        A = np.einsum("bpkrs,bps->bprk", dM, Wb)
        g = 0.5 * np.einsum("bpr,bprk->bpk", Wb, A)
        dg = np.einsum("bpr,bklrs,bps->bpkl", Wb, self.M2, Wb)
        return M, Pb, A, g, dg


# ---------------------------------------------------------------------------------------------- elastic
def elastic_force(q: NDArray, K: NDArray, G: NDArray | None, H: NDArray | None):
    """Generalized elastic force ``f (n,p,nm)`` and tangent ``(n,p,nm,nm)`` of
    ``U = 1/2 q^T K q + 1/2 G[k,i,j] q_k q_i q_j + 1/8 H[i,j,k,l] q_i q_j q_k q_l`` (``K (n,nm,nm)``,
    ``G (n,nm,nm,nm)``, ``H (n,nm,nm,nm,nm)`` or None)."""
    f = np.einsum("bmn,bpn->bpm", K, q)
    Kt = np.broadcast_to(K[:, None], q.shape[:2] + K.shape[1:]).copy()
    if G is not None:
        f += 0.5 * np.einsum("bmij,bpi,bpj->bpm", G, q, q) + np.einsum("bkmj,bpk,bpj->bpm", G, q, q)
        Kt += (np.einsum("bjmn,bpj->bpmn", G, q) + np.einsum("bmnj,bpj->bpmn", G, q)
               + np.einsum("bnmj,bpj->bpmn", G, q))
    if H is not None:
        f += 0.5 * np.einsum("bmjkl,bpj,bpk,bpl->bpm", H, q, q, q)
        Kt += 0.5 * np.einsum("bmnkl,bpk,bpl->bpmn", H, q, q) + np.einsum("bmjnl,bpj,bpl->bpmn", H, q, q)
    return f, Kt


def strain_energy(q: NDArray, K, G, H) -> NDArray:
    """Strain energy ``(n,)`` at ``q (n, nm)``."""
    U = 0.5 * np.einsum("bm,bmn,bn->b", q, K, q)
    if G is not None:
        U += 0.5 * np.einsum("bkij,bk,bi,bj->b", G, q, q, q)
    if H is not None:
        U += 0.125 * np.einsum("bijkl,bi,bj,bk,bl->b", H, q, q, q, q)
    return U


# ---------------------------------------------------------------------------------------------- preloads
def spin_products(Om: NDArray):
    """The six angular-velocity products ``s[:6] = (wx^2, wy^2, wz^2, wx wy, wy wz, wx wz)`` of the
    unit inertial preloads (``PRELOAD_NAMES`` order) and their derivative ``(..., 6, 3)``."""
    x, y, z = Om[..., 0], Om[..., 1], Om[..., 2]
    s = np.stack([x * x, y * y, z * z, x * y, y * z, x * z], axis=-1)
    o = np.zeros_like(x)
    ds = np.stack([
        np.stack([2 * x, o, o], -1), np.stack([o, 2 * y, o], -1), np.stack([o, o, 2 * z], -1),
        np.stack([y, x, o], -1), np.stack([o, z, y], -1), np.stack([z, o, x], -1)], axis=-2)
    return s, ds


# ---------------------------------------------------------------------------------------------- tangent
_K = 18
_FACT = np.cumprod(np.concatenate([[1.0], np.arange(1.0, 2 * _K + 6)]))
#: series of beta(x) = (1 - cos a)/a^2 and gamma(x) = (a - sin a)/a^3 in x = a^2 (entire functions;
#: 18 terms are exact to rounding for |a| < 4, far beyond elastic interface rotations)
_CB = np.array([(-1.0) ** k / _FACT[2 * k + 2] for k in range(_K)])
_CG = np.array([(-1.0) ** k / _FACT[2 * k + 3] for k in range(_K)])


def _derivative_coefficients(c: NDArray, d: int) -> NDArray:
    k = np.arange(len(c))
    coef = c.copy()
    for j in range(d):
        coef = coef * (k - j)
    return coef[d:][::-1].copy()


#: reversed (Horner order) coefficients of the ``d``-th derivatives, d = 0..2, built once
_DCOEF = {(name, d): _derivative_coefficients(c, d) for name, c in (("b", _CB), ("g", _CG)) for d in range(3)}


def _series(c: NDArray, x: NDArray, d: int) -> NDArray:
    """``d``-th derivative in ``x`` of ``sum_k c_k x^k``."""
    rev = _DCOEF.get(("b" if c is _CB else "g" if c is _CG else None, d))
    if rev is None:
        rev = _derivative_coefficients(c, d)
    out = np.zeros_like(x)
    for cc in rev:
        out = out * x + cc
    return out


def tangent_T_second(psi: NDArray, u: NDArray, a: NDArray) -> NDArray:
    """``d/dpsi [ d(T(psi)^T u)/dpsi . a ]`` (..., 3, 3) for ``T(psi)^T u = u - beta psi x u +
    gamma psi x (psi x u)`` (the tangent operator of :func:`flexmb.rotations.tangent`)."""
    x = np.einsum("...i,...i->...", psi, psi)
    b1, b2 = _series(_CB, x, 1), _series(_CB, x, 2)
    g0, g1, g2 = _series(_CG, x, 0), _series(_CG, x, 1), _series(_CG, x, 2)
    cr = rot.cross
    pu = cr(psi, u)
    ppu = cr(psi, pu)
    au = cr(a, u)
    pa = np.einsum("...i,...i->...", psi, a)[..., None, None]
    # the three directions b = e_j at once on a new axis (..., j, 3)
    b = np.broadcast_to(np.eye(3), psi.shape[:-1] + (3, 3))
    pb = psi[..., :, None]
    ab = a[..., :, None]
    psi_, u_, a_ = psi[..., None, :], u[..., None, :], a[..., None, :]
    pu, ppu, au = pu[..., None, :], ppu[..., None, :], au[..., None, :]
    b1, b2, g0, g1, g2 = (c[..., None, None] for c in (b1, b2, g0, g1, g2))
    bu = cr(b, u_)
    v = (-4 * b2 * pa * pb * pu - 2 * b1 * ab * pu - 2 * b1 * pa * bu
         - 2 * b1 * pb * au
         + 4 * g2 * pa * pb * ppu + 2 * g1 * ab * ppu
         + 2 * g1 * pa * (cr(b, pu) + cr(psi_, bu)) + 2 * g1 * pb * (cr(a_, pu) + cr(psi_, au))
         + g0 * (cr(a_, bu) + cr(b, au)))
    return np.swapaxes(v, -1, -2)  # column j = direction e_j
