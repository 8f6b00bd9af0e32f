"""Element library: interpolation properties, gradients, quadrature exactness, node ordering."""
from __future__ import annotations

from itertools import product
from math import factorial

import numpy as np
import pytest

from flexmb.fe.elements.solid import ELEMENTS, Element, Hex20, Tet10, get_element, isoparametric_map

TYPES = sorted(ELEMENTS)


def _interior_points(elem: type[Element], n: int = 7, seed: int = 0) -> np.ndarray:
    """Random points inside the reference cell (convex combinations of its vertices)."""
    rng = np.random.default_rng(seed)
    vertices = {4: 4, 10: 4, 8: 8, 20: 8, 6: 6, 5: 5}[elem.n_nodes]
    w = rng.dirichlet(np.ones(vertices), size=n)
    return w @ elem.ref_nodes[:vertices]


@pytest.mark.parametrize("cell_type", TYPES)
def test_kronecker_delta_and_partition_of_unity(cell_type):
    elem = ELEMENTS[cell_type]
    assert np.allclose(elem.shape(elem.ref_nodes), np.eye(elem.n_nodes), atol=1e-14)
    xi = _interior_points(elem)
    assert np.allclose(elem.shape(xi).sum(axis=1), 1.0, atol=1e-14)
    assert np.allclose(elem.grad(xi).sum(axis=1), 0.0, atol=1e-13)


@pytest.mark.parametrize("cell_type", TYPES)
def test_gradients_match_finite_differences(cell_type):
    elem = ELEMENTS[cell_type]
    xi = _interior_points(elem, seed=1)
    h = 1e-6
    fd = np.stack(
        [(elem.shape(xi + h * e) - elem.shape(xi - h * e)) / (2 * h) for e in np.eye(3)], axis=-1
    )
    assert np.abs(elem.grad(xi) - fd).max() < 1e-8


@pytest.mark.parametrize("cell_type", TYPES)
def test_polynomial_reproduction(cell_type):
    """Linear fields for all types; every complete quadratic for the quadratic types."""
    elem = ELEMENTS[cell_type]
    xi = _interior_points(elem, seed=2)
    rng = np.random.default_rng(3)
    c = rng.normal(size=10)

    def field(p):
        x, y, z = p.T
        val = c[0] + c[1] * x + c[2] * y + c[3] * z
        if elem.degree == 2:
            val = val + c[4] * x * x + c[5] * y * y + c[6] * z * z + c[7] * x * y + c[8] * y * z + c[9] * x * z
        return val

    assert np.allclose(elem.shape(xi) @ field(elem.ref_nodes), field(xi), atol=1e-12)


def _exact_monomial(cell_type: str, a: int, b: int, c: int) -> float:
    if cell_type.startswith("tetra"):
        return factorial(a) * factorial(b) * factorial(c) / factorial(a + b + c + 3)
    line = lambda p: 0.0 if p % 2 else 2.0 / (p + 1)  # noqa: E731
    if cell_type.startswith("hexahedron"):
        return line(a) * line(b) * line(c)
    if cell_type == "wedge":
        return factorial(a) * factorial(b) / factorial(a + b + 2) * line(c)
    # pyramid: int over zeta of (1-zeta)^(a+b+2) zeta^c int u^a int v^b (Beta function)
    beta = factorial(a + b + 2) * factorial(c) / factorial(a + b + c + 3)
    return line(a) * line(b) * beta


@pytest.mark.parametrize("cell_type", TYPES)
@pytest.mark.parametrize("which", ["stiffness_rule", "mass_rule"])
def test_quadrature_exact_to_declared_degree(cell_type, which):
    elem = ELEMENTS[cell_type]
    rule = getattr(elem, which)
    tensor = cell_type.startswith("hexahedron")
    for a, b, c in product(range(rule.degree + 1), repeat=3):
        if (max(a, b, c) if tensor else a + b + c) > rule.degree:
            continue
        x, y, z = rule.points.T
        approx = rule.weights @ (x**a * y**b * z**c)
        assert approx == pytest.approx(_exact_monomial(cell_type, a, b, c), abs=1e-13), (a, b, c)


def test_mass_rules_integrate_shape_products_exactly():
    """Consistent mass needs N_a N_b exact on the reference cell: compare with a finer rule."""
    from flexmb.fe.elements.solid import _gauss_tensor, _pyramid_rule

    fine = {
        "tetra": Tet10.mass_rule,
        "tetra10": Tet10.mass_rule,  # degree 5 >= 4
        "hexahedron": _gauss_tensor(4),
        "hexahedron20": _gauss_tensor(5),
        "pyramid": _pyramid_rule(5, 6),
    }
    assert Tet10.mass_rule.degree >= 4
    for t, ref_rule in fine.items():
        elem = ELEMENTS[t]
        n_rule = elem.shape(elem.mass_rule.points)
        n_ref = elem.shape(ref_rule.points)
        m = n_rule.T @ (elem.mass_rule.weights[:, None] * n_rule)
        m_ref = n_ref.T @ (ref_rule.weights[:, None] * n_ref)
        assert np.allclose(m, m_ref, atol=1e-14), t


@pytest.mark.parametrize("cell_type", ["tetra10", "hexahedron20"])
def test_quadratic_node_ordering_is_vtk(cell_type):
    """Mid-edge node m sits halfway along edge ``edges[m]``, in VTK/meshio order."""
    vtk_edges = {
        "tetra10": [(0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3)],
        "hexahedron20": [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4), (0, 4), (1, 5), (2, 6), (3, 7)],
    }[cell_type]
    elem = ELEMENTS[cell_type]
    n_corner = elem.n_nodes - len(vtk_edges)
    for m, (i, j) in enumerate(vtk_edges):
        assert np.allclose(elem.ref_nodes[n_corner + m], 0.5 * (elem.ref_nodes[i] + elem.ref_nodes[j]))


def test_hex20_serendipity_corner_function():
    # N_0 at the reference centre is -1/4 for serendipity hex20 (a classical value)
    assert Hex20.shape(np.zeros((1, 3)))[0, 0] == pytest.approx(-0.25)


def test_isoparametric_map_of_scaled_cell():
    elem = get_element("hexahedron")
    coords = (elem.ref_nodes + 1.0)[None] * np.array([1.0, 2.0, 3.0])  # box 2 x 4 x 6
    det, dndx = isoparametric_map(elem, coords, elem.stiffness_rule.points)
    assert np.allclose(det, 6.0)  # volume 48 / reference volume 8
    x = coords[0]
    # gradient of the coordinate field is the identity
    assert np.allclose(np.einsum("ka,nqkb->nqab", x, dndx), np.eye(3))


def test_unknown_type_names_supported_ones():
    with pytest.raises(KeyError, match="hexahedron20"):
        get_element("hexahedron27")
