"""Flexible bodies of the validation cases X1-X4, built from the shipped hexahedron20 meshes.

* :func:`spinup_beam_data` -- the spin-up beams: ``"x1"`` (Kane, Ryan and Banerjee 1987) and ``"x2"``
  (Kim and Haug; Meijaard's case A);
* :func:`slider_crank_rod_data` -- the connecting rod of the flexible slider-crank X3/X4 (Chu and Pan;
  Meijaard), round section meshed with solid elements.

Each returns a :class:`flexmb.fe.reduction.body_data.FlexibleBodyData` made by
:func:`flexmb.fe.reduction.body_data.build_flexible_body`: a Craig-Bampton body whose floating frame is the
reference interface (clamped), with a second interface at the other end. Units: SI (m, kg, s, N, Pa);
frequencies in Hz, ``omega2`` in (rad/s)^2.

Frames (all the same orientation, the mesh axes)
-----------------------------------------------
* x along the beam axis, from the reference end (x = 0) to the other end (x = L);
* y in the plane of the motion: the plane of rotation of the spin-up (the strong bending direction
  of the rectangular beams: their section is ``h`` along y by ``b`` along z) and the plane of the
  slider-crank; transverse (lateral) deflections are along y;
* z normal to that plane: the hub's spin axis (X1, X2), the crank pin axis (X3, X4).

Interfaces are rigid (RBE2-like) end faces with their frame at the face centroid on the axis:
``root`` (reference, at the origin) and ``tip`` (at (L, 0, 0)) of the beams; ``big_end`` (reference,
at the origin) and ``small_end`` (at (L, 0, 0)) of the rod. The meshes also carry the node sets
``mid`` (the section at x = L/2) and ``mid_axis`` (its one node on the axis, at (L/2, 0, 0)) for output.

Mode selection (``basis``)
--------------------------
The meshes are symmetric about y = 0 and z = 0, so the Craig-Bampton basis splits exactly into
classes (:mod:`flexmb.fe.reduction.symmetry`). ``"bending"`` keeps the bending in the x-y plane only: the
in-plane constraint modes of the free-end interface (translation along y and rotation about z: 2
shapes) plus the lowest ``n_modes - 2`` in-plane fixed-interface (clamped-clamped) modes.
``"bending+axial"`` adds ``n_axial`` axial shapes: the axial constraint mode (free-end translation
along x) plus ``n_axial - 1`` axial fixed-interface modes. ``"flapwise"`` keeps the bending in the
x-z plane instead (deflection along the spin axis z; for the thin beams this is their weak axis,
I_y = h b^3 / 12, the mode of the rotating-cantilever case X5), with the free end's z translation and
y rotation as its constraint modes. ``"all"`` keeps the plain Craig-Bampton
basis: 6 constraint modes and ``n_modes`` fixed-interface modes of every kind (out-of-plane bending
and torsion included). With ``tip=False`` (beams) there is no free-end interface and the shapes are
the lowest clamped-free modes of the class. Everything else in the data (inertia invariants, ``G``,
``H``, residual preloads, stresses) is computed for the kept shapes only.

Caching
-------
A build takes seconds; the result is kept in memory and on disk under ``$FLEXMB_CACHE_DIR`` (default
``$XDG_CACHE_HOME/flexmb`` or ``~/.cache/flexmb``), keyed by the mesh file, the arguments, the
flexmb version and the source of :mod:`flexmb.fe` and of this module, so a change of either rebuilds.
``cache=False`` builds afresh and stores nothing; ``cache=<directory>`` uses that directory. The
returned data is shared between calls: do not modify its arrays.
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from flexmb.errors import ModelError

__all__ = ["BeamCase", "CASES", "ROD", "slider_crank_rod_data", "spinup_beam_data"]

logger = logging.getLogger(__name__)

MESH_DIR = Path(__file__).resolve().parent.parent / "data" / "meshes"


@dataclass(frozen=True)
class BeamCase:
    """Data of a validation beam (SI units) and its shipped mesh.

    Attributes
    ----------
    name : str
    mesh : str
        File in ``flexmb/data/meshes`` (Abaqus .inp with material, node sets and element set).
    length : float
        L (m).
    area : float
        A of the nominal section (m^2).
    inertia : float
        Second moment of area for bending in the x-y plane, about z (m^4).
    E, nu, rho : float
        Young's modulus (Pa), Poisson's ratio (-), density (kg/m^3).
    interfaces : tuple of str
        (reference, free end) node sets.
    axial_hint : int
        Fixed-interface modes to compute first when axial modes are kept (they lie above many bending
        and torsion modes); doubled until enough.
    """

    name: str
    mesh: str
    length: float
    area: float
    inertia: float
    E: float
    nu: float
    rho: float
    interfaces: tuple[str, str]
    axial_hint: int

    @property
    def bending_rad_s(self) -> float:
        """sqrt(EI / (rho A L^4)) (rad/s): Euler-Bernoulli frequencies are lambda^2 times this."""
        return math.sqrt(self.E * self.inertia / (self.rho * self.area * self.length ** 4))

    @property
    def axial_rad_s(self) -> float:
        """sqrt(E / rho) / L (rad/s): bar frequencies are (2k - 1) pi / 2 (clamped-free) times this."""
        return math.sqrt(self.E / self.rho) / self.length


#: spin-up beams: X1 (Kane, Ryan and Banerjee) 0.07746 m x 0.005164 m; X2 (Kim and Haug) 0.03676 m x 0.001986 m
CASES = {
    "x1": BeamCase("x1_beam", "x1_beam_hex20.inp", 10.0, 4e-4, 2e-7, 7.0e10, 0.3, 3000.0, ("root", "tip"), 96),
    "x2": BeamCase("x2_beam", "x2_beam_hex20.inp", 8.0, 0.03676 * 0.001986, 0.001986 * 0.03676 ** 3 / 12,
                   6.895e10, 0.3, 2766.67, ("root", "tip"), 128),
}
#: slider-crank connecting rod (X3, X4): d = 6.35 mm solid round steel rod
ROD = BeamCase("x3_rod", "x3_rod_hex20.inp", 0.3048, math.pi * 0.00635 ** 2 / 4, math.pi * 0.00635 ** 4 / 64,
               2.06843e11, 0.3, 7834.56, ("big_end", "small_end"), 32)

_BASES = ("bending", "bending+axial", "flapwise", "all")
#: symmetry classes (parities under the mirrors y -> -y and z -> -z, see flexmb.fe.reduction.symmetry)
_IN_PLANE = ("in-plane bending", {1: -1, 2: +1})
_AXIAL = ("axial", {1: +1, 2: +1})
_FLAPWISE = ("flapwise bending", {1: +1, 2: -1})
_MEMORY: dict[str, object] = {}


def spinup_beam_data(case: str = "x1", n_modes: int = 4, basis: str = "bending", *, n_axial: int = 1,
                     tip: bool = True, cache: bool | str | Path = True):
    """Craig-Bampton body of a spin-up beam, clamped at ``root`` (the floating frame), free ``tip``.

    Parameters
    ----------
    case : {"x1", "x2"}
        VALIDATION.md X1 (L = 10 m, A = 4e-4 m^2, I = 2e-7 m^4, E = 7e10 Pa, rho = 3000 kg/m^3) or
        X2 (L = 8 m, 0.03676 m x 0.001986 m, E = 6.895e10 Pa, rho = 2766.67 kg/m^3); nu = 0.3 (stated,
        the references are beam models).
    n_modes : int
        Bending shapes of the kept class (``basis`` "bending", "bending+axial", "flapwise": >= 2 with
        ``tip``, which contributes two constraint modes); fixed-interface modes for ``basis="all"``.
    basis : {"bending", "bending+axial", "flapwise", "all"}
        See the module docstring.
    n_axial : int
        Axial shapes with ``basis="bending+axial"`` (>= 1). The default 1 is the axial constraint mode
        (linear stretch, Rayleigh frequency sqrt(3) sqrt(E/rho)/L, 836.9 rad/s for X1), which already
        gives the exact static tip stretch under the centrifugal load; each further one adds an axial
        fixed-interface mode (stiff: X1 762 and 2659 rad/s with 2).
    tip : bool
        Keep the ``tip`` interface (default); without it the shapes are clamped-free modes.
    cache : bool, str or Path
        See the module docstring.

    Returns
    -------
    FlexibleBodyData
        Named ``"x1_beam"`` / ``"x2_beam"``; ``settings["catalog"]`` records the arguments.
    """
    key = str(case).lower()
    if key not in CASES:
        raise ModelError(f"spinup_beam_data: case {case!r} unknown; use one of {sorted(CASES)}.")
    return _cached(CASES[key], n_modes, basis, n_axial, tip, cache, "spinup_beam_data")


def slider_crank_rod_data(n_modes: int = 4, basis: str = "bending", *, n_axial: int = 1,
                          cache: bool | str | Path = True):
    """Craig-Bampton body of the X3/X4 connecting rod: ``big_end`` clamped (the floating frame), ``small_end``.

    L = 0.3048 m, round section d = 6.35 mm meshed with hexahedron20 (24 along the length; O-grid
    section of 12 quadrilaterals, 8 on the circle, whose nodes lie on it: the discrete section's area
    is 0.078 % below pi d^2 / 4), E = 2.06843e11 Pa, nu = 0.3, rho = 7834.56 kg/m^3; mass 0.075566 kg
    (nominal rho A L = 0.075625 kg). A solid round section, not a square substitute.

    Parameters
    ----------
    n_modes, basis, n_axial, cache
        As in :func:`spinup_beam_data` (bending means bending in the x-y plane of the mechanism).

    Returns
    -------
    FlexibleBodyData
        Named ``"x3_rod"``.
    """
    return _cached(ROD, n_modes, basis, n_axial, True, cache, "slider_crank_rod_data")


# ---------------------------------------------------------------- building
def _check_args(spec: BeamCase, n_modes, basis, n_axial, where: str) -> None:
    if basis not in _BASES:
        raise ModelError(f"{where}: basis = {basis!r}; use one of {list(_BASES)}.")
    if not isinstance(n_modes, (int, np.integer)) or n_modes < (0 if basis == "all" else 1):
        raise ModelError(f"{where}: n_modes = {n_modes!r} must be an integer >= {0 if basis == 'all' else 1}.")
    if basis == "bending+axial" and (not isinstance(n_axial, (int, np.integer)) or n_axial < 1):
        raise ModelError(f"{where}: n_axial = {n_axial!r} must be an integer >= 1 with basis='bending+axial'.")


def _build(spec: BeamCase, n_modes: int, basis: str, n_axial: int, tip: bool):
    from flexmb.fe.reduction.body_data import build_flexible_body
    from flexmb.fe.mesh.readers import read_mesh
    from flexmb.fe.reduction.symmetry import NotEnoughModes, concatenate_bases, symmetric_sub_basis

    mesh = read_mesh(MESH_DIR / spec.mesh, units="SI")
    interfaces = list(spec.interfaces if tip else spec.interfaces[:1])
    if basis == "all":
        return build_flexible_body(mesh, interfaces=interfaces, n_modes=n_modes, reference=spec.interfaces[0],
                                   name=spec.name)
    if basis == "flapwise":
        classes = [(*_FLAPWISE, n_modes)]
    else:
        classes = [(*_IN_PLANE, n_modes)] + ([(*_AXIAL, n_axial)] if basis == "bending+axial" else [])

    def transform(b, K, M, m):
        subs = [symmetric_sub_basis(b, M, m.points, par, n, label=lab) for lab, par, n in classes]
        return subs[0] if len(subs) == 1 else concatenate_bases(subs)

    # axial fixed-interface modes lie above many bending and torsion ones: start high only if needed
    axial_fixed = basis == "bending+axial" and n_axial > (1 if tip else 0)
    n_fixed = spec.axial_hint if axial_fixed else 8 * n_modes + 8
    while True:
        try:
            return build_flexible_body(mesh, interfaces=interfaces, n_modes=n_fixed, reference=spec.interfaces[0],
                                       name=spec.name, basis_transform=transform)
        except NotEnoughModes as exc:
            if n_fixed >= 3 * mesh.n_nodes // 4:
                raise ModelError(f"{spec.name}: {exc}; the mesh has too few modes of the class.") from exc
            logger.info("%s: %s; retrying with %d fixed-interface modes", spec.name, exc, 2 * n_fixed)
            n_fixed *= 2


def _source_fingerprint() -> str:
    import flexmb

    h = hashlib.sha256(str(getattr(flexmb, "__version__", "")).encode())
    for f in sorted((Path(__file__).parent.parent / "fe").rglob("*.py")) + [Path(__file__)]:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def _cache_dir(cache) -> Path | None:
    if cache is False or cache is None:
        return None
    if cache is not True:
        return Path(cache)
    env = os.environ.get("FLEXMB_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "flexmb"


def _cached(spec: BeamCase, n_modes, basis, n_axial, tip, cache, where: str):
    from flexmb.fe.reduction.body_data import FlexibleBodyData

    _check_args(spec, n_modes, basis, n_axial, where)
    args = dict(body=spec.name, n_modes=int(n_modes), basis=basis,
                n_axial=int(n_axial) if basis == "bending+axial" else 0, tip=bool(tip))
    if cache is False or cache is None:
        return _tagged(_build(spec, int(n_modes), basis, int(n_axial), bool(tip)), args)
    mesh_sha = hashlib.sha256((MESH_DIR / spec.mesh).read_bytes()).hexdigest()
    key = hashlib.sha256(json.dumps([args, mesh_sha, _source_fingerprint()], sort_keys=True).encode()).hexdigest()[:24]
    directory = _cache_dir(cache)
    mem_key = f"{directory}/{key}"
    if mem_key in _MEMORY:
        return _MEMORY[mem_key]
    path = directory / f"{spec.name}_{key}.npz"
    data = None
    if path.exists():
        try:
            data = FlexibleBodyData.load(path)
            logger.info("%s: loaded from the cache %s", where, path)
        except Exception as exc:  # a damaged cache file is rebuilt, never trusted
            logger.warning("%s: cache file %s unreadable (%s); rebuilding", where, path, exc)
    if data is None:
        data = _tagged(_build(spec, int(n_modes), basis, int(n_axial), bool(tip)), args)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=directory, suffix=".npz")
            os.close(fd)
            data.save(tmp)
            os.replace(tmp, path)
        except OSError as exc:
            logger.warning("%s: could not write the cache file %s (%s)", where, path, exc)
    _MEMORY[mem_key] = data
    return data


def _tagged(data, args: dict):
    data.settings["catalog"] = dict(args)
    return data
