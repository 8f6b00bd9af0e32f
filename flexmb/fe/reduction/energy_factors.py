"""Low-rank factors of the cubic and quartic strain energy of a modal body: O(R nm^2) evaluation.

The strain energy of :mod:`flexmb.fe.reduction.stiffening`, ``U3 = 1/2 G[k,i,j] q_k q_i q_j`` and
``U4 = 1/8 H[i,j,k,l] q_i q_j q_k q_l``, costs ``nm^3`` and ``nm^4`` per evaluation in the dense
form.  Both are written as sums of products of linear and quadratic forms::

    U3 = 1/2 sum_r s_r (u_r . q) (q^T V_r q)          (r < R3 <= nm)
    U4 = 1/8 sum_r l_r (q^T A_r q)^2                 (r < R4 <= nm (nm + 1) / 2)

with symmetric ``V_r``, ``A_r``, so that the energy, its gradient and its Hessian cost
``O((R3 + R4) nm^2)`` (the compiled evaluation is :func:`flexmb.dynamics.bodies.modal_kernels.elastic`).

Factorization, in the coordinates ``z = Omega^2 q = K q`` (``Omega^2 = diag(omega2)``: the modal
force that holds the deflection ``q`` statically), so that every mode counts by its deflection under
a modal load of the same size, the way bodies deform (loads, not energy, are shared between modes:
a stiff mode's amplitude is ~1/omega^2 of a soft one's):

* quartic: ``H`` as a symmetric matrix on the symmetric ``nm x nm`` matrices (the pair vector
  ``q q^T``; ``H`` has the pair symmetries), in a Frobenius-orthonormal basis of them; its
  eigen-decomposition gives ``l_r`` and Frobenius-orthonormal ``A_r`` (exact with every nonzero
  eigenvalue);
* cubic: the fully symmetric part of ``G`` (the only part the energy sees) unfolded as an
  ``nm x nm^2`` matrix, its singular value decomposition (``V_r`` symmetric, Frobenius-orthonormal,
  ``u_r`` orthonormal).

A subset of the modes (:func:`flexmb.model.flexible.select_modes`) is factored again from its own
``G`` and ``H``: the truncation is relative to the subset's largest term.

Truncation (``tol``): the smallest terms are dropped while the sum of the dropped ``|l_r|``
(``|s_r|``) stays below ``tol`` times the largest: then ``|U4 - U4_kept| <= tol l_max |z|^4 / 8``,
a relative error ``tol`` of the dominant quartic term under modal loads of the same size (the same
for the cubic term).  ``tol = 0`` keeps every nonzero term (exact to round-off).  The
:data:`MIN_TERMS` largest terms are always kept: a body of up to 7 modes (28 quartic, 7 cubic terms)
is exact, where the cost does not matter, because the validated slider-crank moves by 2e-4 when its
quartic energy keeps 1 of 15 terms (those at 1e-6 of the largest: its slaved axial mode's amplitude
follows the cubic membrane force, not a modal load).  When nothing is dropped the form is factored
again in ``y = Omega q``: exact either way, but the ``z`` scaling spreads the entries by
``omega^8`` and the eigen-decomposition's round-off, relative to the largest term, reached 3e-10 of
a 4-mode beam's energy (1e-14 in ``y``).  Measured (benchmarks/README.md, "Strain-energy
factors"): at the default ``1e-8`` the quartic ranks are 32, 53, 75, 94 at 8, 16, 32, 64 modes of
the pendulum bar, where the energy scaling ``y = Omega q`` (linear energy ``|y|^2/2``) needs 1131
at 64 modes for the same relative tolerance.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from flexmb.memo import Memo, digest

__all__ = ["DEFAULT_TOL", "MIN_TERMS", "StrainEnergyFactors", "factor_strain_energy", "factors_match", "dense_from_factors"]

logger = logging.getLogger(__name__)

#: default relative truncation of the factors (see the module docstring); measured in benchmarks/README.md
DEFAULT_TOL = 1e-8
#: terms kept whatever the tolerance (a form with at most this many terms is exact: cheap, ~3 R nm^2)
MIN_TERMS = 32


@dataclass(frozen=True, eq=False)
class StrainEnergyFactors:
    """Factors of the cubic and quartic strain energy in the modal coordinates ``q``.

    Attributes
    ----------
    cubic_weights : ndarray, shape (R3,)
    cubic_u : ndarray, shape (R3, nm)
    cubic_V : ndarray, shape (R3, nm, nm)
        ``U3 = 1/2 sum_r cubic_weights[r] (cubic_u[r] . q) (q^T cubic_V[r] q)``.
    quartic_weights : ndarray, shape (R4,)
    quartic_A : ndarray, shape (R4, nm, nm)
        ``U4 = 1/8 sum_r quartic_weights[r] (q^T quartic_A[r] q)^2``.
    tol : float
        Relative truncation (module docstring).
    dropped : ndarray, shape (2,)
        Bound of the dropped part relative to the largest term, cubic and quartic (``<= tol``).
    """

    cubic_weights: NDArray[np.float64]
    cubic_u: NDArray[np.float64]
    cubic_V: NDArray[np.float64]
    quartic_weights: NDArray[np.float64]
    quartic_A: NDArray[np.float64]
    tol: float
    dropped: NDArray[np.float64]

    @property
    def n_modes(self) -> int:
        return int(self.cubic_u.shape[1]) if self.cubic_u.ndim == 2 else 0

    @property
    def ranks(self) -> tuple[int, int]:
        return int(self.cubic_weights.size), int(self.quartic_weights.size)

    def energy(self, q) -> float:
        """``U3 + U4`` at ``q (nm,)`` (NumPy, set-up and checks; the dynamics uses the compiled law)."""
        q = np.asarray(q, dtype=float)
        a = self.cubic_u @ q
        s3 = np.einsum("rij,i,j->r", self.cubic_V, q, q)
        s4 = np.einsum("rij,i,j->r", self.quartic_A, q, q)
        return float(0.5 * np.sum(self.cubic_weights * a * s3) + 0.125 * np.sum(self.quartic_weights * s4 * s4))

    def arrays(self) -> dict:
        return dict(cubic_weights=self.cubic_weights, cubic_u=self.cubic_u, cubic_V=self.cubic_V,
                    quartic_weights=self.quartic_weights, quartic_A=self.quartic_A,
                    tol=np.array(self.tol), dropped=self.dropped)


def _scales(omega2, nm: int) -> NDArray[np.float64]:
    """``omega^2`` per mode (1 where not positive: such a mode is not scaled)."""
    om2 = np.asarray(omega2, dtype=float).reshape(-1)[:nm]
    return np.where(om2 > 0, om2, 1.0)


def _truncate(values: NDArray, tol: float, min_terms: int = MIN_TERMS):
    """Indices of the terms kept (largest |value| first; at least :data:`MIN_TERMS` when there are
    that many) and the dropped sum relative to the largest."""
    order = np.argsort(-np.abs(values))
    mags = np.abs(values[order])
    if mags.size == 0 or mags[0] == 0.0:
        return order[:0], 0.0
    tail = np.cumsum(mags[::-1])[::-1]  # tail[k] = sum of mags[k:]
    budget = tol * mags[0]
    keep = int(np.count_nonzero(tail > budget))
    keep = max(keep, min(min_terms, int(np.count_nonzero(mags))), 1)
    dropped = float(tail[keep] / mags[0]) if keep < mags.size else 0.0
    return order[:keep], dropped


def _sym_basis(nm: int):
    """Pairs ``i <= j`` and their weights in a Frobenius-orthonormal basis of symmetric matrices."""
    iu, ju = np.triu_indices(nm)
    w = np.where(iu == ju, 1.0, np.sqrt(2.0))
    return iu, ju, w


def _quartic_factors(Hs: NDArray, tol: float, min_terms: int):
    """Eigen-factors of a scaled quartic tensor ``Hs (nm,nm,nm,nm)``: weights (R4,), A (R4,nm,nm)."""
    nm = Hs.shape[0]
    iu, ju, w = _sym_basis(nm)
    Hp = Hs[iu, ju][:, iu, ju] * w[:, None] * w[None, :]
    Hp = 0.5 * (Hp + Hp.T)
    lam, vec = np.linalg.eigh(Hp)
    keep, dropped = _truncate(lam, tol, min_terms)
    A = np.zeros((keep.size, nm, nm))
    coef = vec[:, keep].T / w[None, :]  # the symmetric matrix of each eigenvector: entries v_p / w_p
    A[:, iu, ju] = coef
    A[:, ju, iu] = coef
    return lam[keep], A, dropped


def _cubic_factors(Gs: NDArray, tol: float, min_terms: int):
    """SVD factors of a scaled, fully symmetric cubic tensor ``Gs (nm,nm,nm)``."""
    nm = Gs.shape[0]
    iu, ju, w = _sym_basis(nm)
    Gm = Gs[:, iu, ju] * w[None, :]  # (nm, P): slices in the orthonormal symmetric basis
    U, s, Vt = np.linalg.svd(Gm, full_matrices=False)
    keep, dropped = _truncate(s, tol, min_terms)
    V = np.zeros((keep.size, nm, nm))
    coef = Vt[keep] / w[None, :]
    V[:, iu, ju] = coef
    V[:, ju, iu] = coef
    return s[keep], np.ascontiguousarray(U[:, keep].T), V, dropped


def _symmetrize3(G: NDArray) -> NDArray:
    return (G + G.transpose(0, 2, 1) + G.transpose(1, 0, 2) + G.transpose(1, 2, 0) + G.transpose(2, 0, 1)
            + G.transpose(2, 1, 0)) / 6.0


def factor_strain_energy(G, H, omega2, tol: float = DEFAULT_TOL, min_terms: int = MIN_TERMS) -> StrainEnergyFactors:
    """Factors of ``1/2 G q^3 + 1/8 H q^4`` (module docstring).

    Parameters
    ----------
    G : array_like, shape (nm, nm, nm) or None
        Cubic coefficients (:func:`flexmb.fe.reduction.stiffening.modal_geometric_stiffness`).
    H : array_like, shape (nm, nm, nm, nm) or None
        Quartic coefficients with the pair symmetries (raw or relaxed).
    omega2 : array_like, shape (nm,)
        Modal stiffness diagonal (scaling of the truncation, ``z = omega2 q``).
    tol : float
        Relative truncation, >= 0.
    min_terms : int
        Terms kept whatever ``tol`` (when there are that many).

    Returns
    -------
    StrainEnergyFactors
    """
    om = np.asarray(omega2, dtype=float).reshape(-1)
    nm = om.size
    sc = _scales(om, nm)
    if G is not None and nm:
        Gsym = _symmetrize3(np.asarray(G, dtype=float))
        s3, u, V, d3 = _cubic(Gsym, sc, tol, min_terms)
        if d3 == 0.0:  # nothing dropped: the exact factors in y = omega q (round-off, module docstring)
            s3, u, V, d3 = _cubic(Gsym, np.sqrt(sc), 0.0, 0)
    else:
        s3, u, V, d3 = np.zeros(0), np.zeros((0, nm)), np.zeros((0, nm, nm)), 0.0
    if H is not None and nm:
        H = np.asarray(H, dtype=float)
        l4, A, d4 = _quartic(H, sc, tol, min_terms)
        if d4 == 0.0:
            l4, A, d4 = _quartic(H, np.sqrt(sc), 0.0, 0)
    else:
        l4, A, d4 = np.zeros(0), np.zeros((0, nm, nm)), 0.0
    return StrainEnergyFactors(s3, u, V, l4, A, float(tol), np.array([d3, d4]))


def _cubic(Gsym: NDArray, sc: NDArray, tol: float, min_terms: int):
    """Cubic factors of the symmetrized ``Gsym`` truncated in the coordinates ``sc * q``."""
    inv = 1.0 / sc
    s3, u, V, d3 = _cubic_factors(Gsym * np.einsum("i,j,k->ijk", inv, inv, inv), tol, min_terms)
    return s3, u * sc[None, :], V * sc[None, :, None] * sc[None, None, :], d3


def _quartic(H: NDArray, sc: NDArray, tol: float, min_terms: int):
    """Quartic factors of ``H`` truncated in the coordinates ``sc * q``."""
    inv = 1.0 / sc
    l4, A, d4 = _quartic_factors(H * np.einsum("i,j,k,l->ijkl", inv, inv, inv, inv), tol, min_terms)
    return l4, A * sc[None, :, None] * sc[None, None, :], d4


def dense_from_factors(f: StrainEnergyFactors):
    """``(Gs, H)``: the fully symmetric cubic tensor and the quartic tensor of the factors."""
    Gs = np.einsum("r,rk,rij->kij", f.cubic_weights, f.cubic_u, f.cubic_V)
    Gs = _symmetrize3(Gs)
    H = np.einsum("r,rij,rkl->ijkl", f.quartic_weights, f.quartic_A, f.quartic_A)
    return Gs, H


#: the answers of :func:`factors_match`, by a digest of everything it reads (X3's rod, 5 modes: 0.03 ms
#: against 0.67 ms for the check)
_MATCHED = Memo(64)


def factors_match(f: StrainEnergyFactors, G, H, omega2, n_probe: int = 3, seed: int = 0) -> bool:
    """Whether the factors reproduce ``1/2 G q^3 + 1/8 H q^4`` at random ``q`` within their truncation
    bound (a stale factorization, e.g. of other modes, does not): the check before the dynamics
    uses stored factors.  At ``|z| = |Omega^2 q| = 1`` each term is bounded by its weight, so the
    dropped part is at most ``dropped`` times the largest weight (halved / an eighth).  The answer is
    kept by the digest of the arguments' contents (every run of a model checks its bodies' factors;
    a data set changed in place has another digest and is checked again)."""
    key = digest("factors_match", n_probe, seed, *f.arrays().values(), G, H, omega2)
    return _MATCHED.get(key, lambda: _factors_match(f, G, H, omega2, n_probe, seed))


def _factors_match(f: StrainEnergyFactors, G, H, omega2, n_probe: int, seed: int) -> bool:
    """:func:`factors_match` computed."""
    nm = np.asarray(omega2, dtype=float).size
    if f.cubic_u.shape[1:] != (nm,) or f.quartic_A.shape[1:] != (nm, nm):
        return False
    if nm == 0:
        return True
    sc = _scales(omega2, nm)
    rng = np.random.default_rng(seed)
    s_max = float(np.max(np.abs(f.cubic_weights), initial=0.0))
    l_max = float(np.max(np.abs(f.quartic_weights), initial=0.0))
    for _ in range(n_probe):
        z = rng.standard_normal(nm)
        q = z / (np.linalg.norm(z) * sc)
        u3 = 0.0 if G is None else 0.5 * float(np.einsum("kij,k,i,j->", np.asarray(G, float), q, q, q))
        u4 = 0.0 if H is None else 0.125 * float(np.einsum("ijkl,i,j,k,l->", np.asarray(H, float), q, q, q, q,
                                                            optimize=True))
        a = f.cubic_u @ q
        f3 = 0.5 * float(np.sum(f.cubic_weights * a * np.einsum("rij,i,j->r", f.cubic_V, q, q)))
        s4 = np.einsum("rij,i,j->r", f.quartic_A, q, q)
        f4 = 0.125 * float(np.sum(f.quartic_weights * s4 * s4))
        if abs(u3 - f3) > 0.5 * s_max * (1.01 * f.dropped[0] + 1e-9) + 1e-9 * abs(u3) + 1e-300:
            return False
        if abs(u4 - f4) > 0.125 * l_max * (1.01 * f.dropped[1] + 1e-9) + 1e-9 * abs(u4) + 1e-300:
            return False
    return True
