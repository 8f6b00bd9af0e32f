"""The compiled joint glue (flexmb.dynamics.elements.joint_kernels) against the NumPy expressions it replaced,
on random data: constrained, free (stiff, damped) and driven components, several joints and points."""
import numpy as np
import pytest

from flexmb import rotations as rot
from flexmb.dynamics.elements import joint_kernels as jkern
from flexmb.dynamics.elements.joints import _SLOTS
from flexmb.dynamics.layout import JNA, JNB, JOINT_SLOTS, JPHI, JQ, JS


def _numpy_constitutive(Jv, US, UPHI, acc, tgt, Gax, GaR, Gbx, k, c, ref, cons):
    """joints._constitutive before joint_kernels (commit 5c5b7f9), residual part."""
    nj, p = Jv.shape[:2]
    S, PHI, Q, NA, NB = (Jv[..., JS:JS + 3], Jv[..., JPHI:JPHI + 3], Jv[..., JQ:JQ + 6],
                         Jv[..., JNA:JNA + 6], Jv[..., JNB:JNB + 6])
    uq = np.concatenate([US, UPHI], axis=-1)
    acc6 = np.concatenate([np.zeros((nj, 3)), acc], axis=1)
    rc_cons = uq + acc6[:, None, :] - np.swapaxes(tgt, 1, 2)
    q_g = np.concatenate([S, PHI], axis=-1) + acc6[:, None, :]
    dg = Gbx - Gax
    urel = NB[..., :3] - NA[..., :3] - rot.cross(NA[..., 3:], dg)
    Rat_g = np.swapaxes(GaR, -1, -2)
    sdot = np.einsum("jide,jie->jid", Rat_g, urel)
    wrel = np.einsum("jide,jie->jid", Rat_g, NB[..., 3:] - NA[..., 3:])
    qdot = np.concatenate([sdot, wrel], axis=-1)
    rc_free = Q + k[:, None, :] * (q_g - ref[:, None, :]) + c[:, None, :] * qdot
    return np.where(np.broadcast_to(cons[:, None, :], (nj, p, 6)), rc_cons, rc_free)


@pytest.mark.parametrize("nj,p", [(1, 1), (4, 2), (7, 3)])
def test_constitutive_rows_match_numpy(nj, p):
    rng = np.random.default_rng(nj * 10 + p)
    Jv = rng.normal(size=(nj, p, JOINT_SLOTS))
    US, UPHI, Gax, Gbx = (rng.normal(size=(nj, p, 3)) for _ in range(4))
    GaR = rot.exp(rng.normal(size=(nj, p, 3)))
    acc = rng.normal(size=(nj, 3))
    tgt = rng.normal(size=(nj, 6, p))
    k, c, ref = (rng.normal(size=(nj, 6)) for _ in range(3))
    cons = rng.random((nj, 6)) < 0.5
    cons[0] = [True, True, True, True, True, False]   # a revolute-like joint
    r = np.full((nj, p, JOINT_SLOTS), np.nan)
    jkern.constitutive_rows(Jv, _SLOTS, US, UPHI, acc, tgt, Gax, GaR, Gbx, k, c, ref, cons, r, JQ)
    ref_rc = _numpy_constitutive(Jv, US, UPHI, acc, tgt, Gax, GaR, Gbx, k, c, ref, cons)
    np.testing.assert_allclose(r[..., JQ:JQ + 6], ref_rc, rtol=1e-14, atol=1e-14)
    # only the law's slots are written
    assert np.isnan(r[..., :JQ]).all() and np.isnan(r[..., JQ + 6:]).all()


@pytest.mark.parametrize("nj,p", [(1, 1), (5, 3)])
def test_side_a_wrench_matches_numpy_and_fd(nj, p):
    rng = np.random.default_rng(7 + nj + p)
    L = rng.normal(size=(nj, p, 6))
    Gax, Gbx = rng.normal(size=(nj, p, 3)), rng.normal(size=(nj, p, 3))
    wa = np.empty((nj, p, 6))
    dW_lam, dW_xb = np.empty((nj, p, 6, 6)), np.empty((nj, p, 6, 6))
    jkern.side_a_wrench(L, Gax, Gbx, wa, dW_lam, dW_xb, True)
    dg = Gbx - Gax
    Lf = L[..., :3]
    np.testing.assert_allclose(wa, -np.concatenate([Lf, L[..., 3:] + rot.cross(dg, Lf)], axis=-1),
                               rtol=1e-15, atol=1e-15)
    # derivatives: wa is linear in lambda and in x_B, so central differences are exact up to round-off
    eps = 1e-6
    for a in range(6):
        dL = np.zeros(6)
        dL[a] = eps
        wp, wm = np.empty_like(wa), np.empty_like(wa)
        jkern.side_a_wrench(L + dL, Gax, Gbx, wp, dW_lam.copy(), dW_xb.copy(), False)
        jkern.side_a_wrench(L - dL, Gax, Gbx, wm, dW_lam.copy(), dW_xb.copy(), False)
        np.testing.assert_allclose((wp - wm) / (2 * eps), dW_lam[..., a], atol=1e-8)
    for a in range(3):
        dx = np.zeros(3)
        dx[a] = eps
        wp, wm = np.empty_like(wa), np.empty_like(wa)
        jkern.side_a_wrench(L, Gax, Gbx + dx, wp, dW_lam.copy(), dW_xb.copy(), False)
        jkern.side_a_wrench(L, Gax, Gbx - dx, wm, dW_lam.copy(), dW_xb.copy(), False)
        np.testing.assert_allclose((wp - wm) / (2 * eps), dW_xb[..., a], atol=1e-8)
    # the position of B does not depend on the rotation increment psi
    assert not dW_xb[..., 3:].any()


def test_multiplier_blocks_match_numpy():
    from flexmb.dynamics.layout import JLAM
    rng = np.random.default_rng(3)
    nj, p, h = 4, 3, 0.0123
    Jv = rng.normal(size=(nj, p, JOINT_SLOTS))
    GaR = rot.exp(rng.normal(size=(nj, p, 3)))
    sNB, sL, bdR = np.empty((nj, p, 3, 3)), np.empty((nj, p, 3, 3)), np.empty((nj, p, 6, 6))
    jkern.multiplier_blocks(h, Jv, _SLOTS, GaR, sNB, bdR, sL)
    np.testing.assert_array_equal(sNB, h * rot.skew(Jv[..., JNB:JNB + 3]))
    np.testing.assert_array_equal(sL, -h * rot.skew(Jv[..., JLAM:JLAM + 3]))
    bd = np.zeros((nj, p, 6, 6))
    bd[..., :3, :3] = GaR
    bd[..., 3:, 3:] = GaR
    np.testing.assert_array_equal(bdR, -h * bd)


def test_scatter_add_accumulates_repeated_rows_like_add_at():
    rng = np.random.default_rng(11)
    rows = rng.integers(0, 7, size=(5, 2, 6))   # many repeats
    vals = rng.normal(size=(5, 2, 6))
    res0 = rng.normal(size=9)
    a, b = res0.copy(), res0.copy()
    np.add.at(a, rows, vals)
    jkern.scatter_add(b, rows, vals)
    np.testing.assert_array_equal(a, b)
