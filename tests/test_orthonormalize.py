"""The end-value re-orthonormalization (marching._orthonormalize): the orthogonal polar factor.

Reference: the polar factor ``U V^T`` of ``A = U S V^T`` computed by Newton-Schulz in extended
precision (np.longdouble, iterated to its round-off), and numpy's SVD, whose own round-off on
3 x 3 matrices is a few 1e-15."""
import numpy as np
import pytest

from flexmb.dynamics.march.marching import _POLAR_FAR, _orthonormalize
from flexmb.rotations import exp as rot_exp


def _rotations(n, seed=3):
    rng = np.random.default_rng(seed)
    return rot_exp(rng.uniform(-3.0, 3.0, (n, 3)))


def _svd_polar(A):
    u, _, vt = np.linalg.svd(A)
    return u @ vt


def _polar_longdouble(A):
    X = np.asarray(A, dtype=np.longdouble)
    eye = np.eye(3, dtype=np.longdouble)
    for _ in range(60):
        X = X + 0.5 * X @ (eye - np.swapaxes(X, -1, -2) @ X)
    return X


@pytest.mark.parametrize("delta", [0.0, 1e-15, 1e-10, 1e-6, 1e-3, 0.03])
def test_polar_factor_of_perturbed_rotations(delta):
    rng = np.random.default_rng(7)
    R = _rotations(400)
    A = R + delta * rng.standard_normal(R.shape)
    X = _orthonormalize(A)
    assert X.shape == A.shape
    ref = _polar_longdouble(A).astype(float)
    assert np.abs(X - ref).max() < 1e-15  # exact to round-off (SVD is ~5e-15 off the same reference)
    assert np.abs(X - _svd_polar(A)).max() < 2e-14
    assert np.abs(np.eye(3) - np.swapaxes(X, -1, -2) @ X).max() < 1e-15
    if delta == 0.0:  # an orthonormal-to-round-off input moves by round-off only
        assert np.abs(X - R).max() < 1e-15


def test_far_from_orthonormal_falls_back_to_svd(monkeypatch):
    rng = np.random.default_rng(11)
    R = _rotations(6)
    A = R + 1e-9 * rng.standard_normal(R.shape)
    A[2] = R[2] + 2.0 * rng.standard_normal((3, 3))  # far: max|I - A^T A| >> _POLAR_FAR
    A[4] = np.diag([3.0, 0.2, 1.0])  # far, polar factor = I
    assert np.abs(np.eye(3) - A[2].T @ A[2]).max() > _POLAR_FAR
    calls = []
    svd = np.linalg.svd

    def counting_svd(M, *args, **kwargs):
        calls.append(np.shape(M))
        return svd(M, *args, **kwargs)

    monkeypatch.setattr(np.linalg, "svd", counting_svd)
    X = _orthonormalize(A)
    assert calls == [(2, 3, 3)]  # only the two far matrices
    monkeypatch.undo()
    assert np.abs(X - _svd_polar(A)).max() < 2e-14
    np.testing.assert_allclose(X[4], np.eye(3), atol=1e-15)
    assert np.abs(X[[0, 1, 3, 5]] - _polar_longdouble(A[[0, 1, 3, 5]]).astype(float)).max() < 1e-15


def test_empty_and_nonfinite():
    assert _orthonormalize(np.zeros((0, 3, 3))).shape == (0, 3, 3)
    A = _rotations(3)
    A[1, 0, 0] = np.nan
    X = _orthonormalize(A)
    assert np.all(np.isfinite(X[[0, 2]])) and np.isnan(X[1]).any()  # NaN stays visible, not hidden
