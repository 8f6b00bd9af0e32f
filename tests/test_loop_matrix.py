"""The scaled loop matrix of the per-node singular-configuration check (issue 17 D, X3 in Exudyn's time).

:func:`flexmb.dynamics.node.redundancy.scaled_loop_matrix` is built densely from the node's joint frames
(kept on the node and shared with the node projection) instead of through the sparse velocity constraint
matrix; it must be the same matrix, bit for bit, on rigid and modal columns and under a selection that
drops equations, and the singular-node check that reads it must still fire near a change point of a
parallelogram (where the kept loop equations lose a rank: the smallest scaled singular value falls
like the distance to the change point) and stay silent away from it.
"""
from __future__ import annotations

import numpy as np
import pytest

from flexmb.dynamics.node import redundancy as rd
from flexmb.dynamics.node.constraints import velocity_constraint_matrix
from flexmb.dynamics.node.selection import Selection
from flexmb.dynamics.system import compile_model, initial_state
from flexmb.dynamics.variants.singular_node import SINGULAR_NODE_TOL, self_stresses
from flexmb.validation.cases import case_x3

from test_singular_passage import parallelogram_row


def sparse_reference(cm, st, js, sel=None):
    """The scaled loop matrix as it was built before: the sparse velocity constraint matrix restricted to its
    stored columns, the column magnitudes from the attachments' velocity maps (``node_velocity_map``)."""
    G, labels = velocity_constraint_matrix(cm, st, sel, joints=js)
    cols = np.unique(G.indices)
    L = cm.length_scale
    mag = np.zeros(cm.nv)
    for att in (cm.att_a, cm.att_b):
        for _, vcols, B in att.node_velocity_map(cm, st):
            Bh = np.abs(B)
            Bh[:, :3] /= L
            np.maximum.at(mag, np.asarray(vcols).reshape(-1), Bh.max(axis=1).reshape(-1))
    rs = np.array([1.0 / L if isinstance(c, int) and c < 3 else 1.0 for _, c in labels])
    return G[:, cols].toarray() * rs[:, None], labels, cols, mag


def floored(cm, mag):
    """The column magnitudes ``mag`` with the floors of :func:`~flexmb.dynamics.node.redundancy.column_magnitudes`:
    modal columns at least MODAL_FLOOR of their body's largest modal one, unseen columns 1."""
    mag = mag.copy()
    for b in range(cm.nb):
        nvb = cm.groups[cm.group_of[b]].nv
        modal = cm.vel_off[b] + np.arange(6, nvb)
        if modal.size:
            mag[modal] = np.maximum(mag[modal], rd.MODAL_FLOOR * mag[modal].max())
    mag[mag == 0] = 1.0
    return mag


def moved(st, rng, cm):
    """The node ``st`` with its bodies turned and shifted at random (and the modal coordinates of a flexible
    body set at random): a configuration with every entry of the rate blocks in use."""
    from flexmb import rotations as rot

    out = st.copy()
    out.x = st.x + 0.1 * cm.length_scale * rng.standard_normal(st.x.shape)
    out.R = rot.exp(rng.standard_normal((cm.nb, 3))) @ st.R
    out.extra = {k: v + 1e-3 * rng.standard_normal(v.shape) for k, v in st.extra.items()}
    return out


@pytest.mark.parametrize("case", ["x3", "parallelogram"])
def test_scaled_loop_matrix_equals_the_sparse_build(case):
    model = (case_x3.slider_crank(case_x3.OMEGA_X3, 0.0, "none", case_x3.rod_data()) if case == "x3"
             else parallelogram_row(30.0, 2))
    cm = compile_model(model)
    st0, _ = initial_state(cm)
    js = rd.loop_joints(cm)
    full = Selection.full(cm)
    dropped = full.dropping(rd.detect_redundant(cm, st0)[0] or [rd.constrained_labels(cm)[-1]])
    rng = np.random.default_rng(17)
    for st in [st0] + [moved(st0, rng, cm) for _ in range(3)]:
        for sel in (None, dropped):
            Gs, labels, cols, colscale = rd.scaled_loop_matrix(cm, st, js, sel)
            G_ref, labels_ref, cols_ref, mag_ref = sparse_reference(cm, st, js, sel)
            assert labels == labels_ref
            assert np.array_equal(cols, cols_ref)
            assert np.array_equal(colscale, 1.0 / floored(cm, mag_ref))
            assert np.array_equal(Gs, G_ref * colscale[cols][None, :])  # bit for bit


@pytest.mark.parametrize("theta_deg, singular", [(1e-3, True), (-5e-3, True), (0.1, False), (90.0, False)])
def test_singular_node_check_fires_near_the_change_point(theta_deg, singular):
    """Two parallelograms side by side at ``theta_deg`` from their change point: the kept loop equations'
    smallest scaled singular value over the largest is 0.050 theta [rad] (measured from 1e-5 to 5 deg: one
    rank per parallelogram lost linearly), 8.7e-7 at 1e-3 deg, below SINGULAR_NODE_TOL = 1e-5, so the check returns the two
    self-stresses there; at 0.1 deg (8.7e-5) and 90 deg it returns None."""
    cm = compile_model(parallelogram_row(theta_deg, 2))
    st, _ = initial_state(cm)
    generic, _ = initial_state(compile_model(parallelogram_row(40.0, 2)))
    sel = Selection.full(cm).dropping(rd.detect_redundant(compile_model(parallelogram_row(40.0, 2)), generic)[0])
    found = self_stresses(cm, st, sel)
    if not singular:
        assert found is None
        return
    assert found is not None
    labels, n, ratio = found
    assert ratio < SINGULAR_NODE_TOL
    assert 0.045 < ratio / np.radians(abs(theta_deg)) < 0.055  # one rank lost, linearly in theta
    assert n.shape[1] == 2  # one self-stress per parallelogram: both pass their change point at once
    Gs, labels_kept, _, _ = rd.scaled_loop_matrix(cm, st, rd.loop_joints(cm), sel)
    assert labels == labels_kept
    # the self-stresses: orthonormal, and the kept rows combined by them have no lever (n^T Gs ~ ratio |Gs|)
    assert np.allclose(n.T @ n, np.eye(n.shape[1]), atol=1e-12)
    assert np.linalg.norm(n.T @ Gs) <= 10 * ratio * np.linalg.norm(Gs, 2)


@pytest.mark.parametrize("shape", [(18, 23), (6, 6), (12, 30)])
@pytest.mark.parametrize("smallest", [1.0, 1e-3, 1e-6, 1e-9, 0.0])
def test_conditioning_bound_is_below_the_svd_ratio(shape, smallest):
    """:func:`~flexmb.dynamics.node.redundancy.conditioning_bound` (``1 / (|G|_F |L^-1|_F)``, ``G G^T = L L^T``)
    never exceeds ``sigma_min / sigma_max`` of the SVD and is within ``n_rows`` of it (the Frobenius norms
    over the 2-norms, ``sqrt(n_rows)`` each), for singular values spread down to ``smallest``; an exactly
    singular matrix proves nothing (0 or a bound at round-off)."""
    rng = np.random.default_rng(3)
    n, m = shape
    U, _ = np.linalg.qr(rng.standard_normal((n, n)))
    V, _ = np.linalg.qr(rng.standard_normal((m, n)))
    sv = np.geomspace(1.0, max(smallest, 1e-300), n) if smallest > 0 else np.r_[np.linspace(1.0, 0.1, n - 1), 0.0]
    G = (U * sv) @ V.T
    s = np.linalg.svd(G, compute_uv=False)
    ratio = s[-1] / s[0]
    b = rd.conditioning_bound(G)
    if smallest >= 1e-6:
        assert ratio / n <= b <= ratio * (1 + 1e-8)
    else:  # at and below the round-off of the Gram matrix (1e-16 of sigma_max^2): nothing to prove
        assert b <= 1e-7


def test_conditioning_bound_proves_nothing_for_wide_or_bad_input():
    """More rows than columns (dependent by count), a zero matrix, NaN: 0.0, so that the check falls back
    to the SVD."""
    rng = np.random.default_rng(4)
    assert rd.conditioning_bound(rng.standard_normal((7, 5))) == 0.0
    assert rd.conditioning_bound(np.zeros((4, 6))) == 0.0
    G = rng.standard_normal((4, 6))
    G[1, 2] = np.nan
    assert rd.conditioning_bound(G) == 0.0
    assert rd.conditioning_bound(np.zeros((0, 6))) == 0.0


def test_singular_node_check_without_dropped_equations_decides_as_the_svd():
    """X3's loop set drops nothing: the check proves a node regular by the conditioning bound when it can
    (at least ``BOUND_MARGIN`` x the tolerance) and asks the SVD otherwise; either way the decision is the
    SVD's (None iff its ratio is at least ``tol``), for tolerances from far below the node's ratio up to
    just around it, at random configurations."""
    from flexmb.dynamics.variants.singular_node import BOUND_MARGIN

    cm = compile_model(case_x3.slider_crank(case_x3.OMEGA_X3, 0.0, "none", case_x3.rod_data()))
    st0, _ = initial_state(cm)
    full = Selection.full(cm)
    assert not full.redundant
    rng = np.random.default_rng(5)
    for st in [st0] + [moved(st0, rng, cm) for _ in range(3)]:
        Gs, _ = rd.full_loop_matrix(cm, st)
        s = np.linalg.svd(Gs, compute_uv=False)
        ratio, b = s[-1] / s[0], rd.conditioning_bound(Gs)
        assert 0 < b <= ratio
        tols = [SINGULAR_NODE_TOL, b / BOUND_MARGIN, b / BOUND_MARGIN * 1.01, ratio * 0.999, ratio * 1.001, 2 * ratio]
        for tol in tols:
            cm.cache.node_svd = None
            found = self_stresses(cm, st, full, tol=tol)
            assert (found is None) == (ratio >= tol), (tol, ratio, b)
            if found is not None:
                assert found[2] == pytest.approx(ratio, rel=1e-12)


def test_redundancy_check_at_t0_decides_as_the_svds_for_an_independent_loop_set(caplog):
    """``detect_redundant`` proves an independent, well-conditioned loop set by the conditioning bound
    (at least 2 x NEAR_DEPENDENT_TOL) without its two SVDs: X3 at t0 and at random configurations has
    nothing dependent and no WARNING, as the SVDs decide (full rank, conditioning above the warning's
    threshold)."""
    import logging

    cm = compile_model(case_x3.slider_crank(case_x3.OMEGA_X3, 0.0, "none", case_x3.rod_data()))
    st0, _ = initial_state(cm)
    js = rd.loop_joints(cm)
    rng = np.random.default_rng(6)
    for st in [st0] + [moved(st0, rng, cm) for _ in range(3)]:
        Gs, _, _, _ = rd.scaled_loop_matrix(cm, st, js)
        assert rd.conditioning_bound(Gs) >= 2 * rd.NEAR_DEPENDENT_TOL
        rank, _, _, _ = rd.rank_select(Gs)
        assert rank == Gs.shape[0] and rd.conditioning(Gs) >= rd.NEAR_DEPENDENT_TOL
        with caplog.at_level(logging.WARNING, logger="flexmb"):
            assert rd.detect_redundant(cm, st) == ([], [])
        assert not caplog.records
