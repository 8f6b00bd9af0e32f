"""Section and lumped-element values of structural (non-solid) FE elements.

- :class:`ShellSection`: thickness, mid-surface offset, shear factor, non-structural mass of shell
  cells (``FEMesh.shells``), assigned to element sets in ``FEMesh.sections``.
- :class:`BeamSection`: area, second moments, torsion constant, shear factors, orientation and
  centroid offset of beam cells (``FEMesh.beams``), from properties or from the common shapes
  (:meth:`BeamSection.rectangle`, ``circle``, ``pipe``, ``box``, ``i_section``; the Abaqus
  ``*BEAM SECTION`` shapes RECT, CIRC, PIPE, BOX, I).
- :class:`PointMass`: a mass with rotary inertia for the vertex cells of an element set (Gmsh
  input; Abaqus ``*MASS``/``*ROTARY INERTIA``).
- :class:`PointMasses`, :class:`Springs`: the lumped elements of a mesh as arrays, resolved per
  element (Abaqus MASS/ROTARYI/SPRING1/SPRING2/SPRINGA, Nastran CONM2/CELAS1/CELAS2/CBUSH).

Local beam axes: ``x`` from node a to node b, ``y`` the component of the orientation vector normal to
``x``, ``z = x × y``. ``iy = ∫ z² dA`` (bending in the x-z plane, about y), ``iz = ∫ y² dA``; Abaqus
names them I11 (about n1 = y) and I22, Nastran I2 and I1. Units: those of the mesh (SI: m, kg).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from flexmb.errors import ModelError
from flexmb.rotations.so3 import skew

__all__ = ["BeamSection", "PointMass", "PointMasses", "ShellSection", "Springs"]


def _positive(owner: str, name: str, value, *, allow_zero: bool = False, allow_inf: bool = False) -> float:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    v = float(value) if ok else float("nan")
    if not ok or np.isnan(v) or (v == math.inf and not allow_inf) or v < 0 or (v == 0 and not allow_zero):
        need = ">= 0" if allow_zero else "> 0"
        raise ModelError(f"{owner}: `{name}` = {value!r} must be a finite number {need} (mesh units).")
    return v


def _vector(owner: str, name: str, value, *, unit: bool = False) -> NDArray[np.float64] | None:
    if value is None:
        return None
    try:
        a = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        a = np.zeros(0)
    if a.shape != (3,) or not np.all(np.isfinite(a)) or (unit and not np.linalg.norm(a) > 0):
        raise ModelError(f"{owner}: `{name}` = {value!r} must be three finite numbers"
                         f"{' not all zero' if unit else ''}, e.g. (0, 0, 1).")
    return a


@dataclass(frozen=True)
class ShellSection:
    """Homogeneous isotropic shell section (the material comes from ``FEMesh.materials``).

    Attributes
    ----------
    thickness : float
        t (m), > 0.
    offset : float
        Position of the mid-surface along the element normal, measured from the surface of the
        nodes (m): 0 for nodes on the mid-surface, ``-t/2`` for nodes on the top surface (Abaqus
        ``OFFSET=SPOS``; Abaqus' OFFSET value f gives ``-f t``; Nastran ZOFFS gives ``+ZOFFS``).
    shear_factor : float
        Transverse shear correction factor k (5/6 for a homogeneous section).
    nsm : float
        Non-structural mass per area (kg/m^2), translational.
    name : str
    """

    thickness: float
    offset: float = 0.0
    shear_factor: float = 5.0 / 6.0
    nsm: float = 0.0
    name: str = "shell"

    def __post_init__(self) -> None:
        owner = f"ShellSection {self.name!r}"
        object.__setattr__(self, "thickness", _positive(owner, "thickness", self.thickness))
        if not isinstance(self.offset, (int, float, np.integer, np.floating)) or not np.isfinite(self.offset):
            raise ModelError(f"{owner}: `offset` = {self.offset!r} must be a finite length (m).")
        object.__setattr__(self, "offset", float(self.offset))
        object.__setattr__(self, "shear_factor", _positive(owner, "shear_factor", self.shear_factor))
        object.__setattr__(self, "nsm", _positive(owner, "nsm", self.nsm, allow_zero=True))


@dataclass(frozen=True)
class BeamSection:
    """Beam cross-section (principal axes; the material comes from ``FEMesh.materials``).

    Attributes
    ----------
    area : float
        A (m^2).
    iy, iz : float
        Second moments about the local y and z axes, ``∫ z² dA`` and ``∫ y² dA`` (m^4).
    j : float
        Saint-Venant torsion constant (m^4).
    shear : (float, float) or None
        Shear factors (ky, kz): shear stiffness ``k G A`` for shear along y and z; ``inf`` for a beam
        without shear deformation (Euler-Bernoulli, Nastran PBAR with blank K1/K2). None: Cowper's
        factors of the shape (which depend on nu) or 5/6 for a general section.
    orientation : (3,) or None
        Approximate direction of the local y axis, global components (Abaqus n1, Nastran v). None:
        any axis normal to the beam, allowed only for sections with ``iy == iz`` and no centroid
        offset.
    centroid : (float, float)
        Position (y, z) of the centroid from the beam's node line, local axes (m): the beam axis
        is offset by it (Abaqus I sections, whose origin is the bottom of the web plus ``l``).
    nsm : float
        Non-structural mass per length (kg/m), translational.
    polar : float or None
        Polar second moment for the rotary inertia in torsion (m^4); None: ``iy + iz``.
    shape : str
        "general", "rect", "circ", "pipe", "box" or "i" (for the shear factors and messages).
    dims : tuple of float
        The dimensions of the shape.
    name : str
    """

    area: float
    iy: float
    iz: float
    j: float
    shear: tuple[float, float] | None = None
    orientation: tuple[float, float, float] | None = None
    centroid: tuple[float, float] = (0.0, 0.0)
    nsm: float = 0.0
    polar: float | None = None
    shape: str = "general"
    dims: tuple[float, ...] = field(default=())
    name: str = "beam"

    def __post_init__(self) -> None:
        owner = f"BeamSection {self.name!r}"
        for attr in ("area", "iy", "iz", "j"):
            object.__setattr__(self, attr, _positive(owner, attr, getattr(self, attr)))
        if self.shear is not None:
            if len(tuple(self.shear)) != 2:
                raise ModelError(f"{owner}: `shear` = {self.shear!r} must be (ky, kz) or None.")
            object.__setattr__(self, "shear", tuple(_positive(owner, "shear", v, allow_inf=True) for v in self.shear))
        o = _vector(owner, "orientation", self.orientation, unit=True)
        object.__setattr__(self, "orientation", None if o is None else tuple(float(v) for v in o))
        cy, cz = (float(v) for v in self.centroid)
        if not (np.isfinite(cy) and np.isfinite(cz)):
            raise ModelError(f"{owner}: `centroid` = {self.centroid!r} must be two finite lengths (y, z).")
        object.__setattr__(self, "centroid", (cy, cz))
        object.__setattr__(self, "nsm", _positive(owner, "nsm", self.nsm, allow_zero=True))
        if self.polar is not None:
            object.__setattr__(self, "polar", _positive(owner, "polar", self.polar))
        object.__setattr__(self, "dims", tuple(float(v) for v in self.dims))

    # ------------------------------------------------------------------ derived values
    def fibres(self, n_round: int = 16) -> NDArray[np.float64]:
        """Extreme fibres of the section, (n_round, 2) local (y, z) from the centroid (m): the corners of
        RECT and BOX and of the I's flanges, ``n_round`` points on the outer circle of CIRC and PIPE
        (the bending stress at the worst of them is within ``1 - cos(pi / n_round)``, 2 % for 16, of
        the true maximum), and for a general section the corners of the rectangle of the same A, Iy
        and Iz (``y = +-sqrt(3 Iz / A)``, ``z = +-sqrt(3 Iy / A)``). Padded by repetition to n_round."""
        d = self.dims
        yc, zc = self.centroid
        if self.shape in ("circ", "pipe"):
            a = 2.0 * np.pi * np.arange(n_round) / n_round
            pts = d[0] * np.stack([np.cos(a), np.sin(a)], axis=1)
        elif self.shape == "rect":
            pts = 0.5 * np.array([[d[0], d[1]], [-d[0], d[1]], [-d[0], -d[1]], [d[0], -d[1]]])
        elif self.shape == "box":  # corners about the box centre (the node line), less the centroid offset
            pts = 0.5 * np.array([[d[0], d[1]], [-d[0], d[1]], [-d[0], -d[1]], [d[0], -d[1]]]) - [yc, zc]
        elif self.shape == "i":  # flange corners, z from the bottom face; the centroid is l + zc above it
            zb = d[0] + zc
            pts = np.array([[d[2] / 2, -zb], [-d[2] / 2, -zb], [d[3] / 2, d[1] - zb], [-d[3] / 2, d[1] - zb]])
            pts[:, 0] -= yc
        else:
            cy, cz = np.sqrt(3.0 * self.iz / self.area), np.sqrt(3.0 * self.iy / self.area)
            pts = np.array([[cy, cz], [-cy, cz], [-cy, -cz], [cy, -cz]])
        return np.resize(np.asarray(pts, dtype=float), (n_round, 2))

    def shear_factors(self, nu: float) -> tuple[float, float]:
        """(ky, kz): given, or Cowper's (1966) factors of the shape for Poisson's ratio nu."""
        if self.shear is not None:
            return self.shear  # type: ignore[return-value]
        if self.shape == "rect":
            k = 10.0 * (1.0 + nu) / (12.0 + 11.0 * nu)
            return k, k
        if self.shape == "circ":
            k = 6.0 * (1.0 + nu) / (7.0 + 6.0 * nu)
            return k, k
        if self.shape == "pipe":
            r, t = self.dims
            m = (r - t) / r
            m2 = m * m
            k = 6.0 * (1.0 + nu) * (1.0 + m2) ** 2 / ((7.0 + 6.0 * nu) * (1.0 + m2) ** 2 + (20.0 + 12.0 * nu) * m2)
            return k, k
        if self.shape in ("box", "i"):
            # shear carried by the walls parallel to it: k A = that wall area (thin-walled estimate)
            ay, az = self._web_areas()
            return ay / self.area, az / self.area
        return 5.0 / 6.0, 5.0 / 6.0

    def _web_areas(self) -> tuple[float, float]:
        if self.shape == "box":
            a, b, t1, t2, t3, t4 = self.dims
            return a * (t2 + t4), b * (t1 + t3)  # y-shear: flanges along y; z-shear: side walls
        _, h, b1, b2, t1, t2, t3 = self.dims
        return (5.0 / 6.0) * (b1 * t1 + b2 * t2), h * t3

    # ------------------------------------------------------------------ common shapes
    @classmethod
    def rectangle(cls, width: float, height: float, **kw) -> BeamSection:
        """Solid rectangle, ``width`` along local y, ``height`` along z (Abaqus RECT a, b).
        J from Roark's series approximation (within 0.5 % for any aspect ratio)."""
        a = _positive("BeamSection.rectangle", "width", width)
        b = _positive("BeamSection.rectangle", "height", height)
        long, short = max(a, b), min(a, b)
        j = long * short**3 * (1.0 / 3.0 - 0.21 * short / long * (1.0 - short**4 / (12.0 * long**4)))
        return cls(a * b, a * b**3 / 12.0, a**3 * b / 12.0, j, shape="rect", dims=(a, b), **kw)

    @classmethod
    def circle(cls, radius: float, **kw) -> BeamSection:
        """Solid circle (Abaqus CIRC r)."""
        r = _positive("BeamSection.circle", "radius", radius)
        i = math.pi * r**4 / 4.0
        return cls(math.pi * r * r, i, i, 2.0 * i, shape="circ", dims=(r,), **kw)

    @classmethod
    def pipe(cls, radius: float, wall: float, **kw) -> BeamSection:
        """Circular tube of outer radius ``radius`` and wall thickness ``wall`` (Abaqus PIPE r, t)."""
        r = _positive("BeamSection.pipe", "radius", radius)
        t = _positive("BeamSection.pipe", "wall", wall)
        if t > r:
            raise ModelError(f"BeamSection.pipe: wall = {t} is larger than the radius {r}.")
        ri = r - t
        i = math.pi * (r**4 - ri**4) / 4.0
        return cls(math.pi * (r * r - ri * ri), i, i, 2.0 * i, shape="pipe", dims=(r, t), **kw)

    @classmethod
    def box(cls, width: float, height: float, t1: float, t2: float, t3: float, t4: float, **kw) -> BeamSection:
        """Rectangular box (Abaqus BOX a, b, t1..t4): outer ``width`` along y, ``height`` along z,
        wall thicknesses t1 (side wall at +y), t2 (top, +z), t3 (side at -y), t4 (bottom). Centroid,
        second moments from the four walls (top and bottom full width); J by Bredt-Batho on the wall
        mid-lines; the centroid offset from the box centre is kept."""
        a = _positive("BeamSection.box", "width", width)
        b = _positive("BeamSection.box", "height", height)
        ts = [_positive("BeamSection.box", n, v) for n, v in (("t1", t1), ("t2", t2), ("t3", t3), ("t4", t4))]
        w1, w2, w3, w4 = ts
        if w1 + w3 >= a or w2 + w4 >= b:
            raise ModelError(f"BeamSection.box: walls ({w1}, {w2}, {w3}, {w4}) fill the {a} x {b} box.")
        hin = b - w2 - w4
        # rectangles (area, yc, zc, width_y, height_z), origin at the box centre
        rects = [(a * w2, 0.0, b / 2 - w2 / 2, a, w2), (a * w4, 0.0, -b / 2 + w4 / 2, a, w4),
                 (w1 * hin, a / 2 - w1 / 2, (w4 - w2) / 2, w1, hin), (w3 * hin, -a / 2 + w3 / 2, (w4 - w2) / 2, w3, hin)]
        area, yc, zc, iy, iz = _composite(rects)
        am = (a - (w1 + w3) / 2) * (b - (w2 + w4) / 2)  # area enclosed by the wall mid-lines
        perim = (a - (w1 + w3) / 2) * (1 / w2 + 1 / w4) + (b - (w2 + w4) / 2) * (1 / w1 + 1 / w3)
        return cls(area, iy, iz, 4.0 * am * am / perim, centroid=(yc, zc), shape="box", dims=(a, b, w1, w2, w3, w4), **kw)

    @classmethod
    def i_section(cls, l: float, h: float, b1: float, b2: float, t1: float, t2: float, t3: float, **kw) -> BeamSection:
        """I section (Abaqus I l, h, b1, b2, t1, t2, t3): height ``h`` along z, bottom flange b1 x t1,
        top flange b2 x t2, web thickness t3; the nodes lie ``l`` above the bottom face (the beam
        axis is offset to the centroid). J of thin open walls, ``sum b t^3 / 3``."""
        vals = [_positive("BeamSection.i_section", n, v) for n, v in
                (("h", h), ("b1", b1), ("b2", b2), ("t1", t1), ("t2", t2), ("t3", t3))]
        h_, b1_, b2_, t1_, t2_, t3_ = vals
        if t1_ + t2_ >= h_:
            raise ModelError(f"BeamSection.i_section: flanges t1 + t2 = {t1_ + t2_} fill the height {h_}.")
        hw = h_ - t1_ - t2_
        rects = [(b1_ * t1_, 0.0, t1_ / 2, b1_, t1_), (b2_ * t2_, 0.0, h_ - t2_ / 2, b2_, t2_),
                 (t3_ * hw, 0.0, t1_ + hw / 2, t3_, hw)]  # z from the bottom face
        area, yc, zc, iy, iz = _composite(rects)
        j = (b1_ * t1_**3 + b2_ * t2_**3 + hw * t3_**3) / 3.0
        return cls(area, iy, iz, j, centroid=(yc, zc - float(l)), shape="i",
                   dims=(float(l), h_, b1_, b2_, t1_, t2_, t3_), **kw)


def _composite(rects) -> tuple[float, float, float, float, float]:
    """Area, centroid (y, z) and centroidal second moments (iy = ∫z², iz = ∫y²) of rectangles."""
    a = np.array([r[0] for r in rects])
    y = np.array([r[1] for r in rects])
    z = np.array([r[2] for r in rects])
    wy = np.array([r[3] for r in rects])
    hz = np.array([r[4] for r in rects])
    area = a.sum()
    yc, zc = (a * y).sum() / area, (a * z).sum() / area
    iy = (wy * hz**3 / 12.0 + a * (z - zc) ** 2).sum()
    iz = (hz * wy**3 / 12.0 + a * (y - yc) ** 2).sum()
    return float(area), float(yc), float(zc), float(iy), float(iz)


@dataclass(frozen=True)
class PointMass:
    """A lumped mass at each node of the vertex cells of an element set.

    Attributes
    ----------
    mass : float
        m (kg), >= 0.
    inertia : (3, 3) or None
        Rotary inertia about the node, global axes (kg m^2); needs rotational DOFs at the node.
    name : str
    """

    mass: float
    inertia: tuple | None = None
    name: str = "point mass"

    def __post_init__(self) -> None:
        owner = f"PointMass {self.name!r}"
        object.__setattr__(self, "mass", _positive(owner, "mass", self.mass, allow_zero=True))
        if self.inertia is not None:
            j = np.asarray(self.inertia, dtype=float)
            if j.shape != (3, 3) or not np.all(np.isfinite(j)) or np.abs(j - j.T).max() > 1e-12 * max(np.abs(j).max(), 1e-300):
                raise ModelError(f"{owner}: `inertia` must be a symmetric 3 x 3 matrix (kg m^2).")
            object.__setattr__(self, "inertia", tuple(map(tuple, j)))


@dataclass(frozen=True, eq=False)
class PointMasses:
    """Lumped masses at nodes, one 6 x 6 rigid-body mass matrix each.

    Attributes
    ----------
    nodes : ndarray of int, shape (p,)
        0-based node indices.
    matrix : ndarray, shape (p, 6, 6)
        Mass matrix on the node's (ux, uy, uz, rx, ry, rz), global axes: for a mass m at offset r
        from the node with inertia J about its centre, ``[[m I, -m skew(r)], [m skew(r), J - m skew(r)^2]]``.
    ids : ndarray of int, shape (p,)
        Element ids in the file (for messages).
    """

    nodes: NDArray[np.int64]
    matrix: NDArray[np.float64]
    ids: NDArray[np.int64]

    def __post_init__(self) -> None:
        nodes = np.asarray(self.nodes, dtype=np.int64).reshape(-1)
        mat = np.asarray(self.matrix, dtype=float).reshape(len(nodes), 6, 6)
        ids = np.asarray(self.ids, dtype=np.int64).reshape(-1)
        if ids.shape != nodes.shape:
            raise ModelError("PointMasses: `ids` and `nodes` must have the same length.")
        if not np.all(np.isfinite(mat)) or np.abs(mat - mat.transpose(0, 2, 1)).max(initial=0.0) > 1e-9 * max(
                np.abs(mat).max(initial=0.0), 1e-300):
            raise ModelError("PointMasses: every mass matrix must be finite and symmetric.")
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "matrix", mat)
        object.__setattr__(self, "ids", ids)

    @classmethod
    def from_values(cls, nodes: ArrayLike, mass: ArrayLike, inertia: ArrayLike | None = None,
                    offset: ArrayLike | None = None, ids: ArrayLike | None = None) -> PointMasses:
        """Masses ``mass`` (p,) (kg) at ``nodes`` (p,), with optional inertia (p, 3, 3) about their
        centres (kg m^2) and offsets (p, 3) of their centres from the nodes (m)."""
        nodes = np.asarray(nodes, dtype=np.int64).reshape(-1)
        p = len(nodes)
        m = np.broadcast_to(np.asarray(mass, dtype=float), (p,))
        if np.any(~np.isfinite(m)) or np.any(m < 0):
            raise ModelError(f"PointMasses: masses must be finite and >= 0, got {m[~(m >= 0)][:3].tolist()}.")
        j = np.zeros((p, 3, 3)) if inertia is None else np.broadcast_to(np.asarray(inertia, dtype=float), (p, 3, 3))
        r = np.zeros((p, 3)) if offset is None else np.broadcast_to(np.asarray(offset, dtype=float), (p, 3))
        s = skew(r)
        mat = np.zeros((p, 6, 6))
        mat[:, :3, :3] = m[:, None, None] * np.eye(3)
        mat[:, :3, 3:] = -m[:, None, None] * s
        mat[:, 3:, :3] = m[:, None, None] * s
        mat[:, 3:, 3:] = j - m[:, None, None] * np.matmul(s, s)
        return cls(nodes, mat, np.arange(1, p + 1) if ids is None else ids)

    def __len__(self) -> int:
        return int(self.nodes.size)

    @property
    def total_mass(self) -> float:
        return float(self.matrix[:, 0, 0].sum())

    def rotational(self) -> NDArray[np.bool_]:
        """(p,) whether a mass has rotary inertia or an offset (terms on rotational DOFs)."""
        return np.abs(self.matrix[:, :, 3:]).max(axis=(1, 2)) > 0.0


@dataclass(frozen=True, eq=False)
class Springs:
    """Linear springs, each on one combination of the DOFs of one or two nodes.

    A spring's stretch is ``s = c_a . d_a + c_b . d_b`` with ``d`` a node's (ux, uy, uz, rx, ry, rz);
    its energy is ``k s^2 / 2``. A grounded spring has ``nodes[:, 1] = -1``. Abaqus SPRING2 on DOF i
    of a and j of b: ``c_a = e_i, c_b = -e_j``; a CBUSH in rotated axes is six springs.

    Attributes
    ----------
    nodes : ndarray of int, shape (s, 2)
    coef : ndarray, shape (s, 2, 6)
    stiffness : ndarray, shape (s,)
        k (N/m for translations, N m/rad for rotations), >= 0.
    ids : ndarray of int, shape (s,)
    """

    nodes: NDArray[np.int64]
    coef: NDArray[np.float64]
    stiffness: NDArray[np.float64]
    ids: NDArray[np.int64]

    def __post_init__(self) -> None:
        nodes = np.asarray(self.nodes, dtype=np.int64).reshape(-1, 2)
        coef = np.asarray(self.coef, dtype=float).reshape(len(nodes), 2, 6)
        k = np.asarray(self.stiffness, dtype=float).reshape(-1)
        ids = np.asarray(self.ids, dtype=np.int64).reshape(-1)
        if not (len(k) == len(ids) == len(nodes)):
            raise ModelError("Springs: `nodes`, `coef`, `stiffness` and `ids` must have the same length.")
        if np.any(~np.isfinite(k)) or np.any(k < 0) or not np.all(np.isfinite(coef)):
            raise ModelError("Springs: stiffnesses must be finite and >= 0 and coefficients finite.")
        if np.any(nodes[:, 0] < 0):
            raise ModelError("Springs: the first node of every spring must be a node (only the second may be -1, ground).")
        coef = coef.copy()
        coef[nodes[:, 1] < 0, 1] = 0.0
        for name, value in (("nodes", nodes), ("coef", coef), ("stiffness", k), ("ids", ids)):
            object.__setattr__(self, name, value)

    def __len__(self) -> int:
        return int(self.stiffness.size)

    def rotational(self) -> NDArray[np.bool_]:
        """(s, 2): whether a spring acts on the rotations of its first / second node."""
        return np.abs(self.coef[:, :, 3:]).max(axis=2) > 0.0
