"""The flexible-body data set of a modal body: modes, interface frames, inertia invariants, geometric
stiffness, modal stresses and damping, stored in one ``.npz`` file.

``build_flexible_body(mesh, ...)`` makes it from an FE mesh in one call; ``FlexibleBodyData.load``
reads it back without the original mesh file. Everything is in the body (floating) frame, which is
the mesh coordinate system; see :mod:`flexmb.fe.reduction` for the conventions and formulas.
"""
from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from flexmb.fe import reduction as red
from flexmb.errors import MeshImportError, ModelError
from flexmb.fe.reduction import InertiaInvariants, Interface, InterfaceFrame
from flexmb.fe.reduction.body_io import FORMAT, FORMAT_VERSION  # the file's tag and version (written there)
from flexmb.fe.reduction.energy_factors import StrainEnergyFactors, factor_strain_energy

__all__ = ["FORMAT", "FORMAT_VERSION", "FlexibleBodyData", "build_flexible_body"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class FlexibleBodyData:
    """Reduced flexible-body model in its floating frame (the mesh coordinate system).

    Attributes
    ----------
    name : str
        Body label.
    kind : str
        Reduction: "free-free" (mean-axis frame), "craig-bampton" or "clamped".
    reference : str or None
        Interface the floating frame is attached to (None: mean axes).
    frequencies : ndarray, shape (nm,)
        Natural frequencies (Hz) of the reduced model (reference interface clamped, or free).
    omega2 : ndarray, shape (nm,)
        Modal stiffness diagonal ((rad/s)^2); ``modal_stiffness = diag(omega2)``.
    mode_shapes : ndarray, shape (n_nodes, 3, nm)
        Nodal displacement per unit modal coordinate (m), mass-normalized.
    mode_rotations : ndarray, shape (n_nodes, 3, nm) or None
        Nodal rotation (small rotation vector, body axes, rad per unit modal coordinate) of the nodes
        of shells and beams, zero at the other nodes; None for a model without rotational DOFs and in
        files written before it existed.
    interfaces : tuple of InterfaceFrame
        Frames with node set, position (3,) (m), ``modal_map`` (6, nm) giving the frame's
        translation (m) and small rotation (rad) per unit modal coordinate, ``is_reference``.
    invariants : InertiaInvariants
        Mass, first/second moments and their modal counterparts (exact for the consistent mass).
    damping : ndarray, shape (nm, nm)
        Modal damping matrix (1/s per unit modal mass).
    geometric_stiffness : ndarray, shape (nm, nm, nm) or None
        ``G[k, i, j]`` of the modes' own stresses (see :func:`flexmb.fe.reduction.modal_geometric_stiffness`).
    preload_stiffness : ndarray, shape (12, nm, nm) or None
        Unit inertial preload geometric stiffness ``Kg[c]`` of the full static response of each unit
        load, order :data:`flexmb.fe.reduction.PRELOAD_NAMES` (see
        :func:`flexmb.fe.reduction.preload_geometric_stiffness` for the scaling). For a linear modal
        body (no ``G``, ``H`` terms).
    quartic_stiffness : ndarray, shape (nm, nm, nm, nm) or None
        Coefficients of the quartic strain energy ``1/8 H q^4``; which ones is recorded in
        ``settings["quartic"]``:

        * ``"relaxed"`` (default of :func:`build_flexible_body`): ``H_rel = H - b_ij . K_c^+ b_kl``,
          the SVK energy minimized, to fourth order in q, over the FE displacements outside the
          basis (:func:`flexmb.fe.reduction.condensation.quartic_condensation`): the axial displacements that
          follow the quadratic strain of bending shapes relax, as in the full FE model, instead of
          locking the membrane energy in (a bending-only cantilever basis keeps ~1e-3 of the raw
          quartic energy). Same complement as ``preload_stiffness_residual``: nothing counted twice.
          ``settings["quartic_coupling"]`` ("full": exact to fourth order in q; "mixed";
          "membrane") and ``settings["quartic_geometric_weight"]`` say how the geometric-stiffness
          part of the coupling was kept (reduced where the truncated form would be unbounded below,
          see ``quartic_condensation``).
        * ``"raw"``: ``H`` of :func:`flexmb.fe.reduction.stiffening.modal_quartic_stiffness`, the exact
          SVK energy of the field ``Phi q`` alone (with ``geometric_stiffness`` and
          ``modal_stiffness``); right only when the basis holds the axial/static shapes. Files
          written before the setting existed load as ``"raw"``.

        None when not computed and in files written before it existed.
    preload_stiffness_residual : ndarray, shape (12, nm, nm) or None
        ``Kg_res[c]``: the unit preload stiffness of the part of each static response the basis
        cannot represent (:func:`flexmb.fe.reduction.preloads.load_stiffening`); the one to add to a body
        that has the ``G`` (and ``H``) terms, so nothing is counted twice.
        ``Kg_res[c] = Kg[c] - sum_k preload_coordinates[c, k] G[k]``. None in older files.
    preload_coordinates : ndarray, shape (12, nm) or None
        ``a[c]``: modal coordinates of the stiffness-metric projection of each unit static response
        on the basis (the reduced model's quasi-static deflection per unit ``s_c``). None in older
        files.
    energy_factors : StrainEnergyFactors or None
        Low-rank factors of the cubic and quartic energy terms (``G``, ``H``), what the dynamics
        evaluates (:mod:`flexmb.fe.reduction.energy_factors`: ``O(R nm^2)`` instead of ``nm^3`` and
        ``nm^4``). Files written before they existed are factored when loaded.
    modal_stresses : ndarray, shape (nm, n_nodes, 6) or None
        Nodal stresses of the solid cells per unit modal coordinate (Pa), Voigt [xx, yy, zz, yz, xz,
        xy] (zero at nodes without solid cells).
    modal_point_stresses : ndarray, shape (nm, n_sp, 6) or None
        Shells and beams: global Voigt stresses (Pa per unit modal coordinate) at their stress points,
        the bottom and top surfaces at each shell node and the extreme fibres of both ends of each
        beam (:mod:`flexmb.fe.reduction.modal_stress`); node ``stress_point_nodes`` (n_sp,), kind
        ``stress_point_kinds`` (n_sp,) (0 shell bottom, 1 shell top, 2 beam fibre).
    modal_beam_forces : ndarray, shape (nm, n_beams, 2, 6) or None
        Section forces (N, Vy, Vz, T, My, Mz in the beam's local axes; N, N m per unit modal
        coordinate) at the ends of each beam (``cells["line"]`` order).
    points : ndarray, shape (n_nodes, 3)
        Undeformed node positions x0 in the body frame (m).
    cells : dict of str to ndarray, shape (n_cells, k)
        Solid cells, shells ("quad", "triangle") and beams ("line") (meshio types), for visualization.
    units : str or None
        Unit-system label of the source mesh.
    source : str or None
        Source mesh file.
    source_checksum : str or None
        sha256 of the source mesh file.
    settings : dict
        Reduction settings (JSON-serializable).
    node_sets : dict of str to ndarray of int, shape (k,)
        The mesh's named node sets (0-based indices into ``points``), e.g. the faces of a structured
        box; where contacts act on the body (``Contact(..., nodes="bottom")``).  Empty in files
        written before format version 2 (:meth:`node_set` then finds the interfaces' sets only).
    """

    name: str
    kind: str
    reference: str | None
    frequencies: NDArray[np.float64]
    omega2: NDArray[np.float64]
    mode_shapes: NDArray[np.float64]
    interfaces: tuple[InterfaceFrame, ...]
    invariants: InertiaInvariants
    damping: NDArray[np.float64]
    geometric_stiffness: NDArray[np.float64] | None
    preload_stiffness: NDArray[np.float64] | None
    modal_stresses: NDArray[np.float64] | None
    points: NDArray[np.float64]
    cells: dict[str, NDArray[np.int64]]
    quartic_stiffness: NDArray[np.float64] | None = None
    preload_stiffness_residual: NDArray[np.float64] | None = None
    preload_coordinates: NDArray[np.float64] | None = None
    energy_factors: StrainEnergyFactors | None = None
    modal_point_stresses: NDArray[np.float64] | None = None
    stress_point_nodes: NDArray[np.int64] | None = None
    stress_point_kinds: NDArray[np.int8] | None = None
    modal_beam_forces: NDArray[np.float64] | None = None
    mode_rotations: NDArray[np.float64] | None = None
    units: str | None = None
    source: str | None = None
    source_checksum: str | None = None
    settings: dict = field(default_factory=dict)
    node_sets: dict = field(default_factory=dict)

    # ---------------------------------------------------------------- sizes and access
    @property
    def n_modes(self) -> int:
        """Number of modal coordinates, nm."""
        return int(self.mode_shapes.shape[2])

    @property
    def n_nodes(self) -> int:
        return int(self.points.shape[0])

    @property
    def mass(self) -> float:
        """Total mass (kg)."""
        return self.invariants.mass

    @property
    def modal_stiffness(self) -> NDArray[np.float64]:
        """diag(omega2), shape (nm, nm)."""
        return np.diag(self.omega2)

    def interface(self, name: str) -> InterfaceFrame:
        """The interface frame called ``name``."""
        for f in self.interfaces:
            if f.name == name:
                return f
        raise ModelError(f"body {self.name!r} has no interface {name!r}; it has {[f.name for f in self.interfaces]}.")

    def node_set(self, name: str) -> NDArray[np.int64]:
        """The node indices ``(k,)`` of the node set ``name``: a set of the mesh, else the node set of the
        interface ``name``; a ModelError naming the body, the set and the sets it has when neither exists."""
        if name in self.node_sets:
            return np.asarray(self.node_sets[name], dtype=np.int64).reshape(-1)
        for f in self.interfaces:
            if f.name == name:
                return np.asarray(f.nodes, dtype=np.int64).reshape(-1)
        have = sorted(set(self.node_sets) | {f.name for f in self.interfaces})
        raise ModelError(f"body {self.name!r} has no node set {name!r}; its node sets are {have}"
                         + ("" if self.node_sets else " (interfaces only: data built or saved before flexmb kept the "
                            "mesh's node sets; rebuild it with flexmb.build_flexible_body to get them all)"))

    def _modal(self, eta: ArrayLike, what: str) -> NDArray[np.float64]:
        """``eta`` as nm finite modal coordinates, else a ModelError naming ``what``."""
        try:
            a = None if isinstance(eta, (str, bytes)) else np.asarray(eta, dtype=float)
        except (TypeError, ValueError):
            a = None
        if a is None or a.shape != (self.n_modes,) or not np.all(np.isfinite(a)):
            raise ModelError(f"body {self.name!r}: {what}(eta={eta!r}): give {self.n_modes} finite modal coordinates "
                             "(one per mode, shape (nm,))")
        return a

    def displacement(self, eta: ArrayLike) -> NDArray[np.float64]:
        """Nodal displacements (n_nodes, 3) (m) for modal coordinates ``eta`` (nm,)."""
        return self.mode_shapes @ self._modal(eta, "displacement")

    def rotation(self, eta: ArrayLike) -> NDArray[np.float64]:
        """Nodal rotations (n_nodes, 3) (rad, small rotation vectors) for modal coordinates ``eta``
        (nm,); zero at nodes without rotational DOFs."""
        eta = self._modal(eta, "rotation")
        if self.mode_rotations is None:
            return np.zeros((self.n_nodes, 3))
        return self.mode_rotations @ eta

    def stress(self, eta: ArrayLike) -> NDArray[np.float64]:
        """Nodal stresses of the solid cells (n_nodes, 6) (Pa) for modal coordinates ``eta`` (nm,)."""
        if self.modal_stresses is None:
            raise ModelError(f"body {self.name!r} was built without stresses; use build_flexible_body(..., stresses=True).")
        return np.einsum("k,knv->nv", self._modal(eta, "stress"), self.modal_stresses)

    def point_stresses(self, eta: ArrayLike) -> NDArray[np.float64]:
        """Stresses (n_sp, 6) (Pa) at the stress points of the shells and beams (``stress_point_nodes``,
        ``stress_point_kinds``) for modal coordinates ``eta`` (nm,)."""
        if self.modal_point_stresses is None:
            raise ModelError(f"body {self.name!r} has no stresses of shells or beams (none in it, built without "
                             "stresses, or built before flexmb stored them).")
        return np.einsum("k,knv->nv", self._modal(eta, "point_stresses"), self.modal_point_stresses)

    def beam_forces(self, eta: ArrayLike) -> NDArray[np.float64]:
        """Section forces (n_beams, 2, 6) (N, Vy, Vz, T, My, Mz; N, N m) at both ends of each beam."""
        if self.modal_beam_forces is None:
            raise ModelError(f"body {self.name!r} has no beam section forces (no beams, or built without stresses).")
        return np.einsum("k,kbev->bev", self._modal(eta, "beam_forces"), self.modal_beam_forces)

    def von_mises(self, eta: ArrayLike) -> NDArray[np.float64]:
        """Nodal von Mises stress (n_nodes,) (Pa) for modal coordinates ``eta``: at each node the largest
        of the solid nodal stress, the shells' bottom and top surfaces and the beams' extreme fibres."""
        from flexmb.fe.reduction.modal_stress import nodal_von_mises

        out = nodal_von_mises(self, self._modal(eta, "von_mises"))
        if out is None:
            raise ModelError(f"body {self.name!r} was built without stresses; use build_flexible_body(..., stresses=True).")
        return out

    # ---------------------------------------------------------------- persistence
    def save(self, path: str | Path) -> Path:
        """Write the data set to one ``.npz`` file (no pickles; metadata as a JSON string array).

        Returns
        -------
        Path
            The file written (``.npz`` appended when missing).
        """
        from flexmb.fe.reduction.body_io import write_npz

        return write_npz(self, path)

    @classmethod
    def load(cls, path: str | Path) -> FlexibleBodyData:
        """Read a file written by :meth:`save` (``allow_pickle=False``); any damage (truncated,
        random bytes, missing entry, arrays whose shapes do not agree, NaN, a negative ``omega2``:
        :func:`flexmb.fe.reduction.data_checks.check_data`) raises :class:`MeshImportError` naming
        the file, the field and the value."""
        if not isinstance(path, (str, os.PathLike)):
            raise ModelError(f"FlexibleBodyData.load: path={path!r} is not a file path; give the .npz file's path.")
        try:
            return cls._load(Path(path))
        except MeshImportError:
            raise
        except Exception as exc:  # a damaged entry: missing key, bad JSON, truncated member
            raise MeshImportError(
                f"{path}: damaged flexible-body file ({type(exc).__name__}: {exc}); write it again with "
                "FlexibleBodyData.save() or build_flexible_body()."
            ) from exc

    @classmethod
    def _load(cls, path: Path) -> FlexibleBodyData:
        """Read a file written by :meth:`save` (``allow_pickle=False``).

        Raises
        ------
        MeshImportError
            If the file is missing, damaged or truncated, not a flexmb flexible-body file, or has a
            newer format version (a format error, not a model error).
        """
        from flexmb.fe.reduction.body_io import read_npz

        return read_npz(cls, path)

    # ---------------------------------------------------------------- visualization
    def to_vtu(self, directory: str | Path, *, stem: str = "mode") -> Path:
        """Write each mode shape as a VTU file plus a ParaView ``.pvd`` collection (meshio).

        Each ``{stem}_{k:03d}.vtu`` holds the undeformed mesh with point data ``displacement``
        (n_nodes, 3) (m per unit modal coordinate) and, when available, ``von_mises`` (Pa per unit
        modal coordinate, :meth:`von_mises`); in the collection the "timestep" is the frequency in Hz (mode number
        order is kept).

        Returns
        -------
        Path
            The ``.pvd`` file.
        """
        from flexmb.fe.reduction.modal_stress import write_mode_vtus

        return write_mode_vtus(self, directory, stem)


def _damping_matrix(omega2: NDArray[np.float64], damping: Any) -> NDArray[np.float64]:
    if damping is None:
        return red.modal_damping(omega2)
    if isinstance(damping, Mapping):
        unknown = set(damping) - {"ratio", "rayleigh"}
        if unknown:
            raise ModelError(f"`damping` keys {sorted(unknown)} unknown; use {{'ratio': z}} or {{'rayleigh': (alpha, beta)}}.")
        return red.modal_damping(omega2, ratio=damping.get("ratio"), rayleigh=damping.get("rayleigh"))
    return red.modal_damping(omega2, ratio=damping)


def _n_normal_modes(basis) -> int:
    """Normal modes in a basis: fixed-interface modes of a Craig-Bampton basis, else all shapes."""
    if basis.kind == "craig-bampton":
        return int(basis.settings.get("n_fixed_interface_modes", basis.n_modes))
    return int(basis.n_modes)


def build_flexible_body(
    mesh,
    *,
    interfaces: Sequence[str | Interface] | Mapping | None = None,
    n_modes: int = 10,
    interface_kind: str = "rigid",
    reference: str | None = "first",
    method: str = "auto",
    static_modes=None,
    damping: Any = None,
    materials=None,
    geometric: bool = True,
    quartic: bool | str = "auto",
    preloads: bool = True,
    stresses: bool = True,
    name: str | None = None,
    backend: str = "auto",
    basis_transform=None,
    allow_unassembled: bool = False,
) -> FlexibleBodyData:
    """Assemble, reduce and package an FE mesh as a flexible body, in one call.

    Parameters
    ----------
    mesh : FEMesh
        With materials (or pass ``materials``). Nodes without solid cells are dropped first. Every
        argument is checked before any assembly (:mod:`flexmb.fe.reduction.build_checks`): a path
        instead of a mesh, ``n_modes`` that is no integer (or 0 without interfaces),
        ``materials="steel"``, ... are ModelErrors naming the argument, the value and the fix.
    interfaces : sequence of str / Interface, or dict, optional
        Interface frames (see :func:`flexmb.fe.reduction.craig_bampton`). None or empty: free-free
        modes with a mean-axis floating frame.
    n_modes : int
        Fixed-interface normal modes (Craig-Bampton, >= 0) or elastic modes (free-free, >= 1).
    interface_kind : {"rigid", "average"}
        Kind of interfaces given by node-set name (RBE2-like or RBE3-like); "average" without
        interfaces is a ModelError. A rigid interface holds its whole face, which also stops the
        face's Poisson contraction: a clamped reference face makes the solid slightly stiffer than
        beam theory (X1 spin-up beam, nu = 0.3: first in-plane frequency 3.820 against 3.801 rad/s
        with nu = 0, +0.5 %, 1 % in stiffness); "average" leaves the face free to deform (3.801).
    method : {"auto", "craig-bampton", "free-free"}
        "auto": Craig-Bampton when interfaces are given, else free-free. "free-free" with
        interfaces: free-free modes, frames attached by least-squares averaging
        (:func:`flexmb.fe.reduction.attach_interfaces`), mean-axis floating frame.
    reference : "first", name or None
        Interface the floating frame is attached to (Craig-Bampton only: a named reference with
        free-free modes is a ModelError; None gives a mean-axis Craig-Bampton frame).
    static_modes : optional
        Attachment-mode nodes (Craig-Bampton only; a ModelError otherwise).
    damping : float, array_like (nm,), dict, or None
        Modal damping ratio(s), or ``{"ratio": z}`` / ``{"rayleigh": (alpha, beta)}``.
    materials : Material or dict, optional
        Overrides ``mesh.materials`` by the rule of :meth:`flexmb.fe.mesh.FEMesh.with_material`
        (a single Material replaces the file's set materials too).
    geometric, preloads, stresses : bool
        Compute the modal geometric stiffness ``G`` (nm FE assemblies), the 12 unit inertial
        preload stiffnesses, full and residual (12 static solves and 24 assemblies), and the modal
        stresses.
    quartic : "auto", True, "relaxed", "raw" or False
        The quartic energy term (needs ``geometric``): "auto" (default) is "relaxed" with
        ``geometric`` and False without; True / "relaxed" relaxes it over
        the FE displacements outside the basis (:func:`flexmb.fe.reduction.condensation.quartic_condensation`:
        one quadrature pass and ``nm (nm + 1) / 2`` static solves), "raw" keeps the energy of the
        reduced field alone (about ``7 n_qp (nm (nm + 1) / 2)^2`` flops, ``n_qp`` quadrature
        points), False skips it; an explicit quartic term with ``geometric=False`` is a ModelError
        (it completes the cubic term). Recorded in ``settings["quartic"]`` (None when skipped) and
        ``settings["quartic_coupling"]`` ("full" or "membrane", see ``quartic_condensation``).
    name : str, optional
        Body label (default: the mesh file stem).
    backend : str
        SPD factorization backend (:func:`flexmb.fe.spd_solve.factorize_spd`).
    basis_transform : callable, optional
        ``f(basis, K, M, mesh) -> ModalBasis`` applied to the reduced basis before anything else is
        computed from it (e.g. keep one symmetry class: :func:`flexmb.fe.reduction.symmetry.symmetric_sub_basis`);
        the invariants, ``G``, ``H``, the residual preloads and the stresses then belong to the
        returned basis, which must stay M-orthonormal and K-diagonal.
    allow_unassembled : bool
        Build from the solid cells even when the mesh file held elements that flexmb does not
        assemble (``mesh.unassembled``: shells, beams, point masses, springs, connectors, rigid
        elements, constraints); the body then misses their stiffness and mass. Default False: such
        a mesh is refused with a ModelError naming the types and counts. Recorded in
        ``settings["unassembled"]``.

    Returns
    -------
    FlexibleBodyData
        ``settings`` records ``n_modes_requested``, ``n_modes_returned`` (fewer is also logged as a
        WARNING) and the ``plausibility`` note (size, mass, f1, unit warning; see
        :func:`flexmb.fe.mesh.checks.plausibility`).

    Raises
    ------
    MeshImportError
        From :func:`flexmb.fe.mesh.checks.check_mesh`: non-finite coordinates, inverted or zero-volume
        cells, no solid cells.
    ModelError
        Craig-Bampton of a mesh in several disconnected pieces; a mesh with elements flexmb does not
        assemble (without ``allow_unassembled``); bad arguments.
    """
    from flexmb.fe.elements import assembly as fe  # assembly imported lazily like in reduction

    from flexmb.fe.mesh.unassembled import require_assembled
    from flexmb.fe.reduction.build_checks import check_arguments, check_option_pairs, quartic_mode as _quartic
    from flexmb.fe.reduction.build_checks import refuse_grounded_springs

    n_modes = check_arguments(
        mesh=mesh, interfaces=interfaces, n_modes=n_modes, interface_kind=interface_kind, reference=reference,
        method=method, damping=damping, materials=materials, name=name, backend=backend,
        basis_transform=basis_transform,
        flags=dict(geometric=geometric, preloads=preloads, stresses=stresses, allow_unassembled=allow_unassembled))
    check_option_pairs(interfaces=interfaces, method=method, reference=reference, interface_kind=interface_kind,
                       static_modes=static_modes)
    quartic_mode = _quartic(quartic, geometric)
    require_assembled(mesh, "build_flexible_body", allow_unassembled, rotational=True)
    if materials is not None:
        mesh = mesh.with_materials(materials)
    if hasattr(mesh, "compacted"):
        n0 = mesh.n_nodes
        mesh = mesh.compacted()
        if mesh.n_nodes != n0:
            logger.info("build_flexible_body: dropped %d nodes without solid cells", n0 - mesh.n_nodes)
    from flexmb.fe.mesh.checks import check_mesh, connected_components, plausibility

    structural = bool(getattr(mesh, "shells", None) or getattr(mesh, "beams", None))
    check_mesh(mesh, solid_required=not structural)  # NaN, inverted, zero-volume, surface-only: raise
    refuse_grounded_springs(mesh)
    rotational = mesh.dof_map.has_rotations if hasattr(mesh, "dof_map") else False
    craig_bampton = bool(interfaces) and method != "free-free"
    if craig_bampton:
        n_pieces, labels = connected_components(mesh)
        if n_pieces > 1:
            sizes = np.bincount(labels[labels >= 0])
            raise ModelError(
                f"build_flexible_body: {Path(mesh.source).name if mesh.source else 'the mesh'} has {n_pieces} "
                f"disconnected pieces ({', '.join(map(str, sizes))} nodes): a Craig-Bampton body of it keeps "
                f"{6 * (n_pieces - 1)} zero-frequency modes of the pieces that float. Merge coincident nodes "
                "(Gmsh: Coherence; one conformal mesh), connect the pieces, or make one body per piece."
            )
    K = fe.assemble_stiffness(mesh)
    if rotational:
        M = fe.assemble_mass(mesh)  # rotary inertia, offsets and point masses: no scalar mass times I3
    else:
        Ms = fe.assemble_scalar_mass(mesh)
        M = sp.csr_matrix(sp.kron(Ms, sp.eye(3), format="csr"))
    if craig_bampton:
        basis = red.craig_bampton(K, M, mesh, interfaces, n_modes, reference=reference, static_modes=static_modes,
                                  interface_kind=interface_kind, backend=backend)
    else:
        basis = red.free_free_modes(K, M, n_modes, points=mesh.points, backend=backend,
                                    dof_map=mesh.dof_map if rotational else None)
        if interfaces:
            basis = red.attach_interfaces(basis, mesh, interfaces, interface_kind=interface_kind)
    n_got = _n_normal_modes(basis)
    if n_got < n_modes:
        logger.warning(
            "build_flexible_body: %d %s modes asked, %d returned (the mesh has too few degrees of freedom%s); "
            "refine the mesh for more modes, or ask for fewer.", n_modes, basis.kind, n_got,
            f", or {basis.n_extra_zero_modes} extra zero-frequency modes" if basis.n_extra_zero_modes else "",
        )
    if basis_transform is not None:
        basis = basis_transform(basis, K, M, mesh)
    P = basis.shapes
    if rotational:
        inv = red.inertia_invariants_of_dofs(M, mesh.dof_map, mesh.points, P, K)
    else:
        inv = red.inertia_invariants(Ms, mesh.points, P, K)
    G = red.modal_geometric_stiffness(mesh, P) if geometric else None
    quartic_coupling = quartic_weight = None
    if quartic_mode == "relaxed":
        from flexmb.fe.reduction.condensation import quartic_condensation

        qc = quartic_condensation(K, M, mesh, basis, backend=backend)
        H, quartic_coupling, quartic_weight = qc.relaxed, qc.coupling, qc.geometric_weight
        if G is not None:
            G = G + qc.cubic_correction
    elif quartic_mode == "raw":
        H = red.modal_quartic_stiffness(mesh, P)
    else:
        H = None
    pre = red.preload_stiffening(K, M, mesh, basis, backend=backend) if preloads else None
    S = red.modal_stresses(mesh, P) if stresses and (mesh.cells or not rotational) else None
    Sp = nodes_sp = kinds_sp = Fb = None
    if stresses and rotational:
        from flexmb.fe.reduction.modal_stress import structural_modal_stresses

        Sp, nodes_sp, kinds_sp, Fb = structural_modal_stresses(mesh, P)
    f1 = float(basis.frequencies[0]) if len(basis.frequencies) else None
    note = plausibility(mesh, f1=f1)
    settings = dict(basis.settings)
    settings.update(n_modes_requested=int(n_modes), n_modes_returned=int(n_got),
                    plausibility={k: note[k] for k in ("size", "mass", "f1", "warning")})
    settings.update(
        kind=basis.kind, n_shapes=basis.n_modes, interface_kind=interface_kind,
        n_extra_zero_modes=basis.n_extra_zero_modes,
        method=method, quartic=quartic_mode, quartic_coupling=quartic_coupling,
        quartic_geometric_weight=quartic_weight,
        # relaxation fields (relaxed H, residual preloads) with the non-reference rigid interfaces
        # turning exactly (flexmb.fe.reduction.stiffening.rigid_face_pair_displacements); absent in data built
        # before the faces' locking was removed
        relaxation_interfaces="exact rotation",
        # G, H, pair loads and preloads of hex8/wedge6 cells from the Green strain of the enhanced field
        # (incompatible modes; docs/theory.md 11.1); absent in data built before they were consistent
        incompatible_stiffening="enhanced",
        damping=json.loads(json.dumps(damping, default=lambda o: np.asarray(o).tolist())),
        unassembled=[e.as_dict() for e in getattr(mesh, "unassembled", ())],
        stresses=("nodal and points" if rotational else "nodal") if stresses else None,
        n_dofs=int(K.shape[0]),
    )
    src = getattr(mesh, "source", None)
    return FlexibleBodyData(
        name=name or (Path(src).stem if src else "body"),
        kind=basis.kind,
        reference=basis.reference,
        frequencies=basis.frequencies,
        omega2=basis.omega2,
        mode_shapes=basis.nodal_shapes(), mode_rotations=basis.nodal_rotations() if rotational else None,
        interfaces=basis.interfaces if basis.interfaces else (),
        invariants=inv,
        damping=_damping_matrix(basis.omega2, damping),
        geometric_stiffness=G,
        preload_stiffness=None if pre is None else pre.full,
        quartic_stiffness=H,
        energy_factors=None if G is None else factor_strain_energy(G, H, basis.omega2),
        preload_stiffness_residual=None if pre is None else pre.residual,
        preload_coordinates=None if pre is None else pre.coordinates,
        modal_stresses=S, modal_point_stresses=Sp, stress_point_nodes=nodes_sp, stress_point_kinds=kinds_sp,
        modal_beam_forces=Fb,
        points=np.asarray(mesh.points, dtype=float),
        cells={t: np.asarray(c) for t, c in (*mesh.cells.items(), *getattr(mesh, "shells", {}).items(),
                                              *getattr(mesh, "beams", {}).items())},
        units=getattr(mesh, "units", None),
        source=src,
        source_checksum=getattr(mesh, "checksum", None),
        settings=settings,
        node_sets={k: np.asarray(v, dtype=np.int64).reshape(-1) for k, v in getattr(mesh, "node_sets", {}).items()},
    )
