"""Set-up of the data of a group of modal (floating-frame) bodies for the compiled kernels of
:mod:`.modal_kernels`: the blocks of the configuration-dependent mass matrix, the elastic data
(modal stiffness, damping, strain-energy factors) and the unit preload stiffnesses, padded to the
group's largest number of modes with inert unit modes (unit mass and stiffness, no coupling).

Velocity coordinates in the body frame ``Wb = (V, Omega, qdot)`` (``N = 6 + nm``): velocity of the
frame origin and angular velocity in body components, modal rates.  With ``u(x0) = x0 + Phi(x0) q``
the kinetic energy of the reduced field is exactly ``T = 1/2 Wb^T Mb(q) Wb`` with ::

    Mb(q) = [[ m I,        -skew(S),   S1 ],        S(q)   = S0 + S1 q         int rho u
             [ skew(S),     J(q),      Psi(q)],     J(q)   = int rho (|u|^2 I - u u^T)
             [ S1^T,        Psi^T,     Mq ]]        Psi(q) = int rho skew(u) Phi

a polynomial in ``q``: ``J(q) = J0 + q_k J1[k] + q_k q_l J2[k, l]`` (``J2`` symmetric in ``(k, l)``),
``Psi(q) = psi0 + q_k dpsi[k]``; stored by blocks (:func:`mass_data`), O(nm^2) numbers.
"""
from __future__ import annotations

import logging

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.kernels import frozen
from flexmb.fe.reduction.energy_factors import StrainEnergyFactors, factor_strain_energy, factors_match
from flexmb.memo import Memo, digest

log = logging.getLogger(__name__)

I3 = np.eye(3)
#: Levi-Civita symbol
EPS = np.zeros((3, 3, 3))
EPS[0, 1, 2] = EPS[1, 2, 0] = EPS[2, 0, 1] = 1.0
EPS[0, 2, 1] = EPS[2, 1, 0] = EPS[1, 0, 2] = -1.0


def _jfrom(S: NDArray) -> NDArray:
    """``tr(S) I - S`` over leading axes."""
    return np.trace(S, axis1=-2, axis2=-1)[..., None, None] * I3 - S


def mass_data(inv, nm_pad: int) -> dict:
    """Blocks of ``Mb(q)`` of one body from its :class:`~flexmb.fe.reduction.invariants.InertiaInvariants`,
    modes padded to ``nm_pad`` (inert): ``S0 (3,)``, ``S1 (3,nm)``, ``J0 (3,3)``, ``J1 (nm,3,3)``,
    ``J2 (nm,nm,3,3)``, ``psi0 (3,nm)``, ``dpsi (nm,3,nm)`` (``[k, :, j] = int rho phi_k x phi_j``),
    ``Mq (nm,nm)``."""
    nm = inv.modal_first_moment.shape[0]
    C = np.asarray(inv.modal_cross_moment, float)
    D = np.asarray(inv.modal_second_moment, float)
    out = dict(S0=np.asarray(inv.first_moment, float), S1=np.zeros((3, nm_pad)),
               J0=_jfrom(np.asarray(inv.second_moment, float)), J1=np.zeros((nm_pad, 3, 3)),
               J2=np.zeros((nm_pad, nm_pad, 3, 3)), psi0=np.zeros((3, nm_pad)), dpsi=np.zeros((nm_pad, 3, nm_pad)),
               Mq=np.eye(nm_pad))
    if nm:
        out["S1"][:, :nm] = np.asarray(inv.modal_first_moment, float).T
        out["psi0"][:, :nm] = np.einsum("iab,kab->ik", EPS, C)  # int rho x0 x phi_k
        out["Mq"][:nm, :nm] = inv.modal_mass
        out["J1"][:nm] = _jfrom(C + C.transpose(0, 2, 1))
        out["dpsi"][:nm, :, :nm] = np.einsum("iab,kjab->kij", EPS, D)
        out["J2"][:nm, :nm] = _jfrom(0.5 * (D + D.transpose(0, 1, 3, 2)))
    return out


def body_factors(body) -> StrainEnergyFactors:
    """The strain-energy factors of a ``FlexibleBody`` with ``stiffening="full"``: the data's, when
    they reproduce its ``G`` and ``H`` (:func:`~flexmb.fe.reduction.energy_factors.factors_match`),
    else computed from them (a data set made without factors, or changed after they were made)."""
    data = body.data
    f = data.energy_factors
    if f is not None and factors_match(f, data.geometric_stiffness, data.quartic_stiffness, data.omega2):
        return f
    if f is not None:
        log.warning("body %r: the strain-energy factors of its data do not reproduce its G and H; factoring them "
                    "again", body.name)
    return factor_strain_energy(data.geometric_stiffness, data.quartic_stiffness, data.omega2)


#: group data kept by the digest of everything :func:`group_data` reads (:mod:`flexmb.memo`), for groups
#: whose inputs hold at most GROUP_MEMO_NUMBERS numbers (the digest's cost and the memory kept stay small:
#: 16 groups of 100,000 numbers padded to their groups' modes are a few tens of MB)
_GROUPS = Memo(16)
GROUP_MEMO_NUMBERS = 100_000


def _preload(b):
    """The unit preload stiffness a body's stiffening uses (None: none)."""
    return (b.data.preload_stiffness_residual if b.stiffening == "full" else
            b.data.preload_stiffness if b.stiffening == "preload" else None)


def group_data(src, nm: int) -> dict:
    """Padded arrays of the bodies ``src`` (model ``FlexibleBody`` elements) for the kernels: mass
    blocks (:func:`mass_data`, stacked), ``K``, ``C (n,nm,nm)``, the factors ``cs (n,R3)``, ``cu
    (n,R3,nm)``, ``cV (n,R3,nm,nm)``, ``ql (n,R4)``, ``qA (n,R4,nm,nm)`` (zero weights pad the ranks;
    bodies without ``stiffening="full"`` have none), the unit preload stiffnesses ``Kg``, ``Ka
    (n,6,nm,nm)`` (first axis 0 when no body has them: spin products; frame-origin acceleration
    minus gravity and angular acceleration, body axes; ``"full"``: the residual ``Kg_res``,
    ``"preload"``: the full ``Kg``).  Read-only, contiguous (:func:`flexmb.dynamics.kernels.frozen`).

    Kept across runs by the digest of every number it reads (:mod:`flexmb.memo`: a model rebuilt around
    the same body data, as a sweep does, computes them once; X3's rod, 5 modes: ~0.25 ms -> ~0.05 ms of
    a run's set-up): per body its stiffening, modes, inertia invariants, ``omega2``, damping, strain-energy
    factors (:func:`body_factors`) and unit preload stiffness.  A new dict each call over the kept
    read-only arrays."""
    facs = [body_factors(b) if b.stiffening == "full" and b.n_modes else None for b in src]
    parts: list = ["group_data", int(nm), len(src)]
    for b, f in zip(src, facs):
        inv, pre = b.data.invariants, _preload(b)
        parts += [str(b.stiffening), int(b.n_modes)] + [np.asarray(a, dtype=float) for a in (
            inv.first_moment, inv.second_moment, inv.modal_first_moment, inv.modal_cross_moment,
            inv.modal_second_moment, inv.modal_mass, b.data.omega2, b.damping)]
        parts += [None] if f is None else [tuple(int(r) for r in f.ranks)] + [np.asarray(a, dtype=float) for a in (
            f.cubic_weights, f.cubic_u, f.cubic_V, f.quartic_weights, f.quartic_A)]
        parts += [None if pre is None else np.asarray(pre, dtype=float)]
    if sum(a.size for a in parts if isinstance(a, np.ndarray)) > GROUP_MEMO_NUMBERS:
        return _group_data(src, nm, facs)
    return dict(_GROUPS.get(digest(*parts), lambda: _group_data(src, nm, facs)))


def _group_data(src, nm: int, facs: list) -> dict:
    """:func:`group_data` computed (``facs``: each body's :func:`body_factors`, or None)."""
    n = len(src)
    if n:
        blocks = [mass_data(b.data.invariants, nm) for b in src]
        out = {k: np.ascontiguousarray(np.array([bl[k] for bl in blocks], dtype=float)) for k in blocks[0]}
    else:
        shapes = dict(S0=(3,), S1=(3, nm), J0=(3, 3), J1=(nm, 3, 3), J2=(nm, nm, 3, 3), psi0=(3, nm),
                      dpsi=(nm, 3, nm), Mq=(nm, nm))
        out = {k: np.zeros((0,) + s) for k, s in shapes.items()}
    K = np.zeros((n, nm, nm))
    C = np.zeros((n, nm, nm))
    for k, b in enumerate(src):
        kb = b.n_modes
        K[k] = np.eye(nm)
        K[k, :kb, :kb] = np.diag(b.data.omega2)
        C[k, :kb, :kb] = b.damping
    R3 = max([f.ranks[0] for f in facs if f is not None], default=0)
    R4 = max([f.ranks[1] for f in facs if f is not None], default=0)
    cs, cu, cV = np.zeros((n, R3)), np.zeros((n, R3, nm)), np.zeros((n, R3, nm, nm))
    ql, qA = np.zeros((n, R4)), np.zeros((n, R4, nm, nm))
    for k, f in enumerate(facs):
        if f is None:
            continue
        kb, r3, r4 = src[k].n_modes, f.ranks[0], f.ranks[1]
        cs[k, :r3] = f.cubic_weights
        cu[k, :r3, :kb] = f.cubic_u
        cV[k, :r3, :kb, :kb] = f.cubic_V
        ql[k, :r4] = f.quartic_weights
        qA[k, :r4, :kb, :kb] = f.quartic_A
    Kg = Ka = None
    for k, b in enumerate(src):
        arr = _preload(b)
        if arr is None or not b.n_modes:
            continue
        if Kg is None:
            Kg = np.zeros((n, 6, nm, nm))
            Ka = np.zeros((n, 6, nm, nm))
        Kg[k, :, :b.n_modes, :b.n_modes] = arr[:6]
        Ka[k, :, :b.n_modes, :b.n_modes] = arr[[9, 10, 11, 6, 7, 8]]  # (a_O - g, alpha) order
    empty = np.zeros((0, 6, nm, nm))
    out.update(K=K, C=C, cs=cs, cu=cu, cV=cV, ql=ql, qA=qA, Kg=empty if Kg is None else Kg,
               Ka=empty if Ka is None else Ka)
    return {k: frozen(a) for k, a in out.items()}  # the kernels' constants: read-only (flexmb.dynamics.kernels)
