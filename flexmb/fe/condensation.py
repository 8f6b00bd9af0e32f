"""The quartic strain energy of a modal body relaxed over the FE displacements outside its basis.

The raw quartic coefficients ``H`` (:func:`flexmb.fe.stiffening.modal_quartic_stiffness`) are the
SVK energy of the field ``Phi q`` *with every other FE displacement held at zero*. With a basis of
bending shapes only, that holds the axial displacements that in the real structure follow the
quadratic strain of the bending (the beam shortens its projection instead of stretching): the
membrane energy is locked in and the body is far too stiff at large deflection.

Condensation. Write the FE field ``u = Phi q + v`` with ``v`` in the complement of the basis,
``Phi^T K v = 0`` (the stiffness-metric complement used for the residual inertial preloads by
:func:`flexmb.fe.preloads.load_stiffening`, with the body held as the basis' floating frame is:
clamped reference interface, or inertia relief with mean axes ``R^T M v = 0``). Since q defines the
basis part uniquely, minimizing over ``v`` at fixed q loses nothing. To fourth order in q, with
``v = O(q^2)`` (:func:`flexmb.fe.stiffening.pair_quadrature` for the pair loads ``b_ij``)::

    U(Phi q + v) = U(Phi q) + 1/2 v^T K v + 1/2 sum_ij q_i q_j b_ij . v + O(q^5)

(the linear coupling ``q^T Phi^T K v`` vanishes in the stiffness-metric complement). Its minimum is
at ``v(q) = -1/2 sum_ij q_i q_j v_ij``, ``v_ij = K_c^+ b_ij`` (the complement part of the static
response to the load ``b_ij``), and lowers the quartic term by ``1/8 (sum q q b)^T K_c^+ (sum q q b)``::

    H_rel[i,j,k,l] = H[i,j,k,l] - b_ij . K_c^+ b_kl

with the same 1/8 and the same index symmetries as ``H``. Together with the residual preload
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
from numpy.typing import NDArray

from flexmb.fe.modes import ModalBasis
from flexmb.fe.stiffening import expand_pairs, pair_quadrature

__all__ = ["QuarticCondensation", "complement_response", "quartic_condensation"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class QuarticCondensation:
    """Raw and relaxed quartic strain-energy coefficients of a basis.

    Attributes
    ----------
    relaxed : ndarray, shape (nm, nm, nm, nm)
        ``H_rel`` (energy per unit q^4; the energy term is ``1/8 H_rel q^4``).
    raw : ndarray, shape (nm, nm, nm, nm)
        ``H`` of :func:`flexmb.fe.stiffening.modal_quartic_stiffness`.
    pair_correction : ndarray, shape (P, P)
        ``b_ij . K_c^+ b_kl`` over the pairs ``i <= j`` (``np.triu_indices(nm)`` order), symmetric
        positive semi-definite; ``relaxed = expand(Hp - pair_correction)``.
    relaxed_fraction : float
        Trace ratio ``tr(Hp - C) / tr(Hp)``: a one-number summary of how much of the raw quartic
        energy survives the relaxation (about 1 when the basis holds the axial/static shapes,
        small for a bending-only basis of a slender beam).
    asymmetry : float
        ``max |C - C^T| / max |C|`` before symmetrization (round-off of the static solves).
    pair_displacements : ndarray, shape (P, 3 n_nodes) or None
        ``v_ij = K_c^+ b_ij`` (m per unit q^2), kept only on request: the relaxed complement field
        is ``v(q) = -1/2 sum_ij q_i q_j v_ij`` (off-diagonal pairs counted twice).
    seconds : dict
        Wall time of the quadrature pass and of the static solves.
    """

    relaxed: NDArray[np.float64]
    raw: NDArray[np.float64]
    pair_correction: NDArray[np.float64]
    relaxed_fraction: float
    asymmetry: float
    pair_displacements: NDArray[np.float64] | None
    seconds: dict


def complement_response(K, M, mesh, basis: ModalBasis, loads, *, backend: str = "auto") -> NDArray[np.float64]:
    """``K_c^+ f`` for each load row: the part of its static response outside the basis.

    The static response with the body held as the basis' floating frame is
    (:func:`flexmb.fe.preloads.static_preload_displacements`) minus its stiffness-metric projection
    on the shapes (:func:`flexmb.fe.preloads.stiffness_projection`): the minimizer of
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
    from flexmb.fe.preloads import static_preload_displacements, stiffness_projection

    U = static_preload_displacements(K, M, mesh, basis, loads, backend=backend)
    a = stiffness_projection(K, basis.shapes, U)
    return U - a @ basis.shapes.T


def quartic_condensation(
    K, M, mesh, basis: ModalBasis, *, materials=None, backend: str = "auto", keep_fields: bool = False
) -> QuarticCondensation:
    """Quartic strain-energy coefficients, raw and relaxed over the complement of the basis.

    See the module docstring for the derivation: ``H_rel[i,j,k,l] = H[i,j,k,l] - b_ij . K_c^+ b_kl``.

    Cost: one quadrature pass (the raw ``H`` plus the ``P = nm (nm + 1) / 2`` pair loads, about
    ``(7 P + 9 nm^2) n_qp P`` flops), one factorization and ``P`` static solves (the same solver as
    the 12 unit preloads), and a ``P x 3n`` product. Memory ``2 P x 3 n`` doubles.

    Parameters
    ----------
    K, M : sparse matrix, shape (3 n, 3 n)
        Unconstrained stiffness and consistent mass of ``mesh``.
    mesh : FEMesh
    basis : ModalBasis
        Its floating-frame condition (clamped reference interface, inertia relief) decides how the
        complement is held, as for the residual preloads.
    materials : optional
        Overrides ``mesh.materials``.
    keep_fields : bool
        Return the pair displacements ``v_ij`` too.

    Returns
    -------
    QuarticCondensation
    """
    nm = basis.n_modes
    t0 = time.perf_counter()
    Hp, B = pair_quadrature(mesh, basis.shapes, materials, loads=True)
    t1 = time.perf_counter()
    if nm == 0:
        V = np.zeros_like(B)
    else:
        V = complement_response(K, M, mesh, basis, B, backend=backend)
    C = B @ V.T
    t2 = time.perf_counter()
    scale = float(np.abs(C).max(initial=0.0))
    asym = float(np.abs(C - C.T).max(initial=0.0) / scale) if scale > 0 else 0.0
    C = 0.5 * (C + C.T)
    Hr = Hp - C
    tr_raw = float(np.trace(Hp))
    frac = float(np.trace(Hr) / tr_raw) if tr_raw > 0 else 1.0
    logger.info(
        "quartic_condensation: %d modes, %d pairs; relaxed/raw trace %.3g; asymmetry %.1e; "
        "quadrature %.2f s, complement solves %.2f s", nm, Hp.shape[0], frac, asym, t1 - t0, t2 - t1,
    )
    return QuarticCondensation(
        relaxed=expand_pairs(Hr, nm),
        raw=expand_pairs(Hp, nm),
        pair_correction=C,
        relaxed_fraction=frac,
        asymmetry=asym,
        pair_displacements=V if keep_fields else None,
        seconds=dict(quadrature=t1 - t0, solves=t2 - t1),
    )
