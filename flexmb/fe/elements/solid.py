"""Solid finite-element library: reference nodes, shape functions and quadrature per cell type.

Each element is class-level data (meshio cell-type name, reference node coordinates, quadrature
rules, polynomial degree) plus two vectorized methods, ``shape(xi)`` and ``grad(xi)``. Elements are
registered in :data:`ELEMENTS`, keyed by the meshio cell-type name.

Node ordering follows meshio, which follows VTK (meshio permutes Gmsh and Nastran orderings on
read):

- ``tetra`` (4): vertices 0-3.
- ``tetra10``: vertices 0-3, then mid-edge nodes on edges (0,1), (1,2), (0,2), (0,3), (1,3), (2,3).
- ``hexahedron`` (8): bottom face 0-3 counter-clockwise seen from the top face, top face 4-7.
- ``hexahedron20``: vertices 0-7, then mid-edge nodes on (0,1), (1,2), (2,3), (3,0), (4,5), (5,6),
  (6,7), (7,4), (0,4), (1,5), (2,6), (3,7).
- ``wedge`` (6): triangle 0-1-2 at the bottom (counter-clockwise seen from the top, as Gmsh,
  Abaqus C3D6 and Nastran CPENTA do), triangle 3-4-5 on top, node i+3 above node i.
- ``pyramid`` (5): base quadrilateral 0-3 (counter-clockwise seen from the apex), apex 4.

References: VTK file formats (cell types 10, 12, 13, 14, 24, 25); Gmsh manual, "Node ordering";
Zienkiewicz, Taylor and Zhu, *The Finite Element Method*, vol. 1, ch. 6 (shape functions) and
ch. 5.11 (quadrature); Keast (1986) and Walkington (2000) for tetrahedral rules; the pyramid rule is
the collapsed (Duffy) hexahedron rule, with which the pyramid is exactly a hexahedron whose top
face is collapsed into the apex.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "ELEMENTS",
    "Element",
    "Hex8",
    "Hex20",
    "Pyramid5",
    "Quadrature",
    "Tet4",
    "Tet10",
    "Wedge6",
    "get_element",
    "isoparametric_map",
]


@dataclass(frozen=True, eq=False)
class Quadrature:
    """A quadrature rule on a reference cell.

    Attributes
    ----------
    points : ndarray, shape (n_qp, 3)
        Reference coordinates of the points.
    weights : ndarray, shape (n_qp,)
        Weights; they sum to the reference-cell volume.
    degree : int
        Total polynomial degree integrated exactly on the reference cell (for the hexahedron and
        wedge rules: the degree per tensor direction).
    """

    points: NDArray[np.float64]
    weights: NDArray[np.float64]
    degree: int

    def __post_init__(self) -> None:
        assert self.points.ndim == 2 and self.points.shape[1] == 3
        assert self.weights.shape == (self.points.shape[0],)
        assert np.all(self.weights > 0), "only rules with positive weights are used"

    @property
    def n_points(self) -> int:
        return int(self.weights.shape[0])


# --------------------------------------------------------------------------------------------
# quadrature building blocks
# --------------------------------------------------------------------------------------------


def _gauss_tensor(n: int) -> Quadrature:
    """n x n x n Gauss-Legendre rule on [-1, 1]^3 (exact to degree 2n-1 per direction)."""
    x, w = np.polynomial.legendre.leggauss(n)
    pts = np.array(list(product(x, x, x)))[:, ::-1]  # xi fastest
    wts = np.array([a * b * c for a, b, c in product(w, w, w)])
    return Quadrature(np.ascontiguousarray(pts), wts, 2 * n - 1)


def _tet_rule(orbits: list[tuple[str, float, float]], degree: int) -> Quadrature:
    """Symmetric tetrahedron rule from orbits; weights given normalized to sum 1 (scaled by 1/6).

    Orbit kinds (barycentric coordinates): "c" centroid, "a" (a, a, a, 1-3a), "b" (b, b, 1/2-b,
    1/2-b).
    """
    bary: list[tuple[float, float, float, float]] = []
    wts: list[float] = []
    for kind, p, w in orbits:
        if kind == "c":
            pts = [(0.25, 0.25, 0.25, 0.25)]
        elif kind == "a":
            q = 1.0 - 3.0 * p
            pts = [(q, p, p, p), (p, q, p, p), (p, p, q, p), (p, p, p, q)]
        else:  # "b"
            q = 0.5 - p
            pts = [(p, p, q, q), (p, q, p, q), (p, q, q, p), (q, p, p, q), (q, p, q, p), (q, q, p, p)]
        bary += pts
        wts += [w] * len(pts)
    lam = np.array(bary)
    return Quadrature(np.ascontiguousarray(lam[:, 1:]), np.array(wts) / 6.0, degree)


def _triangle_rule_deg2() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """3-point interior rule on the unit triangle, exact to degree 2 (weights sum to 1/2)."""
    pts = np.array([[1 / 6, 1 / 6], [2 / 3, 1 / 6], [1 / 6, 2 / 3]])
    return pts, np.full(3, 1 / 6)


def _triangle_rule_deg4() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """6-point rule on the unit triangle, exact to degree 4 (Dunavant 1985; weights sum to 1/2)."""
    a1, w1 = 0.445948490915965, 0.223381589678011
    a2, w2 = 0.091576213509771, 0.109951743655322
    pts = []
    wts = []
    for a, w in ((a1, w1), (a2, w2)):
        b = 1.0 - 2.0 * a
        pts += [[a, a], [b, a], [a, b]]
        wts += [w] * 3
    return np.array(pts), np.array(wts) / 2.0


def _wedge_rule(n_tri_degree: int, n_line: int) -> Quadrature:
    tri_pts, tri_w = _triangle_rule_deg2() if n_tri_degree == 2 else _triangle_rule_deg4()
    x, w = np.polynomial.legendre.leggauss(n_line)
    pts = np.array([[p[0], p[1], z] for z in x for p in tri_pts])
    wts = np.array([wt * wz for wz in w for wt in tri_w])
    return Quadrature(pts, wts, min(n_tri_degree, 2 * n_line - 1))


def _pyramid_rule(n_base: int, n_height: int) -> Quadrature:
    """Collapsed-hexahedron (Duffy) rule on the reference pyramid.

    (u, v, w) in [-1, 1]^3 maps to xi = u (1 - zeta), eta = v (1 - zeta), zeta = (1 + w) / 2 with
    Jacobian (1 - zeta)^2 / 2. In (u, v, w) the pyramid's shape functions are trilinear, so the rule
    is exact for them as for a hexahedron with a collapsed top face.
    """
    xu, wu = np.polynomial.legendre.leggauss(n_base)
    xw, ww = np.polynomial.legendre.leggauss(n_height)
    pts = []
    wts = []
    for zw, wz in zip(xw, ww):
        zeta = 0.5 * (1.0 + zw)
        for v, wv in zip(xu, wu):
            for u, wuu in zip(xu, wu):
                pts.append([u * (1.0 - zeta), v * (1.0 - zeta), zeta])
                wts.append(wuu * wv * wz * 0.5 * (1.0 - zeta) ** 2)
    # xi^a eta^b zeta^c becomes u^a v^b (1 - zeta)^(a+b+2) zeta^c: degree a+b+c+2 in w
    return Quadrature(np.array(pts), np.array(wts), min(2 * n_base - 1, 2 * n_height - 3))


# --------------------------------------------------------------------------------------------
# elements
# --------------------------------------------------------------------------------------------


class Element:
    """Abstract solid element: class-level data plus ``shape`` and ``grad``.

    Class attributes
    ----------------
    cell_type : str
        meshio cell-type name (the key in :data:`ELEMENTS`).
    n_nodes : int
        Nodes per element, ``k``.
    degree : int
        Polynomial degree of completeness (1 linear, 2 quadratic).
    ref_nodes : ndarray, shape (k, 3)
        Reference coordinates of the nodes, in meshio/VTK order.
    ref_volume : float
        Volume of the reference cell.
    stiffness_rule, mass_rule : Quadrature
        Rules for the stiffness (and stresses, geometric stiffness) and for the consistent mass.
    edges : tuple of (int, int)
        Vertex pairs of the edges, in the order of the mid-edge nodes for quadratic elements.
    incompatible_modes : int
        Number of scalar incompatible (bubble) modes the element can be enhanced with (0: none); each
        is added to the three displacement components and condensed per element
        (:mod:`flexmb.fe.elements.incompatible`).
    center : ndarray, shape (3,)
        Reference coordinates of the centroid (where the Jacobian of Taylor's correction is taken).
    """

    cell_type: ClassVar[str]
    n_nodes: ClassVar[int]
    degree: ClassVar[int]
    ref_nodes: ClassVar[NDArray[np.float64]]
    ref_volume: ClassVar[float]
    stiffness_rule: ClassVar[Quadrature]
    mass_rule: ClassVar[Quadrature]
    edges: ClassVar[tuple[tuple[int, int], ...]] = ()
    incompatible_modes: ClassVar[int] = 0
    center: ClassVar[NDArray[np.float64]] = np.zeros(3)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # validated when defined: data shapes agree and weights integrate the reference volume
        assert cls.ref_nodes.shape == (cls.n_nodes, 3), cls.__name__
        for rule in (cls.stiffness_rule, cls.mass_rule):
            assert abs(rule.weights.sum() - cls.ref_volume) < 1e-12, cls.__name__

    @classmethod
    def shape(cls, xi: NDArray[np.float64]) -> NDArray[np.float64]:
        """Shape functions at reference points.

        Parameters
        ----------
        xi : ndarray, shape (n_pts, 3)

        Returns
        -------
        ndarray, shape (n_pts, k)
        """
        raise NotImplementedError

    @classmethod
    def grad(cls, xi: NDArray[np.float64]) -> NDArray[np.float64]:
        """Gradients of the shape functions with respect to the reference coordinates.

        Parameters
        ----------
        xi : ndarray, shape (n_pts, 3)

        Returns
        -------
        ndarray, shape (n_pts, k, 3)
        """
        raise NotImplementedError

    @classmethod
    def incompatible_grad(cls, xi: NDArray[np.float64]) -> NDArray[np.float64]:
        """Reference gradients of the incompatible modes (none unless ``incompatible_modes > 0``).

        Parameters
        ----------
        xi : ndarray, shape (n_pts, 3)

        Returns
        -------
        ndarray, shape (n_pts, incompatible_modes, 3)
        """
        return np.zeros((np.atleast_2d(xi).shape[0], 0, 3))


class Tet4(Element):
    """Linear tetrahedron (constant strain). Stiffness 1-point rule (exact), mass 4-point (degree 2)."""

    cell_type = "tetra"
    n_nodes = 4
    degree = 1
    ref_nodes = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    ref_volume = 1.0 / 6.0
    stiffness_rule = _tet_rule([("c", 0.0, 1.0)], 1)
    mass_rule = _tet_rule([("a", 0.1381966011250105, 0.25)], 2)
    edges = ((0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3))

    @classmethod
    def shape(cls, xi):
        xi = np.atleast_2d(xi)
        return np.column_stack([1.0 - xi.sum(axis=1), xi[:, 0], xi[:, 1], xi[:, 2]])

    @classmethod
    def grad(cls, xi):
        xi = np.atleast_2d(xi)
        g = np.array([[-1.0, -1, -1], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
        return np.broadcast_to(g, (xi.shape[0], 4, 3)).copy()


class Tet10(Element):
    """Quadratic tetrahedron. Stiffness 4-point rule (degree 2, exact on straight-edged elements);
    consistent mass with the 14-point degree-5 rule of Walkington (positive weights)."""

    cell_type = "tetra10"
    n_nodes = 10
    degree = 2
    edges = Tet4.edges
    ref_nodes = np.vstack([Tet4.ref_nodes, [0.5 * (Tet4.ref_nodes[i] + Tet4.ref_nodes[j]) for i, j in edges]])
    ref_volume = 1.0 / 6.0
    stiffness_rule = Tet4.mass_rule
    mass_rule = _tet_rule(
        [
            ("a", 0.0927352503108912, 0.0734930431163620),
            ("a", 0.3108859192633006, 0.1126879257180159),
            ("b", 0.0455037041256496, 0.0425460207770815),
        ],
        5,
    )

    @classmethod
    def _bary(cls, xi):
        xi = np.atleast_2d(xi)
        return np.column_stack([1.0 - xi.sum(axis=1), xi[:, 0], xi[:, 1], xi[:, 2]])

    @classmethod
    def shape(cls, xi):
        lam = cls._bary(xi)
        corner = lam * (2.0 * lam - 1.0)
        mid = np.column_stack([4.0 * lam[:, i] * lam[:, j] for i, j in cls.edges])
        return np.hstack([corner, mid])

    @classmethod
    def grad(cls, xi):
        lam = cls._bary(xi)
        dlam = Tet4.grad(xi[:1])[0]  # (4, 3): d lambda_i / d xi
        out = np.empty((lam.shape[0], 10, 3))
        out[:, :4, :] = (4.0 * lam - 1.0)[:, :, None] * dlam[None, :, :]
        for m, (i, j) in enumerate(cls.edges):
            out[:, 4 + m, :] = 4.0 * (lam[:, i, None] * dlam[j] + lam[:, j, None] * dlam[i])
        return out


_HEX_CORNERS = np.array(
    [[-1.0, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1], [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]]
)


class Hex8(Element):
    """Trilinear hexahedron. 2x2x2 Gauss for stiffness and mass (full integration).

    Incompatible modes (Wilson, Taylor, Doherty and Ghaboussi 1973): P_m = 1 - xi_m^2, m = 0, 1, 2,
    for each displacement component, which make the element exact in pure bending of a
    parallelepiped; condensed per element (:mod:`flexmb.fe.elements.incompatible`).
    """

    cell_type = "hexahedron"
    n_nodes = 8
    degree = 1
    ref_nodes = _HEX_CORNERS
    ref_volume = 8.0
    stiffness_rule = _gauss_tensor(2)
    mass_rule = _gauss_tensor(2)
    edges = ((0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4), (0, 4), (1, 5), (2, 6), (3, 7))
    incompatible_modes = 3

    @classmethod
    def incompatible_grad(cls, xi):
        xi = np.atleast_2d(xi)
        out = np.zeros((xi.shape[0], 3, 3))
        for m in range(3):
            out[:, m, m] = -2.0 * xi[:, m]
        return out

    @classmethod
    def shape(cls, xi):
        xi = np.atleast_2d(xi)
        f = 1.0 + xi[:, None, :] * _HEX_CORNERS[None, :, :]  # (n, 8, 3)
        return 0.125 * f.prod(axis=2)

    @classmethod
    def grad(cls, xi):
        xi = np.atleast_2d(xi)
        f = 1.0 + xi[:, None, :] * _HEX_CORNERS[None, :, :]
        out = np.empty(f.shape)
        out[:, :, 0] = _HEX_CORNERS[:, 0] * f[:, :, 1] * f[:, :, 2]
        out[:, :, 1] = _HEX_CORNERS[:, 1] * f[:, :, 0] * f[:, :, 2]
        out[:, :, 2] = _HEX_CORNERS[:, 2] * f[:, :, 0] * f[:, :, 1]
        return 0.125 * out


class Hex20(Element):
    """Serendipity quadratic hexahedron. 3x3x3 Gauss for stiffness and mass (full integration; 2x2x2
    reduced integration would admit spurious zero-energy modes)."""

    cell_type = "hexahedron20"
    n_nodes = 20
    degree = 2
    edges = Hex8.edges
    ref_nodes = np.vstack([_HEX_CORNERS, [0.5 * (_HEX_CORNERS[i] + _HEX_CORNERS[j]) for i, j in edges]])
    ref_volume = 8.0
    stiffness_rule = _gauss_tensor(3)
    mass_rule = _gauss_tensor(3)

    @classmethod
    def shape(cls, xi):
        xi = np.atleast_2d(xi)
        r = cls.ref_nodes
        f = xi[:, None, :] * r[None, :, :]  # (n, 20, 3): xi_i * xi
        out = np.empty((xi.shape[0], 20))
        # corners: (1+x)(1+y)(1+z)(x+y+z-2)/8 with x = xi_i xi etc.
        c = (1.0 + f[:, :8]).prod(axis=2) * (f[:, :8].sum(axis=2) - 2.0) / 8.0
        out[:, :8] = c
        # mid-edge nodes: the coordinate that is zero at the node enters as (1 - s^2)
        zero = r[8:] == 0.0  # (12, 3)
        s2 = np.where(zero[None], 1.0 - xi[:, None, :] ** 2, 1.0 + f[:, 8:])
        out[:, 8:] = s2.prod(axis=2) / 4.0
        return out

    @classmethod
    def grad(cls, xi):
        xi = np.atleast_2d(xi)
        r = cls.ref_nodes
        n = xi.shape[0]
        out = np.empty((n, 20, 3))
        rc = r[:8]
        g = 1.0 + xi[:, None, :] * rc[None]  # (n, 8, 3)
        s = (xi[:, None, :] * rc[None]).sum(axis=2) - 2.0  # (n, 8)
        for d in range(3):
            o1, o2 = [e for e in range(3) if e != d]
            other = g[:, :, o1] * g[:, :, o2]
            out[:, :8, d] = rc[:, d] * other * (s + g[:, :, d]) / 8.0
        zero = r[8:] == 0.0
        rm = r[8:]
        fac = np.where(zero[None], 1.0 - xi[:, None, :] ** 2, 1.0 + xi[:, None, :] * rm[None])
        dfac = np.where(zero[None], -2.0 * xi[:, None, :], np.broadcast_to(rm[None], fac.shape))
        for d in range(3):
            o1, o2 = [e for e in range(3) if e != d]
            out[:, 8:, d] = dfac[:, :, d] * fac[:, :, o1] * fac[:, :, o2] / 4.0
        return out


class Wedge6(Element):
    """Linear wedge (pentahedron): linear triangle x linear line. 6-point rule (3-point triangle
    x 2-point Gauss) for stiffness; 6-point triangle (degree 4) x 2-point Gauss for the mass.

    One incompatible mode, P = 1 - zeta^2, per displacement component: bending along the prism axis
    (zeta) becomes exact; the triangle's in-plane interpolation stays linear (constant strain), so a
    wedge bent in the plane of its triangles is not improved."""

    cell_type = "wedge"
    n_nodes = 6
    degree = 1
    ref_nodes = np.array([[0.0, 0, -1], [1, 0, -1], [0, 1, -1], [0, 0, 1], [1, 0, 1], [0, 1, 1]])
    ref_volume = 1.0
    stiffness_rule = _wedge_rule(2, 2)
    mass_rule = _wedge_rule(4, 2)
    edges = ((0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3), (0, 3), (1, 4), (2, 5))
    incompatible_modes = 1
    center = np.array([1.0 / 3.0, 1.0 / 3.0, 0.0])

    @classmethod
    def incompatible_grad(cls, xi):
        xi = np.atleast_2d(xi)
        out = np.zeros((xi.shape[0], 1, 3))
        out[:, 0, 2] = -2.0 * xi[:, 2]
        return out

    @classmethod
    def shape(cls, xi):
        xi = np.atleast_2d(xi)
        tri = np.column_stack([1.0 - xi[:, 0] - xi[:, 1], xi[:, 0], xi[:, 1]])
        lo = 0.5 * (1.0 - xi[:, 2:3])
        hi = 0.5 * (1.0 + xi[:, 2:3])
        return np.hstack([tri * lo, tri * hi])

    @classmethod
    def grad(cls, xi):
        xi = np.atleast_2d(xi)
        n = xi.shape[0]
        tri = np.column_stack([1.0 - xi[:, 0] - xi[:, 1], xi[:, 0], xi[:, 1]])
        dtri = np.array([[-1.0, -1.0], [1.0, 0.0], [0.0, 1.0]])
        lo = 0.5 * (1.0 - xi[:, 2])
        hi = 0.5 * (1.0 + xi[:, 2])
        out = np.empty((n, 6, 3))
        out[:, :3, :2] = lo[:, None, None] * dtri[None]
        out[:, 3:, :2] = hi[:, None, None] * dtri[None]
        out[:, :3, 2] = -0.5 * tri
        out[:, 3:, 2] = 0.5 * tri
        return out


class Pyramid5(Element):
    """Linear pyramid with the rational shape functions of Bedrosian (1992),
    N_i = (1 - zeta + xi_i xi)(1 - zeta + eta_i eta) / (4 (1 - zeta)) for the base and N_4 = zeta,
    on the reference pyramid with base [-1, 1]^2 at zeta = 0 and apex (0, 0, 1). Collapsed-hex rules:
    2x2x2 for stiffness, 3x3x3 for mass."""

    cell_type = "pyramid"
    n_nodes = 5
    degree = 1
    ref_nodes = np.array([[-1.0, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0], [0, 0, 1]])
    ref_volume = 4.0 / 3.0
    stiffness_rule = _pyramid_rule(2, 2)
    mass_rule = _pyramid_rule(3, 3)
    edges = ((0, 1), (1, 2), (2, 3), (3, 0), (0, 4), (1, 4), (2, 4), (3, 4))

    @staticmethod
    def _safe_ratio(num, den):
        # xi*eta/(1-zeta) -> 0 at the apex, where |xi|, |eta| <= 1 - zeta
        return np.divide(num, den, out=np.zeros_like(num), where=den > 1e-14)

    @classmethod
    def shape(cls, xi):
        xi = np.atleast_2d(xi)
        x, y, z = xi[:, 0, None], xi[:, 1, None], xi[:, 2, None]
        bx, by = cls.ref_nodes[:4, 0], cls.ref_nodes[:4, 1]
        t = 1.0 - z
        base = 0.25 * (t + bx * x + by * y + bx * by * cls._safe_ratio(x * y, t))
        return np.hstack([base, z])

    @classmethod
    def grad(cls, xi):
        xi = np.atleast_2d(xi)
        x, y, z = xi[:, 0, None], xi[:, 1, None], xi[:, 2, None]
        bx, by = cls.ref_nodes[:4, 0], cls.ref_nodes[:4, 1]
        t = 1.0 - z
        out = np.zeros((xi.shape[0], 5, 3))
        out[:, :4, 0] = 0.25 * (bx + bx * by * cls._safe_ratio(y, t))
        out[:, :4, 1] = 0.25 * (by + bx * by * cls._safe_ratio(x, t))
        out[:, :4, 2] = 0.25 * (-1.0 + bx * by * cls._safe_ratio(x * y, t * t))
        out[:, 4, 2] = 1.0
        return out


#: meshio cell-type name -> element class
ELEMENTS: dict[str, type[Element]] = {cls.cell_type: cls for cls in (Tet4, Tet10, Hex8, Hex20, Wedge6, Pyramid5)}


def get_element(cell_type: str | type[Element]) -> type[Element]:
    """Element class for a meshio cell-type name (or the class itself).

    Raises
    ------
    KeyError
        Naming the type and the supported ones.
    """
    if isinstance(cell_type, type) and issubclass(cell_type, Element):
        return cell_type
    try:
        return ELEMENTS[cell_type]
    except KeyError:
        raise KeyError(
            f"unsupported solid cell type {cell_type!r}; supported: {', '.join(sorted(ELEMENTS))}"
        ) from None


def isoparametric_map(
    cell_type: str | type[Element], coords: NDArray[np.float64], xi: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Jacobian determinants and physical shape-function gradients of many cells at once.

    Parameters
    ----------
    cell_type : str or Element subclass
    coords : ndarray, shape (n_cells, k, 3)
        Node coordinates of each cell (m).
    xi : ndarray, shape (n_pts, 3)
        Reference points.

    Returns
    -------
    det_j : ndarray, shape (n_cells, n_pts)
        det(dx/dxi) at the points (m^3 per reference volume); negative for inverted cells.
    dndx : ndarray, shape (n_cells, n_pts, k, 3)
        dN_a/dx_j at the points (1/m). Where det_j == 0 the gradients are set to zero.
    """
    elem = get_element(cell_type)
    dndxi = elem.grad(np.asarray(xi, dtype=float))  # (q, k, 3)
    n, k, _ = coords.shape
    q = dndxi.shape[0]
    # J[n, q, i, j] = sum_k x[n, k, i] dN_k/dxi_j(q): one GEMM (einsum would not use BLAS here)
    jac = (coords.transpose(0, 2, 1).reshape(n * 3, k) @ dndxi.transpose(1, 0, 2).reshape(k, q * 3))
    jac = jac.reshape(n, 3, q, 3).transpose(0, 2, 1, 3)
    # inverse via the adjugate: robust and vectorized; zero where singular
    a = jac
    adj = np.empty_like(a)
    adj[..., 0, 0] = a[..., 1, 1] * a[..., 2, 2] - a[..., 1, 2] * a[..., 2, 1]
    adj[..., 0, 1] = a[..., 0, 2] * a[..., 2, 1] - a[..., 0, 1] * a[..., 2, 2]
    adj[..., 0, 2] = a[..., 0, 1] * a[..., 1, 2] - a[..., 0, 2] * a[..., 1, 1]
    adj[..., 1, 0] = a[..., 1, 2] * a[..., 2, 0] - a[..., 1, 0] * a[..., 2, 2]
    adj[..., 1, 1] = a[..., 0, 0] * a[..., 2, 2] - a[..., 0, 2] * a[..., 2, 0]
    adj[..., 1, 2] = a[..., 0, 2] * a[..., 1, 0] - a[..., 0, 0] * a[..., 1, 2]
    adj[..., 2, 0] = a[..., 1, 0] * a[..., 2, 1] - a[..., 1, 1] * a[..., 2, 0]
    adj[..., 2, 1] = a[..., 0, 1] * a[..., 2, 0] - a[..., 0, 0] * a[..., 2, 1]
    adj[..., 2, 2] = a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]
    det_j = a[..., 0, 0] * adj[..., 0, 0] + a[..., 0, 1] * adj[..., 1, 0] + a[..., 0, 2] * adj[..., 2, 0]
    inv_det = np.divide(1.0, det_j, out=np.zeros_like(det_j), where=det_j != 0.0)
    jinv = adj * inv_det[..., None, None]  # dxi_i/dx_j
    dndx = np.matmul(dndxi[None], jinv)  # (n, q, k, 3)
    return det_j, dndx
