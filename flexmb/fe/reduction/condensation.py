"""The quartic strain energy of a modal body relaxed over the FE displacements outside its basis.

The raw quartic coefficients ``H`` (:func:`flexmb.fe.reduction.stiffening.modal_quartic_stiffness`) are the
SVK energy of the field ``Phi q`` *with every other FE displacement held at zero*. With a basis of
bending shapes only, that holds the axial displacements that in the real structure follow the
quadratic strain of the bending (the beam shortens its projection instead of stretching): the
membrane energy is locked in and the body is far too stiff at large deflection.

Condensation. Write the FE field ``u = Phi q + v`` with ``v`` in the complement of the basis,
``Phi^T K v = 0`` (the stiffness-metric complement used for the residual inertial preloads by
:func:`flexmb.fe.reduction.preloads.load_stiffening`, with the body held as the basis' floating frame is:
clamped reference interface, or inertia relief with mean axes ``R^T M v = 0``). Since q defines the
basis part uniquely, minimizing over ``v`` at fixed q loses nothing. To fourth order in q, with
``v = O(q^2)`` (:func:`flexmb.fe.reduction.stiffening.pair_quadrature` for the pair loads ``b_ij``)::

    U(Phi q + v) = U(Phi q) + 1/2 v^T K v + 1/2 sum_ij q_i q_j b_ij . v + O(q^5)

(the linear coupling ``q^T Phi^T K v`` vanishes in the stiffness-metric complement). Its minimum is
at ``v(q) = -1/2 sum_ij q_i q_j v_ij``, ``v_ij = K_c^+ b_ij`` (the complement part of the static
response to the load ``b_ij``), and lowers the quartic term by ``1/8 (sum q q b)^T K_c^+ (sum q q b)``::

    H_rel[i,j,k,l] = H[i,j,k,l] - b_ij . K_c^+ b_kl

with the same 1/8 and the same index symmetries as ``H``. Cells with incompatible modes (hex8,
wedge6) add the second-order relaxation of their internal modes, element unknowns decoupled from
``v`` at second order: ``- sum_e b_alpha,ij . K_aa^-1 b_alpha,kl`` with the same coupling
(:func:`flexmb.fe.reduction.stiffening.pair_quadrature` with ``internal=True``; docs/theory.md 11.1).

Rigid interface faces that turn. A rigid (RBE2-like) interface ties its nodes to the frame by the
linearized rigid motion, and the complement keeps that tie; but the frame turns by ``exp(Phi_r q)``,
so its nodes move, beyond the shapes' linear part, by ``S(q) = 1/2 sum_ij q_i q_j s_ij``
(:func:`flexmb.fe.reduction.stiffening.rigid_face_pair_displacements`, the ``1/2 theta x (theta x r)`` of the
exact rotation). Held to the linearized rotation, the face has the Green strain ``theta^2 / 2`` in its
plane, which no complement field can relax next to it: measured on the X3 rod (free small end, in-plane
bending basis) that boundary layer held 98 % of the relaxed ``H_0000``, 170 x the elastica's value
and falling only like the element length (2.89e10, 1.53e10, 9.48e9 for 12, 24, 48 hex20 along L).
With ``v = S(q) + w``, ``w`` in the complement::

    H_rel[i,j,k,l] = H + s_ij . K s_kl + b_ij . s_kl + s_ij . b_kl - (b_ij + K s_ij) . K_c^+ (b_kl + K s_kl)

(9.51e7, 8.99e7, 8.92e7 on those rods, the elastica ``4 EI int w'^2 w''^2`` within 4 %, 0.08 %, 0.2 %),
and ``S`` not being K-orthogonal to the shapes, a cubic term ``Gf[k,i,j] = phi_k . K s_ij``
(``cubic_correction``, added to ``G``; zero by symmetry for a straight beam of symmetric section). The
face's linear displacement is the shapes' exactly (``sin(phi) n = Phi_r q``, which leaves no third-order
face term); taking the rotation vector itself as ``Phi_r q`` would add ``-1/6 |theta|^2 theta . M(q)``
(``M`` the shapes' generalized moment on the face) to the quartic energy, a change of coordinates at
O(q^3) (X3 rod: +3.1e7 on ``H_0000``, 0.07 % of the first shape's tangent stiffness at the first maximum).

Together with the residual preload
stiffness ``Kg_res`` (the cross term of the same condensation between the inertial loads and the
pair loads, same complement) nothing is counted twice: the complement displacement is driven by
both, and the minimized energy splits into a term in ``s^2`` (constant), one in ``s q^2`` (``Kg_res``,
membrane part of ``b``) and one in ``q^4`` (this one). See docs/theory.md, section 6.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from flexmb.errors import ModelError
from flexmb.fe.reduction.modes import ModalBasis
from flexmb.fe.reduction.stiffening import expand_pairs, pair_quadrature, rigid_face_pair_displacements

__all__ = ["KAPPA_SOFT", "QuarticCondensation", "complement_response", "quartic_condensation", "quartic_form_minimum"]

logger = logging.getLogger(__name__)

#: bisection steps for the weight of the geometric-stiffness coupling under ``coupling="auto"``
GEOMETRIC_WEIGHT_BISECTIONS = 7

#: modes with ``kappa`` below this get the geometric-stiffness coupling under ``coupling="auto"``
#: (bending/torsion shapes of the shipped beams: kappa <= 0.03; their axial mode: 0.53)
KAPPA_SOFT = 0.2


@dataclass(frozen=True, eq=False)
class QuarticCondensation:
    """Raw and relaxed quartic strain-energy coefficients of a basis.

    Attributes
    ----------
    relaxed : ndarray, shape (nm, nm, nm, nm)
        ``H_rel`` with the coupling in ``coupling`` (energy per unit q^4; the term is ``1/8 H_rel q^4``).
    raw : ndarray, shape (nm, nm, nm, nm)
        ``H`` of :func:`flexmb.fe.reduction.stiffening.modal_quartic_stiffness`.
    coupling : str
        "full" (``b_ij = g_ij + Bk_ij`` for every pair: exact to fourth order in q), "membrane"
        (``g_ij`` only: the relaxed energy is ``min_v 1/2 int (eps_q + eps_v + E_nl(q,q)/2) : C : (...)``,
        non-negative for every q by construction) or "mixed" (full on the pairs of two soft modes).
    soft_modes : ndarray of bool, shape (nm,)
        Modes whose pairs carry the geometric-stiffness coupling.
    geometric_weight : float
        Factor on that coupling (1: exact to fourth order; below 1 when "auto" had to reduce it to
        keep the truncated quartic form non-negative; 0: membrane coupling).
    kappa : ndarray, shape (nm,)
        ``sqrt(Bk_ii . K_c^+ Bk_ii / g_ii . K_c^+ g_ii)`` per mode (the incompatible modes' parts
        included): ~1e-3-3e-2 for bending and torsion shapes of a beam (the geometric part is of order
        (thickness/length)^2), ~0.5 for an axial (membrane) shape. Soft under "auto": ``kappa < KAPPA_SOFT``.
    form_minimum : dict
        :func:`quartic_form_minimum` (energy per unit |q|^4) of the ``"relaxed"`` form, and of the full
        geometric coupling (``"weight 1"``) when its weight was reduced. (The raw form is the SVK energy
        of the field ``Phi q``, a sum of squares: its minimum is >= 0 and not searched for.)
    pair_correction : ndarray, shape (P, P)
        ``b_ij . K_c^+ b_kl`` over the pairs ``i <= j`` (``np.triu_indices(nm)`` order) for the chosen
        coupling, plus the internal modes' ``sum_e b_alpha,ij . K_aa^-1 b_alpha,kl`` (hex8, wedge6),
        symmetric; ``relaxed = expand(Hp - pair_correction)``.
    relaxed_fraction : float
        Trace ratio ``tr(Hp - C) / tr(Hp)``: how much of the raw quartic energy survives (about 1
        when the basis holds the relaxation fields, ~1e-3 for a bending-only cantilever basis).
    asymmetry : float
        ``max |C - C^T| / max |C|`` before symmetrization (round-off of the static solves).
    pair_displacements : ndarray, shape (P, 3 n_nodes) or None
        ``v_ij = K_c^+ (b_ij + K s_ij) - s_ij`` (m per unit q^2; ``s_ij`` the turning rigid faces'
        second-order motion, zero without them) of the chosen coupling, kept only on request: the
        relaxed field outside the shapes is ``v(q) = -1/2 sum_ij q_i q_j v_ij`` (sum over all i, j;
        nodal values: the incompatible modes' second-order part is not kept).
    seconds : dict
        Wall time of the quadrature pass, the static solves and the positivity check.
    cubic_correction : ndarray, shape (nm, nm, nm)
        ``Gf[k, i, j] = phi_k^T K s_ij``: the cubic energy term of the rigid faces' second-order motion
        (:func:`flexmb.fe.reduction.stiffening.rigid_face_pair_displacements`), to add to the modal geometric
        stiffness ``G`` with this ``relaxed`` (same convention, symmetric in (i, j)). Zero when no rigid
        face turns, and by symmetry for a straight beam with a symmetric section.
    """

    relaxed: NDArray[np.float64]
    raw: NDArray[np.float64]
    coupling: str
    soft_modes: NDArray[np.bool_]
    geometric_weight: float
    kappa: NDArray[np.float64]
    form_minimum: dict
    pair_correction: NDArray[np.float64]
    relaxed_fraction: float
    asymmetry: float
    pair_displacements: NDArray[np.float64] | None
    seconds: dict
    cubic_correction: NDArray[np.float64] | None = None


def quartic_form_minimum(
    H: NDArray[np.float64], *, n_samples: int = 4000, seed: int = 0, stop_below: float | None = None
) -> tuple[float, NDArray[np.float64]]:
    """Smallest value of ``sum H[i,j,k,l] q_i q_j q_k q_l`` on the unit sphere ``|q| = 1`` (estimate).

    ``n_samples`` random directions (deterministic seed), then a local minimization on the sphere
    from the five best. Exact for nm = 1; for larger nm a search (a quartic form's minimum on the
    sphere is NP-hard in general), reliable for the few-to-tens of modes of a modal body.

    Parameters
    ----------
    H : ndarray, shape (nm, nm, nm, nm)
    stop_below : float, optional
        Return as soon as a value below it is found (a sign test: the minimum is below it too, and
        the search from the remaining starts could only lower it); the value returned is then that
        upper bound of the minimum, not the search's estimate.

    Returns
    -------
    (value, q) : float (energy per unit q^4, as H), ndarray (nm,) the minimizing direction.
    """
    from scipy.optimize import minimize

    H = np.asarray(H, dtype=float)
    nm = H.shape[0]
    if nm == 0:
        return 0.0, np.zeros(0)
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n_samples, nm))
    Q = np.vstack([np.eye(nm), Q / np.linalg.norm(Q, axis=1)[:, None]])
    iu, ju = np.triu_indices(nm)
    Hp = H[iu, ju][:, iu, ju] * np.where(iu == ju, 1.0, 2.0)[:, None] * np.where(iu == ju, 1.0, 2.0)[None, :]
    Z = Q[:, iu] * Q[:, ju]  # (n, P)
    vals = np.einsum("np,np->n", Z @ Hp, Z)

    def f(x):  # the form of x / |x| through the (P, P) pair matrix, and its gradient
        n = np.linalg.norm(x)
        y = x / n
        r = Hp @ (y[iu] * y[ju])
        v = float(r @ (y[iu] * y[ju]))
        g = 2.0 * (np.bincount(iu, r * y[ju], minlength=nm) + np.bincount(ju, r * y[iu], minlength=nm))
        return v, (g - 4.0 * v * y) / n

    best_v, best_q = float(vals.min()), Q[int(np.argmin(vals))]
    for i in np.argsort(vals)[:5]:
        if stop_below is not None and best_v < stop_below:
            break
        res = minimize(f, Q[i], jac=True, method="BFGS",
                       options=dict(gtol=1e-9 * max(abs(vals).max(), 1e-300), maxiter=300))
        if res.fun < best_v:
            best_v, best_q = float(res.fun), res.x / np.linalg.norm(res.x)
    return best_v, best_q


def complement_response(K, M, mesh, basis: ModalBasis, loads, *, backend: str = "auto") -> NDArray[np.float64]:
    """``K_c^+ f`` for each load row: the part of its static response outside the basis.

    The static response with the body held as the basis' floating frame is
    (:func:`flexmb.fe.reduction.preloads.static_preload_displacements`) minus its stiffness-metric projection
    on the shapes (:func:`flexmb.fe.reduction.preloads.stiffness_projection`): the minimizer of
    ``1/2 v^T K v - f . v`` over the complement ``Phi^T K v = 0`` (and ``R^T M v = 0`` for a body
    without a reference interface).

    Parameters
    ----------
    K, M : sparse matrix, shape (3 n, 3 n)
    mesh : FEMesh
    basis : ModalBasis
    loads : array_like, shape (n_loads, 3 n)
        Nodal forces (N).

    Returns
    -------
    V : ndarray, shape (n_loads, 3 n)
        Displacements (m).
    """
    from flexmb.fe.reduction.preloads import split_response

    return split_response(K, M, mesh, basis, loads, backend=backend)[2]


def quartic_condensation(
    K, M, mesh, basis: ModalBasis, *, coupling: str = "auto", materials=None, backend: str = "auto",
    keep_fields: bool = False,
) -> QuarticCondensation:
    """Quartic strain-energy coefficients, raw and relaxed over the complement of the basis.

    See the module docstring for the derivation: ``H_rel[i,j,k,l] = H[i,j,k,l] - b_ij . K_c^+ b_kl``.

    ``coupling``:

    * "full": ``b_ij = g_ij + K_sigma(sigma_i) phi_j + K_sigma(sigma_j) phi_i``, the exact fourth-order
      expansion of the minimized FE energy. For a basis without the relaxation fields (bending
      shapes of a beam or plate) its quartic form is positive; for a basis that already holds stiff
      membrane shapes with a large cubic term the *truncated* relaxed quartic can be indefinite and
      the energy ``K + G + H_rel`` unbounded below (the true relaxed energy is not: the truncation
      is only valid for ``v = O(q^2)``).
    * "membrane": ``b_ij = g_ij``: the relaxed energy is the minimum over ``v`` of a non-negative
      SVK-like functional (a Schur complement, positive semi-definite in the pairs), bounded below
      for every basis; it leaves out the geometric-stiffness coupling, which for bending shapes is
      of relative order (thickness/length)^2 in the strain but carries most of the small quartic
      energy that survives the relaxation (measured: tip-loaded cantilever at 30 % of L, 8 % too
      flexible, see tests/test_stiffening.py).
    * "auto" (default): the geometric-stiffness part on the pairs of two *soft* modes (bending and
      torsion-like shapes, ``kappa < KAPPA_SOFT``, see :class:`QuarticCondensation`), membrane
      coupling on the pairs that involve a stiff membrane shape (an axial mode, a static stretch
      mode, for which the physical q is itself second order and the fourth-order truncation is not
      valid). If that quartic form is still negative somewhere on the unit sphere
      (:func:`quartic_form_minimum`; seen for bases with bending in two planes and torsion, at
      amplitudes of tens of % of the length in the higher modes), the geometric part is scaled by
      the largest weight in [0, 1] (bisection) that keeps it non-negative: the energy stays bounded
      below, the first-mode terms keep most of the geometric coupling (``geometric_weight``).

    Cost: one quadrature pass (the raw ``H`` plus the ``P = nm (nm + 1) / 2`` pair loads, about
    ``(7 P + 9 nm^2) n_qp P`` flops), one factorization and ``2 P`` static solves (the solver of
    the unit preloads), two ``P x 3n`` products, and the positivity search. Memory ``4 P x 3 n``
    doubles.

    Parameters
    ----------
    K, M : sparse matrix, shape (3 n, 3 n)
        Unconstrained stiffness and consistent mass of ``mesh``.
    mesh : FEMesh
    basis : ModalBasis
        Its floating-frame condition (clamped reference interface, inertia relief) decides how the
        complement is held, as for the residual preloads.
    coupling : {"auto", "full", "membrane"}
    materials : optional
        Overrides ``mesh.materials``.
    keep_fields : bool
        Return the pair displacements ``v_ij`` too.

    Returns
    -------
    QuarticCondensation
    """
    if coupling not in ("auto", "full", "membrane"):
        raise ModelError(f"quartic_condensation: `coupling` = {coupling!r}; use 'auto', 'full' or 'membrane'.")
    nm = basis.n_modes
    t0 = time.perf_counter()
    Hp, Bm, Bk, Ci = pair_quadrature(mesh, basis.shapes, materials, loads=True, internal=True)
    # second-order motion of the rigid faces that turn (exact rotation of the interface frames)
    S = rigid_face_pair_displacements(mesh.points, basis) if nm else None
    dmap = getattr(mesh, "dof_map", None)
    if S is not None and dmap is not None and dmap.has_rotations:  # on the DOF map: the faces' rotations are theta
        S_dofs = np.zeros((S.shape[0], dmap.n_dofs))
        S_dofs[:, dmap.translations().ravel()] = S
        S = S_dofs
    KS = None if S is None else np.asarray(sp.csr_matrix(K) @ S.T).T
    t1 = time.perf_counter()
    npair = Hp.shape[0]
    if nm == 0:
        Vm = Vk = np.zeros_like(Bm)
    else:
        V = complement_response(K, M, mesh, basis, np.vstack([Bm if KS is None else Bm + KS, Bk]), backend=backend)
        Vm, Vk = V[:npair], V[npair:]
    t2 = time.perf_counter()
    iu, ju = np.triu_indices(nm)
    diag = np.flatnonzero(iu == ju)
    e_m = np.abs(np.einsum("pi,pi->p", (Bm if KS is None else Bm + KS)[diag], Vm[diag]))  # complement energies of each mode's own pair loads
    e_k = np.abs(np.einsum("pi,pi->p", Bk[diag], Vk[diag]))
    if Ci is not None:  # and of the incompatible modes' second-order relaxation
        e_m = e_m + np.abs(Ci[0][diag, diag])
        e_k = e_k + np.abs(Ci[2][diag, diag])
    # g_ii . K_c^+ g_ii <= Hp[ii, ii] (Schur complement): round-off below 1e-12 of the raw diagonal
    tiny = 1e-300 + 1e-12 * float(np.abs(np.diag(Hp)).max(initial=0.0))
    kappa = np.sqrt(e_k / np.maximum(e_m, tiny)) * (np.maximum(e_m, e_k) > tiny)
    raw = expand_pairs(Hp, nm)

    def relaxed_with(soft, weight=1.0, n_samples=4000, stop_below=None):
        mask = weight * (soft[iu] & soft[ju]).astype(float)[:, None]
        B, V = Bm + mask * Bk, Vm + mask * Vk
        C = (B if KS is None else B + KS) @ V.T
        scale = float(np.abs(C).max(initial=0.0))
        asym = float(np.abs(C - C.T).max(initial=0.0) / scale) if scale > 0 else 0.0
        C = 0.5 * (C + C.T)
        if Ci is not None:  # the incompatible modes relax with the same coupling (solid_pairs)
            mk = mask * Ci[1]
            C = C + Ci[0] + mk + mk.T + mask * Ci[2] * mask.T
        if S is not None:  # the face part of the field, s_ij K s_kl + b_ij . s_kl + s_ij . b_kl, is not minimized over
            BS = B @ S.T
            C = C - (S @ KS.T + BS + BS.T)
            V = V - S  # v(q) = -1/2 sum q_i q_j (V_ij - s_ij)
        Hr = expand_pairs(Hp - C, nm)
        return dict(C=C, H=Hr, asym=asym, V=V,
                    minimum=quartic_form_minimum(Hr, n_samples=n_samples, stop_below=stop_below)[0])

    soft = {"full": np.ones(nm, bool), "membrane": np.zeros(nm, bool), "auto": kappa < KAPPA_SOFT}[coupling]
    res = relaxed_with(soft)
    minima = {"relaxed": res["minimum"]}
    tol = 1e-9 * float(np.abs(raw).max(initial=0.0))  # round-off of a form with null directions
    weight = 1.0
    if coupling == "auto" and soft.any() and res["minimum"] < -tol:
        # the membrane form (weight 0) is PSD; the minimum on the sphere is concave in the weight:
        # bisect for the largest weight of the geometric coupling that keeps the form non-negative
        minima["weight 1"] = res["minimum"]
        lo, hi = 0.0, 1.0
        for _ in range(GEOMETRIC_WEIGHT_BISECTIONS):
            mid = 0.5 * (lo + hi)
            if relaxed_with(soft, mid, n_samples=1000, stop_below=-tol)["minimum"] >= -tol:
                lo = mid
            else:
                hi = mid
        weight = lo
        res = relaxed_with(soft, weight)
        while res["minimum"] < -tol and weight > 0.0:  # the full search found what the short one missed
            weight = 0.5 * weight if weight > 1e-3 else 0.0
            res = relaxed_with(soft, weight)
        minima["relaxed"] = res["minimum"]
        logger.info(
            "quartic_condensation: with the full geometric-stiffness coupling on the %d soft modes the truncated "
            "relaxed quartic energy is indefinite (minimum %.3g per unit |q|^4); its weight is reduced to %.3g "
            "so that the energy stays bounded below (membrane coupling: weight 0).",
            int(soft.sum()), minima["weight 1"], weight,
        )
    elif res["minimum"] < -tol:
        logger.warning(
            "quartic_condensation: coupling=%r gives an indefinite relaxed quartic energy (minimum %.3g per unit "
            "|q|^4 on the unit sphere): K + G + H_rel is unbounded below at large q; use coupling='auto'.",
            coupling, res["minimum"],
        )
    t3 = time.perf_counter()
    if not soft.any() or weight == 0.0:
        chosen = "membrane"
    elif soft.all() and weight == 1.0:
        chosen = "full"
    else:
        chosen = "mixed"
    tr_raw = float(np.trace(Hp))
    frac = float(np.trace(Hp - res["C"]) / tr_raw) if tr_raw > 0 else 1.0
    logger.info(
        "quartic_condensation: %d modes, %d pairs, %s coupling (geometric part on %d modes; kappa %s); relaxed/raw "
        "trace %.3g; form minima %s; asymmetry %.1e; quadrature %.2f s, complement solves %.2f s, positivity %.2f s",
        nm, npair, chosen, int(soft.sum()), np.array2string(kappa, precision=2), frac,
        {k: float(f"{v:.3g}") for k, v in minima.items()}, res["asym"], t1 - t0, t2 - t1, t3 - t2,
    )
    Gf = np.zeros((nm, nm, nm))
    if S is not None:
        w = np.asarray(basis.shapes.T @ KS.T)  # (nm, P): phi_k . K s_ij
        Gf[:, iu, ju] = w
        Gf[:, ju, iu] = w
    return QuarticCondensation(
        cubic_correction=Gf,
        relaxed=res["H"],
        raw=raw,
        coupling=chosen,
        soft_modes=soft,
        geometric_weight=weight if soft.any() else 0.0,
        kappa=kappa,
        form_minimum=minima,
        pair_correction=res["C"],
        relaxed_fraction=frac,
        asymmetry=res["asym"],
        pair_displacements=res["V"] if keep_fields else None,
        seconds=dict(quadrature=t1 - t0, solves=t2 - t1, positivity=t3 - t2),
    )
