"""Structured box meshes of every supported cell type (tests, examples, benchmarks)."""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from flexmb.errors import ModelError
from flexmb.fe.elements.solid import ELEMENTS
from flexmb.fe.mesh.femesh import FEMesh, Material

# splits of the unit hexahedron (VTK corner order) into positively oriented sub-cells
# two 5-tetrahedra splits with all face diagonals flipped, used in a checkerboard so faces match
_HEX_TO_TETS_EVEN = np.array([[1, 3, 4, 6], [0, 1, 3, 4], [2, 3, 1, 6], [5, 4, 6, 1], [7, 6, 4, 3]])
_HEX_TO_TETS_ODD = np.array([[0, 2, 5, 7], [1, 0, 2, 5], [3, 0, 2, 7], [4, 0, 5, 7], [6, 2, 5, 7]])
_HEX_TO_WEDGES = np.array([[0, 1, 3, 4, 5, 7], [1, 2, 3, 5, 6, 7]])
_HEX_FACES = np.array([[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]])


def quadratic_from_linear(
    points: NDArray[np.float64], conn: NDArray[np.int64], cell_type: str
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Add straight mid-edge nodes: tetra -> tetra10, hexahedron -> hexahedron20.

    Returns
    -------
    points : ndarray, shape (n_nodes + n_edges, 3)
    conn : ndarray, shape (n_cells, 10 or 20)
    """
    target = {"tetra": "tetra10", "hexahedron": "hexahedron20"}[cell_type]
    edges = np.array(ELEMENTS[target].edges)
    pairs = np.sort(conn[:, edges], axis=2).reshape(-1, 2)  # (n*E, 2)
    uniq, inverse = np.unique(pairs, axis=0, return_inverse=True)
    mid = 0.5 * (points[uniq[:, 0]] + points[uniq[:, 1]])
    new_conn = np.hstack([conn, len(points) + inverse.reshape(len(conn), -1)])
    return np.vstack([points, mid]), new_conn


def _three(name: str, value: ArrayLike, expected: str, *, positive: bool = False,
           integer: bool = False) -> tuple[float, float, float]:
    """``value`` as three finite numbers (``positive``: > 0; ``integer``: whole numbers >= 1)."""
    try:
        a = None if isinstance(value, (str, bytes)) else np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        a = None
    ok = a is not None and a.shape == (3,) and bool(np.all(np.isfinite(a)))
    if ok and positive:
        ok = bool(np.all(a > 0))
    if ok and integer:
        ok = bool(np.all(a == np.round(a)) and np.all(a >= 1))
    if not ok:
        raise ModelError(f"structured_box: {name}={value!r} must be {expected}.")
    return float(a[0]), float(a[1]), float(a[2])


def structured_box(
    lengths: ArrayLike = (1.0, 1.0, 1.0),
    divisions: ArrayLike = (1, 1, 1),
    cell_type: str = "hexahedron",
    *,
    origin: ArrayLike = (0.0, 0.0, 0.0),
    material: Material | None = None,
) -> FEMesh:
    """A structured mesh of the box origin + [0, Lx] x [0, Ly] x [0, Lz].

    Each of the nx*ny*nz hexahedra is kept (``hexahedron``, ``hexahedron20``) or split into five
    tetrahedra (``tetra``, ``tetra10``), two wedges (``wedge``) or six pyramids around its centre
    (``pyramid``). Quadratic types get straight mid-edge nodes. Node sets: ``xmin``, ``xmax``,
    ``ymin``, ``ymax``, ``zmin``, ``zmax`` (the six faces). Element set ``all``.
    """
    lx, ly, lz = _three("lengths", lengths, "three lengths > 0, e.g. (1.0, 0.02, 0.02)", positive=True)
    nx, ny, nz = (int(v) for v in _three("divisions", divisions, "three integers >= 1, e.g. (10, 1, 1)", integer=True))
    _three("origin", origin, "a point (x, y, z)")
    if not isinstance(cell_type, str) or cell_type not in ELEMENTS:
        raise ModelError(f"structured_box: cell_type {cell_type!r} not supported; use one of {sorted(ELEMENTS)}.")
    if material is not None and not isinstance(material, Material):
        raise ModelError(f"structured_box: material={material!r} is not a Material; give Material(E, nu, rho) or None.")
    x, y, z = np.meshgrid(np.linspace(0, lx, nx + 1), np.linspace(0, ly, ny + 1), np.linspace(0, lz, nz + 1), indexing="ij")
    points = np.column_stack([x.ravel(), y.ravel(), z.ravel()]) + np.asarray(origin, float)
    nid = np.arange(points.shape[0]).reshape(nx + 1, ny + 1, nz + 1)
    i, j, k = (a.ravel() for a in np.meshgrid(np.arange(nx), np.arange(ny), np.arange(nz), indexing="ij"))
    hexes = np.column_stack(
        [nid[i, j, k], nid[i + 1, j, k], nid[i + 1, j + 1, k], nid[i, j + 1, k],
         nid[i, j, k + 1], nid[i + 1, j, k + 1], nid[i + 1, j + 1, k + 1], nid[i, j + 1, k + 1]]
    )
    if cell_type in ("hexahedron", "hexahedron20"):
        conn = hexes
    elif cell_type in ("tetra", "tetra10"):
        # alternate the 5-tet split in a checkerboard so that faces of neighbours match
        even = ((i + j + k) % 2 == 0)[:, None, None]
        conn = np.where(even, hexes[:, _HEX_TO_TETS_EVEN], hexes[:, _HEX_TO_TETS_ODD]).reshape(-1, 4)
        d = points[conn[:, 1:]] - points[conn[:, :1]]
        flip = np.einsum("ni,ni->n", np.cross(d[:, 0], d[:, 1]), d[:, 2]) < 0
        conn[flip] = conn[flip][:, [0, 2, 1, 3]]
    elif cell_type == "wedge":
        conn = hexes[:, _HEX_TO_WEDGES].reshape(-1, 6)
    elif cell_type == "pyramid":
        centers = points[hexes].mean(axis=1)
        cid = points.shape[0] + np.arange(len(hexes))
        points = np.vstack([points, centers])
        faces = hexes[:, _HEX_FACES[:, ::-1]]  # (n, 6, 4), right-hand normal towards the centre
        conn = np.concatenate([faces, np.broadcast_to(cid[:, None, None], (len(hexes), 6, 1))], axis=2).reshape(-1, 5)
    else:
        raise ModelError(f"structured_box: cell_type {cell_type!r} not supported; use one of {sorted(ELEMENTS)}.")
    if cell_type in ("tetra10", "hexahedron20"):
        points, conn = quadratic_from_linear(points, conn, cell_type.rstrip("0123456789"))
    lo = np.asarray(origin, float)
    hi = lo + (lx, ly, lz)
    tol = 1e-9 * max(lx, ly, lz)
    node_sets = {}
    for axis, name in enumerate("xyz"):
        node_sets[f"{name}min"] = np.flatnonzero(np.abs(points[:, axis] - lo[axis]) <= tol)
        node_sets[f"{name}max"] = np.flatnonzero(np.abs(points[:, axis] - hi[axis]) <= tol)
    return FEMesh(
        points=points,
        cells={cell_type: conn},
        node_sets=node_sets,
        element_sets={"all": {cell_type: np.arange(len(conn))}},
        materials={"*": material} if material is not None else {},
        units="SI",
    )


def structured_plate(
    lengths: ArrayLike = (1.0, 1.0),
    divisions: ArrayLike = (1, 1),
    cell_type: str = "quad",
    *,
    thickness: float,
    material: Material | None = None,
    origin: ArrayLike = (0.0, 0.0, 0.0),
) -> FEMesh:
    """A structured shell mesh of the rectangle origin + [0, Lx] x [0, Ly] in the plane z = origin_z.

    ``cell_type`` "quad" (MITC4) or "triangle" (each quadrilateral split along its 0-2 diagonal).
    Section ``ShellSection(thickness)`` for every cell (key "*"); element set ``all``; node sets
    ``xmin``, ``xmax``, ``ymin``, ``ymax`` (the edges).
    """
    from flexmb.fe.mesh.sections import ShellSection

    lx, ly, _ = _three("lengths", tuple(lengths) + (1.0,), "two lengths > 0, e.g. (1.0, 0.5)", positive=True)
    nx, ny, _ = (int(v) for v in _three("divisions", tuple(divisions) + (1,), "two integers >= 1", integer=True))
    ox, oy, oz = _three("origin", origin, "a point (x, y, z)")
    if cell_type not in ("quad", "triangle"):
        raise ModelError(f"structured_plate: cell_type {cell_type!r}; use 'quad' or 'triangle'.")
    x, y = np.meshgrid(np.linspace(0, lx, nx + 1), np.linspace(0, ly, ny + 1), indexing="ij")
    points = np.column_stack([x.ravel() + ox, y.ravel() + oy, np.full(x.size, oz)])
    nid = np.arange(len(points)).reshape(nx + 1, ny + 1)
    i, j = (a.ravel() for a in np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij"))
    conn = np.column_stack([nid[i, j], nid[i + 1, j], nid[i + 1, j + 1], nid[i, j + 1]])
    if cell_type == "triangle":
        conn = np.vstack([conn[:, [0, 1, 2]], conn[:, [0, 2, 3]]])
    tol = 1e-9 * max(lx, ly)
    sets = {"xmin": np.flatnonzero(np.abs(points[:, 0] - ox) <= tol),
            "xmax": np.flatnonzero(np.abs(points[:, 0] - ox - lx) <= tol),
            "ymin": np.flatnonzero(np.abs(points[:, 1] - oy) <= tol),
            "ymax": np.flatnonzero(np.abs(points[:, 1] - oy - ly) <= tol)}
    return FEMesh(points=points, cells={}, shells={cell_type: conn}, node_sets=sets,
                  element_sets={"all": {cell_type: np.arange(len(conn))}},
                  sections={"*": ShellSection(thickness)}, materials={"*": material} if material is not None else {},
                  units="SI")


def structured_line(
    start: ArrayLike, end: ArrayLike, divisions: int, section, *, material: Material | None = None,
) -> FEMesh:
    """A straight beam of ``divisions`` 2-node elements from ``start`` to ``end`` (m) with
    ``section`` (a BeamSection, key "*"). Node sets ``start``, ``end``; element set ``all``."""
    a = np.asarray(_three("start", start, "a point (x, y, z)"))
    b = np.asarray(_three("end", end, "a point (x, y, z)"))
    n = int(_three("divisions", (divisions, 1, 1), "an integer >= 1", integer=True)[0])
    t = np.linspace(0.0, 1.0, n + 1)[:, None]
    points = a + t * (b - a)
    conn = np.column_stack([np.arange(n), np.arange(1, n + 1)])
    return FEMesh(points=points, cells={}, beams={"line": conn}, node_sets={"start": [0], "end": [n]},
                  element_sets={"all": {"line": np.arange(n)}}, sections={"*": section},
                  materials={"*": material} if material is not None else {}, units="SI")
