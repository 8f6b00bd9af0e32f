"""The :class:`FlexibleBody` model element: a modal (floating-frame) body built from a
:class:`~flexmb.fe.reduction.body_data.FlexibleBodyData`, evaluated by
:class:`flexmb.dynamics.bodies.modal.FlexibleBodies`.

Frames and attachments
----------------------
* The body's *frame* (``position``, ``orientation``, ``velocity``, ``angular_velocity``, and the
  output of ``Solution.body(name)``) is the floating frame of the data: the reference interface
  for Craig-Bampton data (it does not deform), the mesh frame (mean axes) for free-free data.
* Joints and force elements attach to an interface with ``(body_name, interface_name)`` wherever a
  body name is accepted, e.g. ``Revolute("pin", "crank", ("rod", "big_end"), point=..., axis=...)``
  or ``SpringDamper("s", ("rod", "tip"), "ground", ...)``: the attachment point is the interface
  frame's point and it moves and turns with the interface (``x + R (c + Phi_t q)``,
  ``R exp(Phi_r q) A``).  Joint frames given by ``point``/``axis`` refer to the undeformed body.
  A joint on a flexible body given by its plain name, or an unknown interface, is a ModelError
  listing the interfaces.  A plain name in a force element is a point of the floating frame.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from flexmb.model.checks import index_list as _index_list
from flexmb.model.checks import real_array as _real_array
from flexmb.model.checks import vec3 as _vec3
from flexmb.errors import ModelError
from flexmb.model.frames import GROUND, Frame, rotation_input

logger = logging.getLogger(__name__)

STIFFENING = ("full", "preload", "none")


def _warn_locked_relaxation(owner: str, data) -> None:
    """Log a WARNING when ``stiffening="full"`` meets data built before the relaxation fields
    let the non-reference rigid interface faces turn (``settings["relaxation_interfaces"]`` absent):
    their relaxed quartic energy keeps a spurious membrane energy in the element layer next to each
    such interface (linearized rigid rotation), proportional to the mesh size; measured on the X1
    spin-up with the tip interface's stretch mode in the basis 34 % too stiff (-0.380 m against
    -0.574 m), on the X3 slider-crank rod 14 % too stiff.  Rebuilding the data fixes it."""
    settings = data.settings or {}
    if settings.get("quartic") != "relaxed" or settings.get("relaxation_interfaces") in ("released", "exact rotation"):
        return
    rigid = [f.name for f in data.interfaces if f.name != data.reference and getattr(f, "kind", "rigid") == "rigid"]
    if data.kind != "craig-bampton" or not rigid:
        return
    logger.warning(
        "%s: its data (%r) was built by an older flexmb whose relaxed quartic energy locks at the rigid "
        "interfaces %s (too stiff at large deflection: X1 spin-up 34 %%); rebuild it with "
        "flexmb.build_flexible_body (or `flexmb modes`), or use stiffening='preload'", owner, data.name, rigid)


#: cell types assembled with condensed incompatible modes by default (hex8, wedge6)
_ENHANCED_CELLS = ("hexahedron", "wedge")


def _warn_inconsistent_enhanced(owner: str, data) -> None:
    """Log a WARNING when a stiffened body's data holds hex8/wedge6 cells and was built before their
    stiffening data (``G``, ``H``, pair loads, preloads) came from one energy, the Green strain of the
    enhanced field (``settings["incompatible_stiffening"]`` absent): its relaxed quartic energy then
    converged to a wrong limit on one-layer meshes (0.79-0.93 of the elastica, 20-80 elements) and its
    ``G`` differed by up to 7 % (docs/theory.md 11.1).  Rebuilding the data fixes it."""
    settings = data.settings or {}
    if settings.get("incompatible_stiffening") == "enhanced" or data.geometric_stiffness is None:
        return
    cells = [t for t in (data.cells or {}) if t in _ENHANCED_CELLS]
    if not cells:
        return
    logger.warning(
        "%s: its data (%r) holds %s cells and was built by an older flexmb whose stiffening data of "
        "these cells (G, H, preloads) did not come from one energy (relaxed quartic term 7-21 %% off the "
        "elastica on one-layer meshes); rebuild it with flexmb.build_flexible_body (or `flexmb modes`), "
        "or use stiffening='none'", owner, data.name, "/".join(cells))


def select_modes(data, modes) -> Any:
    """The data set restricted to the modal coordinates ``modes`` (indices into the data's modes).

    The dropped modes become part of the relaxation (the shapes are K-orthogonal, ``K = diag(omega2)``):
    the residual preload stiffness gains what they carried (``Kg_res + sum_d a_c[d] G[d]``) and the
    relaxed quartic energy is condensed over those stiffer than every kept mode (whose ``q_d = O(q^2)``
    follows the kept ones quasi-statically): the cubic energy is linear in such a dropped ``q_d``,
    ``q_d C_d[i,j] q_i q_j`` with ``C_d`` the symmetrized ``G`` entries with one index ``d``, and its
    minimum ``-(C_d q q)^2 / (2 omega2_d)`` adds ``-4 C_d[i,j] C_d[k,l] / omega2_d`` to ``H`` (the
    terms with ``q_d^2`` are of fifth order, as ``q_d = O(q^2)``).  So a subset that drops the
    axial shape of a spinning beam keeps its membrane relaxation."""
    idx = np.asarray(modes, dtype=np.int64).reshape(-1)
    inv = data.invariants
    ix = np.ix_
    inv2 = replace(inv, modal_first_moment=inv.modal_first_moment[idx], modal_cross_moment=inv.modal_cross_moment[idx],
                   modal_second_moment=inv.modal_second_moment[ix(idx, idx)], modal_mass=inv.modal_mass[ix(idx, idx)],
                   modal_stiffness=inv.modal_stiffness[ix(idx, idx)])
    ifs = tuple(replace(f, modal_map=np.asarray(f.modal_map)[:, idx]) for f in data.interfaces)
    G = data.geometric_stiffness
    Kg = data.preload_stiffness
    Kr = data.preload_stiffness_residual
    a = data.preload_coordinates
    if Kr is not None:
        rest = np.setdiff1d(np.arange(data.n_modes), idx)
        Kr = Kr[:, idx][:, :, idx]
        if G is not None and a is not None and rest.size:
            Kr = Kr + np.einsum("ck,kij->cij", a[:, rest], G[rest][:, idx][:, :, idx])
    H = data.quartic_stiffness
    if H is not None:
        H = H[ix(idx, idx, idx, idx)]
        rest = np.setdiff1d(np.arange(data.n_modes), idx)
        # only modes stiffer than every kept one: their q_d = O(q^2) follows the kept ones quasi-
        # statically (a dropped soft mode is not condensable, and its terms would break the order)
        rest = rest[data.omega2[rest] > float(np.max(data.omega2[idx], initial=0.0))]
        if G is not None and rest.size and data.settings.get("quartic") == "relaxed":
            C = 0.5 * (G[ix(rest, idx, idx)] + G[ix(idx, rest, idx)].transpose(1, 0, 2)
                       + G[ix(idx, idx, rest)].transpose(2, 0, 1))
            C = 0.5 * (C + C.transpose(0, 2, 1))
            H = H - 4.0 * np.einsum("dij,dkl,d->ijkl", C, C, 1.0 / data.omega2[rest])
    factors = None
    if data.energy_factors is not None and G is not None:  # the factors of the kept modes' energy
        from flexmb.fe.reduction.energy_factors import factor_strain_energy

        factors = factor_strain_energy(G[ix(idx, idx, idx)], H, data.omega2[idx], data.energy_factors.tol)
    return replace(
        data, frequencies=data.frequencies[idx], omega2=data.omega2[idx], mode_shapes=data.mode_shapes[:, :, idx],
        mode_rotations=None if data.mode_rotations is None else data.mode_rotations[:, :, idx],
        interfaces=ifs, invariants=inv2, damping=data.damping[ix(idx, idx)],
        geometric_stiffness=None if G is None else G[ix(idx, idx, idx)],
        preload_stiffness=None if Kg is None else Kg[:, idx][:, :, idx],
        quartic_stiffness=H, energy_factors=factors,
        preload_stiffness_residual=Kr, preload_coordinates=None if a is None else a[:, idx],
        modal_stresses=None if data.modal_stresses is None else data.modal_stresses[idx],
        modal_point_stresses=None if data.modal_point_stresses is None else data.modal_point_stresses[idx],
        modal_beam_forces=None if data.modal_beam_forces is None else data.modal_beam_forces[idx],
    )


#: keys of ``FlexibleBody(modes={...})``: the modes by direction (see :func:`_modes_by_direction`)
MODE_SELECTION_KEYS = ("along", "plane", "min_fraction", "rtol")


def _modes_by_direction(data, spec: Mapping, owner: str):
    """``(aligned data, indices)`` for ``FlexibleBody(modes={"along": ...} | {"plane": ...})``: clusters of
    (near-)equal frequency rotated to the direction or plane first
    (:func:`flexmb.fe.reduction.mode_directions.align_modes`), then the modes whose kinetic-energy
    share along it (in it) is at least ``min_fraction`` (default 0.8)."""
    from flexmb.fe.reduction import mode_directions as md

    unknown = sorted(set(spec) - set(MODE_SELECTION_KEYS))
    if unknown:
        raise ModelError(f"{owner}: modes={dict(spec)!r}: unknown key(s) {unknown}; use {{'along': 'y'}} or "
                         f"{{'plane': 'xy'}}, optionally with 'min_fraction' (default 0.8) and 'rtol' ({md.CLUSTER_RTOL})")
    along, plane = spec.get("along"), spec.get("plane")
    try:
        aligned = md.align_modes(data, along, plane, rtol=spec.get("rtol", md.CLUSTER_RTOL))
        idx = md.modes_along(aligned, along, plane, min_fraction=spec.get("min_fraction", 0.8))
    except ModelError as exc:
        raise ModelError(f"{owner}: modes={dict(spec)!r}: {exc}") from None
    if not idx.size and data.n_modes:
        shares = md.direction_fractions(aligned, along, plane)
        raise ModelError(f"{owner}: modes={dict(spec)!r} keeps no mode: the largest share is {shares.max():.3g}; give a "
                         f"lower 'min_fraction' or another direction (shares along x, y, z: "
                         f"flexmb.fe.reduction.direction_fractions(data))")
    logger.info("%s: modes %s of %d kept by direction %s (shares %s)", owner, idx.tolist(), data.n_modes, dict(spec),
                np.round(md.direction_fractions(aligned, along, plane)[idx], 4).tolist())
    return aligned, idx


@dataclass(frozen=True)
class FlexibleBody:
    """A flexible body described by modes (floating frame of reference).

    Parameters
    ----------
    name : str
    data : FlexibleBodyData or str or Path
        The reduced body (or the path of its ``.npz`` file, :meth:`FlexibleBodyData.save`).
    position, orientation, velocity, angular_velocity
        Initial pose and motion of the floating frame (see the module docstring): origin [m],
        rotation (3x3 or a dict as for :class:`~flexmb.model.RigidBody`), origin velocity [m/s],
        angular velocity, inertial components [rad/s].
    q0, qd0 : array_like, shape (nm,), optional
        Initial modal coordinates and rates (default 0; mass-normalized shapes: [m sqrt(kg)]).
    modes : sequence of int or dict, optional
        Subset of the data's modes to keep (default: all); ``[]`` gives a rigid body with the
        data's mass properties.  ``Kg_res`` and the relaxed quartic ``H`` are condensed over the
        dropped modes (:func:`select_modes`), so a subset relaxes what the dropped shapes carried.
        By direction: ``{"along": "y"}`` (or a vector) keeps the modes whose kinetic energy goes
        mainly along y, ``{"plane": "xy"}`` (or the plane's normal) those that move mainly in the
        x-y plane (e.g. the in-plane bending and axial modes of a rod along x); optional
        ``"min_fraction"`` (the share kept, default 0.8) and ``"rtol"`` (default 1e-4).  Clusters of
        modes of (nearly) equal frequency, such as the y/z bending pairs of a square section that an
        eigensolver returns mixed, are first rotated to align with the direction or plane
        (:mod:`flexmb.fe.reduction.mode_directions`); ``q0``, ``qd0`` and ``damping`` then refer to
        the kept, aligned modes.
    damping : float, array_like (nm,) or (nm, nm), optional
        Overrides the data's modal damping: damping ratio(s) ``zeta`` (``C = diag(2 zeta omega)``)
        or the modal damping matrix [1/s].
    stiffening : {"full", "preload", "none"}
        ``"full"`` (default): exact strain energy of the reduced field (cubic ``G``, quartic ``H``)
        plus the *residual* unit inertial preload stiffness scaled by the frame's spin;
        ``"preload"``: the *full* unit preload stiffnesses scaled by the frame's spin, no ``G``/``H``
        (the SID/Wallrapp way); ``"none"``: linear modal body.  The preloads are scaled by the
        frame's angular-velocity products, angular acceleration and acceleration minus gravity.
        Validated: X1 spin-up within 0.5 % with and without the axial shape, X3/X4 slider-crank
        within 1 % with the axial shape in the basis.  ``"preload"`` does not stiffen under joint
        or applied forces (only the body's own inertial loads): keep ``"full"`` with an axial shape
        where joint forces load the body axially (X4: the slider's inertia).

        What ``"none"`` means physically: linear elasticity in the floating frame, the strain
        energy ``1/2 omega2 q^2`` and no geometric stiffness from any load (spin, joint forces,
        applied forces); the frame itself moves and turns exactly.  Loads through the joints then
        act on the deformation only through the frame's rotation, so the answer depends on where
        the frame is: on a pinned-pinned rod with the frame at one pinned end (the X3 rod, 0.3 m,
        8 x 8 mm steel, hex20 24 x 2 x 2), 400 N of axial compression *raises* the first bending
        frequency from 1275 to 1337 rad/s, where beam-column theory lowers it to 1243 rad/s
        (``1 - P / P_cr``, ``P_cr`` = 7487 N) and ``"full"`` gives 1241 rad/s.  Use ``"none"`` only
        where loads stay far below buckling and spins far below the first frequency (a spinning
        beam with ``"none"`` diverges above it: X1).
    """

    name: str
    data: Any
    position: Any = (0.0, 0.0, 0.0)
    orientation: Any = None
    velocity: Any = (0.0, 0.0, 0.0)
    angular_velocity: Any = (0.0, 0.0, 0.0)
    q0: Any = None
    qd0: Any = None
    modes: Any = None
    damping: Any = None
    stiffening: str = "full"

    def __post_init__(self):
        from flexmb.fe.reduction.body_data import FlexibleBodyData

        owner = f"FlexibleBody {self.name!r}"
        if not isinstance(self.name, str) or not self.name or self.name == GROUND:
            raise ModelError(f"{owner}: name must be a non-empty string other than {GROUND!r}")
        data = self.data
        if isinstance(data, (str, Path)):
            data = FlexibleBodyData.load(data)
        if not isinstance(data, FlexibleBodyData):
            raise ModelError(f"{owner}: data={type(data).__name__} is not a FlexibleBodyData or the path of its .npz file; "
                             f"make one with flexmb.fe.build_flexible_body(mesh, ...)")
        from flexmb.fe.reduction.data_checks import check_data

        check_data(data, f"{owner}: data {data.name!r}")  # shapes, NaN, negative omega2 of data built in memory
        if isinstance(self.modes, Mapping):
            data = select_modes(*_modes_by_direction(data, self.modes, owner))
        elif self.modes is not None:
            data = select_modes(data, _index_list("modes", self.modes, data.n_modes, owner))
        object.__setattr__(self, "data", data)
        nm = data.n_modes
        if self.stiffening not in STIFFENING:
            raise ModelError(f"{owner}: stiffening={self.stiffening!r}; use 'full', 'preload' or 'none'")
        if nm and self.stiffening == "full" and data.geometric_stiffness is None:
            raise ModelError(f"{owner}: stiffening='full' needs the geometric stiffness G of the data (built with "
                             f"geometric=True); rebuild the data or use stiffening='preload' or 'none'")
        if nm and self.stiffening == "full" and data.settings.get("quartic_unsupported"):
            raise ModelError(f"{owner}: stiffening='full' needs the quartic term H, which data {data.name!r} lacks "
                             f"(built before flexmb integrated it for {data.settings['quartic_unsupported']}): without "
                             "it the cubic energy is unbounded below; rebuild the data with build_flexible_body, or use "
                             "stiffening='preload' or 'none'")
        if nm and self.stiffening == "preload" and data.preload_stiffness is None:
            raise ModelError(f"{owner}: stiffening='preload' needs the unit preload stiffnesses (built with "
                             f"preloads=True); rebuild the data or use stiffening='none'")
        if nm and self.stiffening == "full":
            _warn_locked_relaxation(owner, data)
        if nm and self.stiffening != "none":
            _warn_inconsistent_enhanced(owner, data)
        for key in ("position", "velocity", "angular_velocity"):
            object.__setattr__(self, key, _vec3(key, getattr(self, key), owner))
        object.__setattr__(self, "orientation", rotation_input("orientation", self.orientation, owner))
        for key in ("q0", "qd0"):
            v = getattr(self, key)
            a = np.zeros(nm) if v is None else _real_array(key, v, owner, f"{nm} modal values (one per mode)").reshape(-1)
            if a.shape != (nm,) or not np.all(np.isfinite(a)):
                raise ModelError(f"{owner}: {key} must be {nm} finite modal values (one per mode), got {v!r}")
            object.__setattr__(self, key, a)
        C = data.damping
        if self.damping is not None:
            d = _real_array("damping", self.damping, owner, f"a damping ratio, {nm} ratios or a ({nm}, {nm}) modal "
                            "damping matrix [1/s]")
            if nm == 0 and np.any(d != 0):  # zero (or an empty matrix from a replace()) asks for nothing
                raise ModelError(f"{owner}: damping={self.damping!r} for a body without modes (modes=[] or data without "
                                 f"elastic modes): modal damping has nothing to act on; drop damping or keep modes")
            om = np.sqrt(np.maximum(data.omega2, 0.0))
            if d.ndim <= 1 and d.size in (1, nm):
                C = np.diag(2.0 * np.broadcast_to(d, (nm,)) * om)
            elif d.shape == (nm, nm):
                C = d
            else:
                raise ModelError(f"{owner}: damping must be a ratio, {nm} ratios or a ({nm}, {nm}) matrix; got shape {d.shape}")
            if not np.all(np.isfinite(C)) or (nm and np.linalg.eigvalsh(0.5 * (C + C.T)).min() < -1e-12 * max(np.abs(C).max(), 1.0)):
                raise ModelError(f"{owner}: damping={self.damping!r} must be finite and non-negative")
        object.__setattr__(self, "damping", np.asarray(C, dtype=float))
        if not math.isfinite(data.mass) or data.mass <= 0:
            raise ModelError(f"{owner}: the data's mass {data.mass!r} is not positive")

    @classmethod
    def from_field(cls, name: str, data: Any, *, displacement: Any = None, node_velocity: Any = None,
                   nodes: Any = None, tol: float = 1e-2, **kwargs: Any) -> FlexibleBody:
        """A flexible body whose initial state is fitted to nodal fields by least squares.

        ``q0`` and the frame's pose from ``displacement`` (k, 3) (from the undeformed mesh placed at
        ``position``/``orientation``, body-frame components [m]); ``qd0``, the frame's ``velocity``
        and ``angular_velocity`` from ``node_velocity`` (k, 3) (inertial [m/s]); ``nodes``: the
        nodes they are given at (indices or an interface name; default every node). A field the
        modes cannot reproduce (relative RMS residual above ``tol``) or one that the given nodes do
        not determine is a ModelError.  See :mod:`flexmb.model.initial_field`.

        ``data`` may be a ``.npz`` path; ``modes`` (indices or a direction) is applied first, so
        the fit uses the kept modes.  The other keyword arguments are those of the class, except
        ``q0``, ``qd0``, ``velocity`` and ``angular_velocity``, which the fit sets.
        """
        from flexmb.model.initial_field import fit_nodal_fields

        owner = f"FlexibleBody.from_field({name!r})"
        fixed = sorted(k for k in ("q0", "qd0", "velocity", "angular_velocity") if k in kwargs)
        if fixed:
            raise ModelError(f"{owner}: {', '.join(fixed)} given with the fields that set them; drop "
                             f"{'them' if len(fixed) > 1 else 'it'} (or build FlexibleBody(...) without the fields)")
        base = cls(name, data, **kwargs)  # data loaded, modes selected, every other argument checked
        fit = fit_nodal_fields(base.data, displacement=displacement, node_velocity=node_velocity, nodes=nodes,
                               position=base.position, orientation=base.orientation, tol=tol, owner=owner)
        return replace(base, q0=fit.q0, qd0=fit.qd0, position=fit.position, orientation=fit.orientation,
                       velocity=fit.velocity, angular_velocity=fit.angular_velocity, modes=None,
                       damping=base.damping)

    # ------------------------------------------------------------------ properties
    @property
    def mass(self) -> float:
        """Total mass [kg]."""
        return float(self.data.mass)

    @property
    def com(self) -> np.ndarray:
        """Undeformed centre of mass in the body frame [m]."""
        return np.asarray(self.data.invariants.center_of_mass, dtype=float)

    @property
    def n_modes(self) -> int:
        return self.data.n_modes

    @property
    def interface_names(self) -> list[str]:
        return [f.name for f in self.data.interfaces]

    def interface(self, name: str):
        """The interface frame ``name`` (ModelError listing the interfaces if unknown)."""
        for f in self.data.interfaces:
            if f.name == name:
                return f
        raise ModelError(f"FlexibleBody {self.name!r} has no interface {name!r}; its interfaces are "
                         f"{self.interface_names}")


# ---------------------------------------------------------------------------------------------- model helpers
def name_of(value: Any) -> Any:
    return value[0] if isinstance(value, tuple) else value


def joint_needs_interface(model, value: Any) -> bool:
    """Whether ``value`` names the plain frame of a flexible body with modes, where a joint may not
    attach (it must name one of the body's interfaces; a contact or a force may sit there)."""
    name = name_of(value)
    if name == GROUND or isinstance(value, tuple):
        return False
    body = model.bodies[model.body_index(name)]
    return getattr(body, "interface_names", None) is not None and bool(body.n_modes)


def check_site(model, owner: str, side: str, value: Any, joint: bool) -> None:
    """``(body, interface)`` only on flexible bodies and naming one of its interfaces; a joint on a
    flexible body with modes must name an interface (ModelError listing them)."""
    name = name_of(value)
    if name == GROUND:
        if isinstance(value, tuple):
            raise ModelError(f"{owner}: {side}={value!r}: the ground has no interfaces; write 'ground'")
        return
    body = model.bodies[model.body_index(name)]
    ifaces = getattr(body, "interface_names", None)
    if isinstance(value, tuple):
        if ifaces is None:
            raise ModelError(f"{owner}: {side}={value!r}: {name!r} is a {type(body).__name__}, which has no interfaces; "
                             f"give its name {name!r} and a point")
        if value[1] not in ifaces:
            raise ModelError(f"{owner}: {side}={value!r}: flexible body {name!r} has no interface {value[1]!r}; "
                             f"its interfaces are {ifaces}")
    elif joint and joint_needs_interface(model, value):
        raise ModelError(f"{owner}: {side}={value!r} is a flexible body: attach joints to one of its interfaces "
                         f"with ({name!r}, interface), interfaces: {ifaces}")


def site_offset(model, value: Any):
    """Interface point (body frame) and rotation of the interface ``(body, interface)`` at the body's
    initial modal coordinates ``q0``: ``c + Phi_t q0``, ``exp(Phi_r q0)``."""
    from flexmb.rotations.so3 import exp

    body = model.bodies[model.body_index(value)]
    f = body.interface(value[1])
    mm = np.asarray(f.modal_map, dtype=float)
    q0 = np.asarray(body.q0, dtype=float)
    return np.asarray(f.position, dtype=float) + mm[:3] @ q0, exp(mm[3:] @ q0)


def site_frame(model, value: Any, frame):
    """An attachment frame on an interface: origin at the interface point ``c`` (the deformation
    ``Phi_t q`` is added by the body type), orientation relative to the interface as it is turned
    by ``q0`` at t = 0, ``site`` = the interface name.  Other sides are returned unchanged."""
    if not isinstance(value, tuple):
        return frame
    body = model.bodies[model.body_index(value)]
    _, turn = site_offset(model, value)
    # (a checked interface point and a product of checked rotations: no input checks again)
    return Frame.checked(np.asarray(body.interface(value[1]).position, dtype=float), turn.T @ frame.orientation,
                         site=value[1])
