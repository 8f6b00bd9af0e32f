"""SO(3) maps: identities, exact Jacobians against finite differences, precision near 0, input parsing."""
from __future__ import annotations

from fractions import Fraction
from math import factorial

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from flexmb import ModelError
from flexmb import rotations as rot
from flexmb.rotations import coeffs as coeffs_module

RNG = np.random.default_rng(20240611)
A_SERIES = np.sqrt(rot.X_SERIES)  # angle where the coefficients switch from series to closed form


def random_unit(n: int) -> np.ndarray:
    u = RNG.normal(size=(n, 3))
    return u / np.linalg.norm(u, axis=-1, keepdims=True)


def special_angles() -> np.ndarray:
    """Angles covering 0, the tiny-angle regime, both sides of the series threshold, and large angles."""
    return np.array([0.0, 1e-12, 1e-9, 1e-6, 1e-4 * (1 - 1e-6), 1e-4, 1e-4 * (1 + 1e-6), 1e-2, 0.3,
                     A_SERIES * (1 - 1e-9), A_SERIES, A_SERIES * (1 + 1e-9), 2.5, 3.0])


def theta_points(max_angle: float = 5.0) -> np.ndarray:
    """Rotation vectors (n, 3): special angles along random axes plus random vectors."""
    special = special_angles()[:, None] * random_unit(special_angles().size)
    rand = random_unit(12) * RNG.uniform(0.0, max_angle, size=(12, 1))
    return np.concatenate([special, rand])


def jac_fd(f, theta: np.ndarray, h: float = 1e-3) -> np.ndarray:
    """Fourth-order central-difference Jacobian of f: (n, 3) -> (n, 3), shape (n, 3, 3)."""
    cols = []
    for j in range(3):
        e = np.zeros(3)
        e[j] = h
        cols.append((-f(theta + 2 * e) + 8 * f(theta + e) - 8 * f(theta - e) + f(theta - 2 * e)) / (12 * h))
    return np.stack(cols, axis=-1)


def assert_jac(J: np.ndarray, J_fd: np.ndarray, rtol: float = 1e-11) -> None:
    scale = np.maximum(np.linalg.norm(J_fd, axis=(-2, -1)), 1.0)
    err = np.linalg.norm(J - J_fd, axis=(-2, -1)) / scale
    assert err.max() < rtol, f"max relative Jacobian error {err.max():.3g} at point {err.argmax()}"


def apply(M: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.einsum("...ij,...j->...i", M, v)


def T_(M: np.ndarray) -> np.ndarray:
    return np.swapaxes(M, -1, -2)


# ---------------------------------------------------------------------------------------------
# basic maps
# ---------------------------------------------------------------------------------------------
def test_skew_axial():
    a, b = RNG.normal(size=(2, 4, 5, 3))
    assert np.allclose(apply(rot.skew(a), b), np.cross(a, b), rtol=0, atol=1e-15)
    assert np.array_equal(rot.axial(rot.skew(a)), a)
    S = RNG.normal(size=(3, 3)) + RNG.normal(size=(3, 3)).T
    assert np.allclose(rot.axial(S + S.T), 0.0)
    with pytest.raises(ValueError, match="shape"):
        rot.skew(np.zeros(4))


def test_exp_orthonormal_and_matches_scipy():
    theta = RNG.normal(size=(6, 7, 3)) * 4.0
    R = rot.exp(theta)
    assert R.shape == (6, 7, 3, 3)
    assert np.abs(T_(R) @ R - np.eye(3)).max() < 1e-14
    assert np.allclose(np.linalg.det(R), 1.0, rtol=0, atol=1e-14)
    assert np.abs(R - Rotation.from_rotvec(theta).as_matrix()).max() < 1e-14
    assert np.array_equal(rot.exp(np.zeros(3)), np.eye(3))


def test_log_round_trip():
    theta = random_unit(200) * RNG.uniform(0, np.pi - 1e-3, size=(200, 1))
    assert np.abs(rot.log(rot.exp(theta)) - theta).max() < 1e-13
    # near zero the matrix only carries absolute information: errors are ~eps in absolute terms
    for a in (0.0, 1e-12, 1e-9, 1e-6, 1e-4):
        t = a * random_unit(5)
        assert np.abs(rot.log(rot.exp(t)) - t).max() < 1e-17 + 1e-15 * a
    # near a half turn
    for eps in (1e-9, 1e-6, 1e-3):
        t = (np.pi - eps) * random_unit(5)
        assert np.abs(rot.log(rot.exp(t)) - t).max() < 1e-8
    t = np.pi * random_unit(5)
    R = rot.exp(t)
    r = rot.log(R)
    assert np.allclose(np.linalg.norm(r, axis=-1), np.pi, rtol=1e-14)
    assert np.abs(rot.exp(r) - R).max() < 1e-14
    assert rot.log(np.zeros((0, 3, 3))).shape == (0, 3)


# ---------------------------------------------------------------------------------------------
# coefficient functions: full precision and continuity across the series threshold
# ---------------------------------------------------------------------------------------------
NAMES = ("alpha", "beta", "gamma", "beta_x", "gamma_x", "delta", "delta_x")


def exact_coefficients(x: float) -> dict[str, float]:
    """Exact rational series (enough terms for x <= 9) rounded once to float."""
    X, K = Fraction(x), 40
    s = {name: Fraction(0) for name in NAMES}
    for k in range(K):
        sk = (-1) ** k
        s["alpha"] += Fraction(sk, factorial(2 * k + 1)) * X**k
        s["beta"] += Fraction(sk, factorial(2 * k + 2)) * X**k
        s["gamma"] += Fraction(sk, factorial(2 * k + 3)) * X**k
        s["beta_x"] += Fraction(-(k + 1) * sk, factorial(2 * k + 4)) * X**k
        s["gamma_x"] += Fraction(-(k + 1) * sk, factorial(2 * k + 5)) * X**k
    B = rot.bernoulli(2 * K + 4)
    d = [(-1) ** j * B[2 * j + 2] / factorial(2 * j + 2) for j in range(K + 1)]
    s["delta"] = sum(d[j] * X**j for j in range(K))
    s["delta_x"] = sum((j + 1) * d[j + 1] * X**j for j in range(K))
    return {k: float(v) for k, v in s.items()}


@pytest.mark.parametrize("x", [0.0, 1e-16, 1e-8, 1e-4, 0.09, 1.0, 3.9, 4.0, 4.1, 6.25, 9.0])
def test_coefficients_full_precision(x):
    ref = exact_coefficients(x)
    got = rot.coefficients(np.array([x]), NAMES)
    for name, val in zip(NAMES, got):
        assert val[0] == pytest.approx(ref[name], rel=1e-14, abs=0), name


def test_series_and_closed_forms_agree_around_threshold():
    x = np.linspace(0.75 * rot.X_SERIES, 1.5 * rot.X_SERIES, 61)
    for name, s, c in zip(NAMES, rot.coefficients_series(x, NAMES), rot.coefficients_closed(x, NAMES)):
        assert np.allclose(s, c, rtol=2e-14, atol=0), name


@pytest.mark.parametrize("a", [0.8 * A_SERIES, A_SERIES, 1.2 * A_SERIES])
def test_continuity_across_threshold(a, monkeypatch):
    """Both branches (series forced / closed form forced) give the same maps near the switch."""
    theta = a * random_unit(4)
    v = RNG.normal(size=(4, 3))
    funcs = [rot.exp, rot.tangent, rot.tangent_inv,
             *(lambda t, f=f: f(t, v) for f in (rot.d_tangent, rot.d_tangent_T,
                                                 rot.d_tangent_inv, rot.d_tangent_inv_T))]
    # the threshold the coefficient functions read (patching the package's re-export would leave both
    # branches on the same side and the comparison empty)
    monkeypatch.setattr(coeffs_module, "X_SERIES", np.inf)
    series = [f(theta) for f in funcs]
    monkeypatch.setattr(coeffs_module, "X_SERIES", 0.0)
    closed = [f(theta) for f in funcs]
    assert any(np.abs(s - c).max() > 0 for s, c in zip(series, closed)), "both runs took the same branch"
    for s, c in zip(series, closed):
        assert np.abs(s - c).max() < 1e-14 * max(1.0, np.abs(c).max())


# ---------------------------------------------------------------------------------------------
# tangent operator identities
# ---------------------------------------------------------------------------------------------
def test_tangent_identities():
    theta = theta_points(6.0)
    T, Ti = rot.tangent(theta), rot.tangent_inv(theta)
    assert np.abs(T @ Ti - np.eye(3)).max() < 1e-13
    assert np.abs(apply(T, theta) - theta).max() < 1e-15 * 6
    assert np.abs(apply(Ti, theta) - theta).max() < 1e-14 * 6
    assert np.array_equal(T_(T), rot.tangent(-theta))
    # exp(theta) T(-theta) = T(theta)
    assert np.abs(rot.exp(theta) @ rot.tangent(-theta) - T).max() < 1e-14
    assert np.array_equal(rot.tangent(np.zeros(3)), np.eye(3))
    assert np.array_equal(rot.tangent_inv(np.zeros(3)), np.eye(3))


@pytest.mark.parametrize("side", ["left", "right"])
def test_tangent_defines_derivative_of_exp(side):
    theta = theta_points(8.0)
    delta = RNG.normal(size=theta.shape)
    h = 1e-3

    def f(e):
        return rot.exp(theta + e * delta)

    dR = (-f(2 * h) + 8 * f(h) - 8 * f(-h) + f(-2 * h)) / (12 * h)
    R = rot.exp(theta)
    if side == "left":   # R = exp(theta) R0: spatial omega = T thetadot
        expected = rot.skew(apply(rot.tangent(theta), delta)) @ R
    else:                # R = R0 exp(phi): body Omega = T^T phidot
        expected = R @ rot.skew(apply(T_(rot.tangent(theta)), delta))
    assert np.abs(dR - expected).max() < 1e-10 * np.abs(delta).max()


# ---------------------------------------------------------------------------------------------
# exact Jacobians against finite differences, at random and tiny angles
# ---------------------------------------------------------------------------------------------
MAPS = {
    "d_tangent": (rot.d_tangent, lambda t: rot.tangent(t)),
    "d_tangent_T": (rot.d_tangent_T, lambda t: T_(rot.tangent(t))),
    "d_tangent_inv": (rot.d_tangent_inv, lambda t: rot.tangent_inv(t)),
    "d_tangent_inv_T": (rot.d_tangent_inv_T, lambda t: T_(rot.tangent_inv(t))),
    "d_exp_apply": (rot.d_exp_apply, lambda t: rot.exp(t)),
    "d_exp_T_apply": (rot.d_exp_T_apply, lambda t: T_(rot.exp(t))),
}


@pytest.mark.parametrize("name", MAPS)
def test_jacobians_against_finite_differences(name):
    d_f, M = MAPS[name]
    theta = theta_points(5.0)
    v = RNG.normal(size=theta.shape)
    J = d_f(theta, v)
    assert J.shape == theta.shape + (3,)
    assert_jac(J, jac_fd(lambda t: apply(M(t), v), theta))


@pytest.mark.parametrize("name", MAPS)
def test_jacobians_broadcast(name):
    d_f, _ = MAPS[name]
    theta = RNG.normal(size=(4, 1, 3))
    v = RNG.normal(size=(5, 3))
    J = d_f(theta, v)
    assert J.shape == (4, 5, 3, 3)
    assert np.array_equal(J[2, 3], d_f(theta[2, 0], v[3]))


@pytest.mark.parametrize("name", ["d_tangent", "d_tangent_inv", "d_exp_apply"])
def test_jacobians_at_zero(name):
    d_f, _ = MAPS[name]
    v = RNG.normal(size=3)
    expected = {"d_tangent": 0.5 * rot.skew(-v), "d_tangent_inv": 0.5 * rot.skew(v),
                "d_exp_apply": -rot.skew(v)}[name]
    assert np.array_equal(d_f(np.zeros(3), v), expected)


def test_d_axial_left_right():
    theta = theta_points(3.0)
    E = rot.exp(RNG.normal(size=theta.shape)) * RNG.uniform(0.5, 2.0)  # any matrix, not only rotations
    E = E + 0.1 * RNG.normal(size=E.shape)
    assert_jac(rot.d_axial_left(E), jac_fd(lambda e: rot.axial(rot.exp(e) @ E), np.zeros(theta.shape)))
    assert_jac(rot.d_axial_right(E), jac_fd(lambda e: rot.axial(E @ rot.exp(e)), np.zeros(theta.shape)))


@pytest.mark.parametrize("increment", ["left", "right"])
@pytest.mark.parametrize("residual", ["axial", "log"])
def test_relative_rotation_jacobians(increment, residual):
    n = 10
    A = rot.exp(random_unit(n) * RNG.uniform(0, 3, size=(n, 1)))
    rel = np.concatenate([np.zeros((1, 3)), 1e-8 * random_unit(1), random_unit(n - 2) * 2.5])
    B = A @ rot.exp(rel)
    r, d_rel = (rot.axial, rot.d_axial_rel) if residual == "axial" else (rot.log, rot.d_log_rel)
    J_a, J_b = d_rel(A, B, increment=increment)

    def bump(M, e):
        return rot.exp(e) @ M if increment == "left" else M @ rot.exp(e)

    zero = np.zeros((n, 3))
    assert_jac(J_a, jac_fd(lambda e: r(T_(bump(A, e)) @ B), zero))
    assert_jac(J_b, jac_fd(lambda e: r(T_(A) @ bump(B, e)), zero))
    with pytest.raises(ValueError, match="increment"):
        d_rel(A, B, increment="spatial")


# ---------------------------------------------------------------------------------------------
# user input: orientation / as_matrix / matrix_to_quat
# ---------------------------------------------------------------------------------------------
EX, EY, EZ = np.eye(3)


def test_orientation_forms_agree():
    n, a = np.array([1.0, 2.0, 2.0]) / 3.0, 0.7
    R = rot.exp(a * n)
    q = np.concatenate([[np.cos(a / 2)], np.sin(a / 2) * n])
    assert np.allclose(rot.orientation(quat=q), R, atol=1e-15)
    assert np.allclose(rot.orientation(quat=-3 * q), R, atol=1e-15)  # sign and norm are irrelevant
    assert np.allclose(rot.orientation(rotvec=a * n), R, atol=1e-15)
    assert np.allclose(rot.orientation(axis=3 * n, angle=a), R, atol=1e-15)
    assert np.allclose(rot.orientation(axis=n, angle=np.degrees(a), degrees=True), R, atol=1e-15)
    assert np.array_equal(rot.orientation(R), R)


def test_euler_and_bryant_conventions():
    p, t, f = 0.3, -1.1, 2.0
    classical = rot.exp(p * EZ) @ rot.exp(t * EX) @ rot.exp(f * EZ)
    assert np.allclose(rot.orientation(euler=(p, t, f)), classical, atol=1e-15)
    assert np.allclose(rot.orientation(euler=np.degrees((p, t, f)), degrees=True), classical, atol=1e-15)
    assert np.allclose(rot.orientation(euler=(f, t, p), seq="zxz"), classical, atol=1e-15)
    bryant = rot.exp(p * EX) @ rot.exp(t * EY) @ rot.exp(f * EZ)
    assert np.allclose(rot.orientation(bryant=(p, t, f)), bryant, atol=1e-15)
    # scipy round trip
    assert np.allclose(Rotation.from_matrix(bryant).as_euler("XYZ"), (p, t, f), atol=1e-14)


def test_as_matrix_specs():
    R = rot.exp(np.array([0.1, -0.4, 0.9]))
    q = rot.matrix_to_quat(R)
    e = Rotation.from_matrix(R).as_euler("ZXZ")
    b = Rotation.from_matrix(R).as_euler("XYZ")
    specs = [R, R.tolist(), ("matrix", R), ("quat", q), ("rotvec", rot.log(R)),
             ("axis_angle", rot.log(R), np.linalg.norm(rot.log(R))), ("euler", "ZXZ", e), ("bryant", b),
             {"euler": np.degrees(e), "degrees": True}, {"quat": q}, Rotation.from_matrix(R)]
    for spec in specs:
        assert np.allclose(rot.as_matrix(spec), R, atol=1e-14), spec


def test_matrix_to_quat_batched_canonical():
    theta = random_unit(24).reshape(2, 12, 3) * RNG.uniform(0, np.pi, size=(2, 12, 1))
    theta[0, 0] = [np.pi, 0.0, 0.0]
    R = rot.exp(theta)
    q = rot.matrix_to_quat(R)
    assert q.shape == (2, 12, 4)
    assert np.all(q[..., 0] >= 0)
    assert np.allclose(np.linalg.norm(q, axis=-1), 1.0)
    assert np.allclose(rot.orientation(quat=q), R, atol=1e-14)
    assert np.allclose(q[..., 0], np.cos(np.linalg.norm(theta, axis=-1) / 2), atol=1e-14)


@pytest.mark.parametrize("kwargs, match", [
    ({"matrix": np.eye(3) * 1.001}, "not orthonormal"),
    ({"matrix": np.eye(3) + 1e-6}, "not orthonormal"),
    ({"matrix": np.diag([1.0, 1.0, -1.0])}, "reflection"),
    ({"matrix": np.eye(2)}, "shape"),
    ({"matrix": np.full((3, 3), np.nan)}, "finite"),
    ({}, "exactly one"),
    ({"matrix": np.eye(3), "quat": (1, 0, 0, 0)}, "exactly one"),
    ({"axis": (0, 0, 1)}, "together"),
    ({"angle": 0.3}, "together"),
    ({"axis": (0, 0, 0), "angle": 0.3}, "nonzero"),
    ({"quat": (0, 0, 0, 0)}, "nonzero"),
    ({"quat": (1, 0, 0)}, "shape"),
    ({"rotvec": "abc"}, "numeric"),
    ({"euler": (0, 0, 0), "seq": "ZZX"}, "seq"),
    ({"euler": (0, 0, 0), "seq": "XY"}, "seq"),
    ({"bryant": (0, 0)}, "shape"),
])
def test_orientation_validation(kwargs, match):
    with pytest.raises(ModelError, match=match):
        rot.orientation(**kwargs)


def test_orientation_error_is_value_error_and_names_fix():
    with pytest.raises(ValueError, match="re-orthonormalise"):
        rot.as_matrix(np.eye(3) * 1.1)
    with pytest.raises(ModelError, match="unrecognised orientation"):
        rot.as_matrix(("quaternion", (1, 0, 0, 0)))
    with pytest.raises(ModelError, match="keywords"):
        rot.as_matrix({"quaternion": (1, 0, 0, 0)})
    # tolerance: 1e-12 perturbation accepted
    R = rot.exp(np.array([0.2, 0.1, 0.3]))
    assert np.array_equal(rot.as_matrix(R + 1e-12), R + 1e-12)


def test_compiled_coefficients_match_numpy_reference():
    """The one-pass compiled coefficients (``rotations.coefficients``) against the NumPy reference
    (``coefficients_numpy``) on both branches, any subset and order of names, batched shapes."""
    rng = np.random.default_rng(7)
    x = np.concatenate([[0.0, 1e-20, 1e-8, 3.999999, 4.0, 4.000001], rng.uniform(0, 30, 200)]).reshape(2, 103)
    for names in (NAMES, NAMES[::-1], ("beta",), ("delta", "alpha")):
        for got, ref in zip(rot.coefficients(x, names), rot.coefficients_numpy(x, names)):
            assert got.shape == x.shape
            np.testing.assert_allclose(got, ref, rtol=1e-14, atol=0)
    (v,) = rot.coefficients(np.float64(0.25), ("gamma",))
    assert v.shape == () and v == pytest.approx(rot.coefficients_numpy(np.array(0.25), ("gamma",))[0], rel=1e-15)
