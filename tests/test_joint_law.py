"""The compiled joint laws (flexmb.dynamics.elements.joint_law) on random data: the law rows against a
NumPy formulation (held, driven, free with spring and damper, the universal joint's moment and cross
rows), their Jacobian values against central differences of the kernel itself, the side-A wrench, the
multiplier blocks, the consistent transport moment and its derivatives."""
import numpy as np
import pytest

from flexmb import rotations as rot
from flexmb.dynamics import kernels
from flexmb.dynamics.elements import joint_law as jkern
from flexmb.dynamics.elements.joint_law import FREE, UNIV_CROSS, UNIV_MOMENT
from flexmb.dynamics.elements.joints import SLOTS as _SLOTS
from flexmb.dynamics.layout import JNA, JNB, JOINT_SLOTS, JPHI, JQ, JS


def _numpy_constitutive(Jv, US, UPHI, acc, tgt, Gax, GaR, Gbx, k, c, ref, cons, Rrt=None, Rr=None, univ=None):
    """The law rows in NumPy (joints._constitutive before the compiled laws, commit 5c5b7f9, with the
    universal joint's rows of that module)."""
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
    out = np.where(np.broadcast_to(cons[:, None, :], (nj, p, 6)), rc_cons, rc_free)
    if univ is not None and univ.any():
        u = np.nonzero(univ)[0]
        out[u, :, 5] = Rrt[u][..., 0, 1]
        Rr_g = Rr[u][:, None] @ rot.exp(PHI[u])
        out[u, :, 4] = np.einsum("jid,jid->ji", Q[u][..., 3:], Rr_g @ np.array([0.0, 1.0, 0.0]))
    return out


def _random_laws(rng, nj, p):
    Jv = rng.normal(size=(nj, p, JOINT_SLOTS))
    US, UPHI, Gax, Gbx = (rng.normal(size=(nj, p, 3)) for _ in range(4))
    GaR = rot.exp(rng.normal(size=(nj, p, 3)))
    Rrt = rot.exp(rng.normal(size=(nj, p, 3)))
    Rr = rot.exp(rng.normal(size=(nj, 3)))
    acc = rng.normal(size=(nj, 3))
    tgt = rng.normal(size=(nj, 6, p))
    k, c, ref = (rng.normal(size=(nj, 6)) for _ in range(3))
    cons = rng.random((nj, 6)) < 0.5
    cons[0] = [True, True, True, True, True, False]   # a revolute-like joint
    univ = np.zeros(nj, bool)
    if nj > 1:
        univ[1] = True                                 # a universal joint
        cons[1] = [True, True, True, False, False, False]
    return Jv, US, UPHI, Gax, Gbx, GaR, Rrt, Rr, acc, tgt, k, c, ref, cons, univ


def _law(Jv, US, UPHI, Rrt, Rr, acc, tgt, Gax, GaR, Gbx, k, c, ref, kind, jac=True):
    nj, p = Jv.shape[:2]
    r = np.full((nj, p, JOINT_SLOTS), np.nan)
    law_nu, law_dA, law_dB = np.zeros((nj, p, 6, 12)), np.zeros((nj, p, 6, 6)), np.zeros((nj, p, 6, 6))
    uni = np.zeros((nj, p, 9))
    jkern.law_rows(Jv, _SLOTS, US, UPHI, Rrt, Rr, acc, tgt, Gax, GaR, Gbx, k, c, ref, kind, r, jac,
                   law_nu, law_dA, law_dB, uni)
    return r, law_nu, law_dA, law_dB, uni


@pytest.mark.parametrize("nj,p", [(1, 1), (4, 2), (7, 3)])
def test_law_rows_match_numpy(nj, p):
    rng = np.random.default_rng(nj * 10 + p)
    Jv, US, UPHI, Gax, Gbx, GaR, Rrt, Rr, acc, tgt, k, c, ref, cons, univ = _random_laws(rng, nj, p)
    kind = jkern.component_kinds(cons, univ)
    if nj > 1:
        assert kind[1, 4] == UNIV_MOMENT and kind[1, 5] == UNIV_CROSS and kind[1, 3] == FREE
    r = _law(Jv, US, UPHI, Rrt, Rr, acc, tgt, Gax, GaR, Gbx, k, c, ref, kind)[0]
    ref_rc = _numpy_constitutive(Jv, US, UPHI, acc, tgt, Gax, GaR, Gbx, k, c, ref, cons, Rrt, Rr, univ)
    np.testing.assert_allclose(r[..., JQ:JQ + 6], ref_rc, rtol=1e-14, atol=1e-14)
    # only the law's slots are written
    assert np.isnan(r[..., :JQ]).all() and np.isnan(r[..., JQ + 6:]).all()


@pytest.mark.parametrize("p", [1, 3])
def test_law_jacobian_values_match_central_differences(p):
    """The dampers' values / (nu_a, nu_b) and / the attachment poses (dx, psi), the universal joint's
    cross / u_phi and moment / (Qbar_m, phi): central differences of the law rows."""
    rng = np.random.default_rng(40 + p)
    nj = 4
    Jv, US, UPHI, Gax, Gbx, GaR, Rrt, Rr, acc, tgt, k, c, ref, cons, univ = _random_laws(rng, nj, p)
    kind = jkern.component_kinds(cons, univ)
    args = [Jv, US, UPHI, Rrt, Rr, acc, tgt, Gax, GaR, Gbx, k, c, ref, kind]
    _, law_nu, law_dA, law_dB, uni = _law(*args)
    free = (kind == FREE)[:, None, :]
    eps = 1e-6

    def rows(**kw):
        a = dict(zip(("Jv", "US", "UPHI", "Rrt", "Rr", "acc", "tgt", "Gax", "GaR", "Gbx", "k", "c", "ref", "kind"),
                     args))
        a.update(kw)
        return _law(*a.values(), jac=False)[0][..., JQ:JQ + 6]

    # / nu_a, nu_b: columns 0:6 and 6:12 of law_nu (free components)
    for e in range(12):
        d = np.zeros(JOINT_SLOTS)
        d[(JNA if e < 6 else JNB) + e % 6] = eps
        fd = (rows(Jv=Jv + d) - rows(Jv=Jv - d)) / (2 * eps)
        np.testing.assert_allclose(np.where(free, law_nu[..., e], 0.0), np.where(free, fd, 0.0), atol=1e-7)
    # / (dx, psi) of A and B at the Gauss points
    for side, dW in (("a", law_dA), ("b", law_dB)):
        for e in range(6):
            dv = np.zeros(3)
            dv[e % 3] = eps
            if e < 3:
                key = "Gax" if side == "a" else "Gbx"
                fd = (rows(**{key: args[7 if side == "a" else 9] + dv})
                      - rows(**{key: args[7 if side == "a" else 9] - dv})) / (2 * eps)
            elif side == "a":
                fd = (rows(GaR=rot.exp(dv) @ GaR) - rows(GaR=rot.exp(-dv) @ GaR)) / (2 * eps)
            else:
                continue  # frame B does not enter the law rows
            np.testing.assert_allclose(np.where(free, dW[..., e], 0.0), np.where(free, fd, 0.0), atol=1e-7)
    # universal joint 1: cross / u_phi(tau_i) (with Rrt = Rr exp(u_phi)), moment / Qbar_m, / phi
    j = 1
    Rrt_of = lambda u: Rr[:, None] @ rot.exp(u)  # noqa: E731
    Rrt0 = Rrt_of(UPHI)
    args[3] = Rrt0
    _, _, _, _, uni = _law(*args)
    for e in range(3):
        du = np.zeros(3)
        du[e] = eps
        fd = (rows(UPHI=UPHI + du, Rrt=Rrt_of(UPHI + du)) - rows(UPHI=UPHI - du, Rrt=Rrt_of(UPHI - du))) / (2 * eps)
        np.testing.assert_allclose(uni[j, :, e], fd[j, :, 5], atol=1e-7)
        for slot, col in ((JQ + 3, 3), (JPHI, 6)):
            d = np.zeros(JOINT_SLOTS)
            d[slot + e] = eps
            fd = (rows(Jv=Jv + d) - rows(Jv=Jv - d)) / (2 * eps)
            np.testing.assert_allclose(uni[j, :, col + e], fd[j, :, 4], atol=1e-7)


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
    kernels.scatter_add(b, rows, vals)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_transport_moment_matches_its_equation_and_differences(p):
    """mu solves sum_j D_ij mu_j = r_i x Df_i - sum_j D_ij (r_j x f_j) + h rd_i x f_i; its derivatives
    / f, r, rd (linear or bilinear in them: central differences exact to round-off)."""
    from flexmb.dynamics.time_elements import time_element

    te = time_element(p)
    Dh = np.ascontiguousarray(te.D[:, 1:])
    A = np.ascontiguousarray(np.linalg.inv(Dh))
    rng = np.random.default_rng(p)
    m, h = 3, 0.07
    f, r, rd = (rng.normal(size=(m, p, 3)) for _ in range(3))

    def run(f, r, rd, jac=False):
        mu, Df = np.empty((m, p, 3)), np.empty((m, p, 3))
        sh = (m, p, p, 3, 3) if jac else (0, 0, 0, 3, 3)
        d = [np.empty(sh) for _ in range(3)]
        jkern.transport_moment(A, Dh, h, f, r, rd, mu, Df, *d, jac)
        return mu, d

    mu, (d_f, d_r, d_rd) = run(f, r, rd, True)
    Df = np.einsum("ik,mkd->mid", Dh, f)
    rhs = np.cross(r, Df) - np.einsum("ik,mkd->mid", Dh, np.cross(r, f)) + h * np.cross(rd, f)
    np.testing.assert_allclose(np.einsum("ij,mjd->mid", Dh, mu), rhs, atol=1e-12)
    eps = 1e-6
    for name, x, d in (("f", f, d_f), ("r", r, d_r), ("rd", rd, d_rd)):
        for k in range(p):
            for e in range(3):
                dx = np.zeros_like(x)
                dx[:, k, e] = eps
                kw = {"f": f, "r": r, "rd": rd}
                kw[name] = x + dx
                up = run(**kw)[0]
                kw[name] = x - dx
                dn = run(**kw)[0]
                np.testing.assert_allclose(d[:, :, k, :, e], (up - dn) / (2 * eps), atol=1e-8, err_msg=name)
