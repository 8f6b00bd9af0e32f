"""Low-rank factors of the cubic and quartic strain energy (flexmb.fe.reduction.energy_factors) and their
compiled evaluation (flexmb.dynamics.bodies.modal_laws.elastic): exact without truncation, the
truncation within its stated bound, the restriction to a mode subset (with the condensation of the
dropped stiff modes) equal to the dense restriction, a stale factorization detected; the compiled
force and tangent are the gradient and Hessian of the compiled energy (finite differences)."""
from __future__ import annotations

import numpy as np
import pytest

from flexmb.dynamics.bodies import modal_laws as ml
from flexmb.fe.reduction.energy_factors import dense_from_factors, factor_strain_energy, factors_match


def _tensors(nm, seed=0):
    """Random cubic and quartic coefficients with the symmetries of G and H, scaled like a body's:
    the strain of a mode grows with its frequency, so an entry carries the product of its modes'
    omega (the factorization works in z = omega^2 q)."""
    rng = np.random.default_rng(seed)
    om2 = rng.uniform(1.0, 1e4, nm)
    om = np.sqrt(om2)
    G = rng.standard_normal((nm, nm, nm))
    G = 0.5 * (G + G.transpose(0, 2, 1)) * np.einsum("i,j,k->ijk", om, om, om)
    B = rng.standard_normal((nm, nm, nm, nm))
    H = B + B.transpose(1, 0, 2, 3)
    H = H + H.transpose(0, 1, 3, 2)
    H = (H + H.transpose(2, 3, 0, 1)) * np.einsum("i,j,k,l->ijkl", om, om, om, om)
    return G, H, om2


def _dense_energy(G, H, q):
    return 0.5 * np.einsum("kij,k,i,j->", G, q, q, q) + 0.125 * np.einsum("ijkl,i,j,k,l->", H, q, q, q, q)


@pytest.mark.parametrize("nm", [1, 3, 6])
def test_factors_without_truncation_are_exact(nm):
    G, H, om2 = _tensors(nm)
    f = factor_strain_energy(G, H, om2, tol=0.0)
    assert f.ranks == (nm, nm * (nm + 1) // 2)
    rng = np.random.default_rng(1)
    for _ in range(5):
        q = rng.standard_normal(nm)
        assert f.energy(q) == pytest.approx(_dense_energy(G, H, q), rel=1e-12)
    Gs, H2 = dense_from_factors(f)
    assert np.allclose(H2, H, rtol=0, atol=1e-12 * np.abs(H).max())
    assert factors_match(f, G, H, om2)


def test_truncation_stays_within_its_bound():
    """A quartic form of decaying spectrum in the scaled coordinates z = omega^2 q: the kept rank falls
    with the tolerance and the energy error at |z| = 1 stays below tol l_max / 8."""
    nm = 8
    rng = np.random.default_rng(3)
    om2 = rng.uniform(10.0, 1e3, nm) ** 2
    P = nm * (nm + 1) // 2
    iu, ju = np.triu_indices(nm)
    Q, _ = np.linalg.qr(rng.standard_normal((P, P)))
    lam = 10.0 ** -np.arange(P, dtype=float)  # decaying eigenvalues in the orthonormal pair basis
    w = np.where(iu == ju, 1.0, np.sqrt(2.0))
    Hp = (Q * lam) @ Q.T / w[:, None] / w[None, :]
    idx = np.empty((nm, nm), dtype=np.int64)
    idx[iu, ju] = idx[ju, iu] = np.arange(P)
    Hz = Hp[idx[:, :, None, None], idx[None, None, :, :]]
    H = Hz * np.einsum("i,j,k,l->ijkl", om2, om2, om2, om2)  # energy in q: z = om2 q
    for tol, rank in ((0.0, P), (1e-6, 7), (1e-3, 4)):
        f = factor_strain_energy(None, H, om2, tol=tol, min_terms=1)
        assert f.ranks[1] == rank
        for _ in range(5):
            z = rng.standard_normal(nm)
            z /= np.linalg.norm(z)
            q = z / om2
            err = abs(f.energy(q) - 0.125 * np.einsum("ijkl,i,j,k,l->", H, q, q, q, q))
            assert err <= 0.125 * (tol * lam[0] + 1e-13)


def test_small_bodies_keep_every_term():
    """Up to MIN_TERMS terms are kept whatever the tolerance: a body of up to 7 modes is exact."""
    G, H, om2 = _tensors(7, seed=9)
    f = factor_strain_energy(G, H, om2, tol=0.5)
    assert f.ranks == (7, 28) and np.all(f.dropped == 0)


def test_a_mode_subset_is_factored_from_its_own_energy():
    """``FlexibleBody(modes=...)`` keeps modes whose quartic terms are far below the data's largest
    (X1: modes 2, 7, 11, 16 of 30): the subset's factors reproduce its own G and H (with the
    condensation of the dropped stiff modes) within the truncation relative to its own largest term;
    the data's factors, restricted, did not (the X1 validation warned and factored again)."""
    import flexmb as fm
    from test_flexible_dynamics import beam

    data = beam("craig-bampton", n_modes=6)
    keep = [2, 5, 7]
    b = fm.FlexibleBody("F", data, modes=keep, stiffening="full")
    f, d = b.data.energy_factors, b.data
    assert factors_match(f, d.geometric_stiffness, d.quartic_stiffness, d.omega2)
    rng = np.random.default_rng(4)
    for _ in range(3):
        q = rng.standard_normal(len(keep)) / np.sqrt(d.omega2)
        assert f.energy(q) == pytest.approx(_dense_energy(d.geometric_stiffness, d.quartic_stiffness, q), rel=1e-8)


def test_compiled_force_and_tangent_are_the_derivatives_of_the_energy():
    nm = 5
    G, H, om2 = _tensors(nm, seed=7)
    f = factor_strain_energy(G, H, om2, tol=0.0)
    K = np.diag(om2)[None]
    args = (K, f.cubic_weights[None], f.cubic_u[None], f.cubic_V[None], f.quartic_weights[None], f.quartic_A[None])
    rng = np.random.default_rng(0)
    q = 0.1 * rng.standard_normal((1, 1, nm))
    U, F, Kt = np.empty((1, 1)), np.empty((1, 1, nm)), np.empty((1, 1, nm, nm))
    ml.elastic_batch(q, *args, U, F, Kt)
    assert U[0, 0] == pytest.approx(0.5 * q[0, 0] @ K[0] @ q[0, 0] + _dense_energy(G, H, q[0, 0]), rel=1e-12)
    eps = 1e-6
    for m in range(nm):
        e = np.zeros((1, 1, nm))
        e[..., m] = eps
        Up, Fp, Kp = np.empty((1, 1)), np.empty((1, 1, nm)), np.empty((1, 1, nm, nm))
        Um, Fm, Km = np.empty((1, 1)), np.empty((1, 1, nm)), np.empty((1, 1, nm, nm))
        ml.elastic_batch(q + e, *args, Up, Fp, Kp)
        ml.elastic_batch(q - e, *args, Um, Fm, Km)
        assert (Up - Um)[0, 0] / (2 * eps) == pytest.approx(F[0, 0, m], rel=1e-7, abs=1e-9)
        assert np.allclose((Fp - Fm)[0, 0] / (2 * eps), Kt[0, 0, :, m], rtol=1e-7, atol=1e-7)
    assert np.allclose(Kt[0, 0], Kt[0, 0].T, rtol=0, atol=1e-10 * np.abs(Kt).max())


def test_the_check_follows_the_contents_not_the_objects():
    """factors_match keeps its answer by the arguments' contents (every run of a model checks its bodies'
    factors): equal copies get the same answer; the same arrays changed in place after a passed check
    (a stale factorization: the quartic stiffness scaled by 1.1, a cubic entry moved) fail it, as a fresh
    check does."""
    G, H, om2 = _tensors(4, seed=3)
    f = factor_strain_energy(G, H, om2, tol=0.0)
    assert factors_match(f, G, H, om2)
    assert factors_match(f, G.copy(), H.copy(), om2.copy())
    H *= 1.1
    assert not factors_match(f, G, H, om2)
    H /= 1.1
    G[0, 1, 1] += 0.5 * np.abs(G).max()
    G[1, 0, 1] = G[0, 1, 1]
    assert not factors_match(f, G, H, om2)
