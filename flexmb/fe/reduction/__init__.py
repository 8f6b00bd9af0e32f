"""Modal reduction of a linear-elastic FE model into floating-frame shape functions (facade).

This module re-exports the public names of the reduction modules, so ``from flexmb.fe import
reduction as red; red.craig_bampton(...)`` keeps working. Each part lives in its own module:

* :mod:`flexmb.fe.reduction.modes`: free-free normal modes (rigid-body modes identified and separated),
  clamped (fixed-base) modes, :class:`ModalBasis`, :class:`InterfaceFrame`, modal damping;
* :mod:`flexmb.fe.reduction.interfaces`: interface frames (RBE2/RBE3-like), condensation, constrained static
  solves, full-FE frame static response;
* :mod:`flexmb.fe.reduction.craig_bampton`: Craig-Bampton bases, frames attached to free-free bases;
* :mod:`flexmb.fe.reduction.invariants`: inertia invariants of the floating frame of reference formulation,
  exact for the consistent mass;
* :mod:`flexmb.fe.reduction.stiffening`: cubic ``G`` and quartic ``H`` strain-energy terms of the reduced
  field (Green-Lagrange, St. Venant-Kirchhoff), modal energy, force and tangent;
* :mod:`flexmb.fe.reduction.preloads`: unit inertial preloads and the geometric stiffness of their static
  stress, full and for the part the basis cannot carry;
* :mod:`flexmb.fe.reduction.modal_stress`: modal stresses, von Mises;
* :mod:`flexmb.fe.reduction.mode_directions`: modes by direction (shares of the motion along an axis
  or in a plane, degenerate clusters aligned, selection).

Conventions
-----------
DOFs are node-major, ``[ux0, uy0, uz0, ux1, ...]`` (``3 n_nodes``), as in :mod:`flexmb.fe.elements.assembly`.
A mode-shape matrix ``Phi`` has shape ``(3 n_nodes, nm)``; its nodal view ``(n_nodes, 3, nm)``.
The body (floating) frame is the mesh coordinate system: ``x0`` = ``mesh.points``; all moments are
about the mesh origin. Units are those of the model (SI: m, kg, s, N, Pa); frequencies in Hz,
eigenvalues ``omega2`` in (rad/s)^2.
"""
from __future__ import annotations

from flexmb.fe.reduction.craig_bampton import attach_interfaces, craig_bampton
from flexmb.fe.reduction.interfaces import Interface, averaging_operator, frame_static_response
from flexmb.fe.reduction.invariants import InertiaInvariants, inertia_invariants, inertia_invariants_of_dofs
from flexmb.fe.reduction.modal_stress import modal_stresses, von_mises
from flexmb.fe.reduction.mode_directions import align_modes, direction_fractions, modes_along, rotate_modes
from flexmb.fe.reduction.modes import (
    InterfaceFrame,
    ModalBasis,
    clamped_modes,
    free_free_modes,
    modal_damping,
    rigid_body_modes,
)
from flexmb.fe.reduction.preloads import (
    PRELOAD_NAMES,
    LoadStiffening,
    inertial_load_vectors,
    load_geometric_stiffness,
    load_stiffening,
    preload_geometric_stiffness,
    preload_stiffening,
    static_preload_displacements,
    stiffness_projection,
)
from flexmb.fe.reduction.stiffening import (
    modal_elastic_force,
    modal_geometric_stiffness,
    modal_quartic_stiffness,
    modal_strain_energy,
    modal_tangent_stiffness,
)

__all__ = [
    "PRELOAD_NAMES",
    "align_modes",
    "direction_fractions",
    "modes_along",
    "rotate_modes",
    "Interface",
    "InterfaceFrame",
    "InertiaInvariants",
    "LoadStiffening",
    "ModalBasis",
    "attach_interfaces",
    "averaging_operator",
    "clamped_modes",
    "craig_bampton",
    "free_free_modes",
    "frame_static_response",
    "inertia_invariants",
    "inertia_invariants_of_dofs",
    "inertial_load_vectors",
    "load_geometric_stiffness",
    "load_stiffening",
    "modal_damping",
    "modal_elastic_force",
    "modal_geometric_stiffness",
    "modal_quartic_stiffness",
    "modal_strain_energy",
    "modal_stresses",
    "modal_tangent_stiffness",
    "preload_geometric_stiffness",
    "preload_stiffening",
    "rigid_body_modes",
    "static_preload_displacements",
    "stiffness_projection",
    "von_mises",
]
