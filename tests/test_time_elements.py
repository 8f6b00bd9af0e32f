"""Time elements: quadrature, differentiation and end-value matrices, and the weak-form equivalence."""
import numpy as np
import pytest

from flexmb.dynamics.time_elements import TIME_ELEMENTS, time_element


@pytest.mark.parametrize("p", [1, 2, 3])
def test_gauss_rule_exact_to_degree_2p_minus_1(p):
    te = TIME_ELEMENTS[p]
    assert te.b.sum() == pytest.approx(1.0, abs=1e-15)
    for k in range(2 * p):
        assert te.b @ te.c**k == pytest.approx(1.0 / (k + 1), abs=1e-14)
    # and not of degree 2p (otherwise the rule would be mislabeled)
    assert abs(te.b @ te.c ** (2 * p) - 1.0 / (2 * p + 1)) > 1e-6


@pytest.mark.parametrize("p", [1, 2, 3])
def test_derivative_end_and_constraint_matrices_exact_on_degree_p(p):
    te = TIME_ELEMENTS[p]
    nodes = np.concatenate([[0.0], te.c])
    for k in range(p + 1):
        vals = nodes**k
        assert te.D @ vals == pytest.approx(k * te.c ** max(k - 1, 0) if k else np.zeros(p), abs=1e-12)
        assert te.end @ vals == pytest.approx(1.0, abs=1e-12)
        assert te.E @ vals == pytest.approx(te.tau_c**k, abs=1e-12)
    assert te.tau_c[-1] == 1.0
    assert te.order == 2 * p


def test_p1_is_the_midpoint_rule():
    te = TIME_ELEMENTS[1]
    assert te.c == pytest.approx([0.5])
    assert te.D[0] == pytest.approx([-2.0, 2.0])   # (Y - y1) / (h/2)
    assert te.end == pytest.approx([-1.0, 2.0])   # y2 = 2 Y - y1


@pytest.mark.parametrize("p", [1, 2, 3])
def test_weak_form_equivalent_to_collocation(p):
    """For u' = f(u) with nonlinear f, the Gauss-collocation solution satisfies the weak form
    -int psi' y + [psi y] = int psi f for every test function psi of degree p (quadrature exact)."""
    from scipy.optimize import fsolve

    te = TIME_ELEMENTS[p]
    f = lambda y: -y**3 + np.sin(y)
    h, y1 = 0.3, 0.8
    Y = fsolve(lambda Y: te.D[:, 0] * y1 + te.D[:, 1:] @ Y - h * f(Y), np.full(p, y1), xtol=1e-15)
    y2 = te.end[0] * y1 + te.end[1:] @ Y
    A, B, W = te.weak_form_matrices()
    lhs = -A @ Y - B[:, 0] * y1 + B[:, 1] * y2
    assert lhs == pytest.approx(h * W @ f(Y), abs=1e-13)


def test_unknown_order_is_refused():
    with pytest.raises(ValueError, match="use 1, 2, 3"):
        time_element(4)
