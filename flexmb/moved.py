"""Old import paths of modules that moved: ``import flexmb.solution`` still works.

The package is laid out by concept (``model/``, ``rotations/``, ``fe/mesh``, ``fe/elements``,
``fe/reduction``, ``dynamics/...``, ``results/``, ``catalog/``).  Scripts written against an older
layout import modules by their former paths; a finder on ``sys.meta_path`` (installed by
:mod:`flexmb`) answers those names with a thin module that forwards every attribute to the module's
new home, and emits a :class:`DeprecationWarning` naming it.  Checkpoints and ``.npz`` files that
pickled a model under an old module path load through the same table.  Imports only the standard
library.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from types import ModuleType

#: former module path -> where it lives now
MOVED: dict[str, str] = {
    "flexmb.frames": "flexmb.model.frames",
    "flexmb.flexible": "flexmb.model.flexible",
    "flexmb.force_elements": "flexmb.model.forces",
    "flexmb.checks": "flexmb.model.checks",
    "flexmb.units": "flexmb.model.units",
    "flexmb.rotation_coeffs": "flexmb.rotations.coeffs",
    "flexmb.rotation_kernels": "flexmb.rotations.kernels",
    "flexmb.rotation_input": "flexmb.rotations.orientation",
    "flexmb.solution": "flexmb.results.solution",
    "flexmb.solution_views": "flexmb.results.views",
    "flexmb.solution_store": "flexmb.results.store",
    "flexmb.solution_output": "flexmb.results.output",
    "flexmb.dense_output": "flexmb.results.dense_output",
    "flexmb.flexible_outputs": "flexmb.results.flexible_outputs",
    "flexmb.paraview": "flexmb.results.paraview",
    "flexmb.catalog_flex": "flexmb.catalog.flexible",
    "flexmb.fe.readers": "flexmb.fe.mesh.readers",
    "flexmb.fe.meshio_formats": "flexmb.fe.mesh.meshio_formats",
    "flexmb.fe.abaqus": "flexmb.fe.mesh.abaqus",
    "flexmb.fe.nastran": "flexmb.fe.mesh.nastran",
    "flexmb.fe.integrity": "flexmb.fe.mesh.integrity",
    "flexmb.fe.checks": "flexmb.fe.mesh.checks",
    "flexmb.fe.structured": "flexmb.fe.mesh.structured",
    "flexmb.fe.matrices": "flexmb.fe.mesh.matrices",
    "flexmb.fe.assembly": "flexmb.fe.elements.assembly",
    "flexmb.fe.modes": "flexmb.fe.reduction.modes",
    "flexmb.fe.interfaces": "flexmb.fe.reduction.interfaces",
    "flexmb.fe.craig_bampton": "flexmb.fe.reduction.craig_bampton",
    "flexmb.fe.symmetry": "flexmb.fe.reduction.symmetry",
    "flexmb.fe.invariants": "flexmb.fe.reduction.invariants",
    "flexmb.fe.stiffening": "flexmb.fe.reduction.stiffening",
    "flexmb.fe.condensation": "flexmb.fe.reduction.condensation",
    "flexmb.fe.preloads": "flexmb.fe.reduction.preloads",
    "flexmb.fe.modal_stress": "flexmb.fe.reduction.modal_stress",
    "flexmb.fe.body_data": "flexmb.fe.reduction.body_data",
    "flexmb.dynamics.attachments": "flexmb.dynamics.elements.attachments",
    "flexmb.dynamics.joints": "flexmb.dynamics.elements.joints",
    "flexmb.dynamics.joint_kernels": "flexmb.dynamics.elements.joint_law",
    "flexmb.dynamics.forces": "flexmb.dynamics.elements.forces",
    "flexmb.dynamics.newton": "flexmb.dynamics.solve.newton",
    "flexmb.dynamics.rank_deficient": "flexmb.dynamics.solve.rank_deficient",
    "flexmb.dynamics.linsolve": "flexmb.dynamics.solve.linsolve",
    "flexmb.dynamics.refactor_lu": "flexmb.dynamics.solve.refactor_lu",
    "flexmb.dynamics.dense_solve": "flexmb.dynamics.solve.dense_solve",
    "flexmb.dynamics.csc_pattern": "flexmb.dynamics.solve.csc_pattern",
    "flexmb.dynamics.scales": "flexmb.dynamics.solve.scales",
    "flexmb.dynamics.marching": "flexmb.dynamics.march.marching",
    "flexmb.dynamics.rotation_predictor": "flexmb.dynamics.march.rotation_predictor",
    "flexmb.dynamics.constraints": "flexmb.dynamics.node.constraints",
    "flexmb.dynamics.projection": "flexmb.dynamics.node.projection",
    "flexmb.dynamics.reactions": "flexmb.dynamics.node.reactions",
    "flexmb.dynamics.redundancy": "flexmb.dynamics.node.redundancy",
    "flexmb.dynamics.singular_node": "flexmb.dynamics.variants.singular_node",
    "flexmb.dynamics.symmetric_projection": "flexmb.dynamics.variants.symmetric_projection",
    "flexmb.dynamics.step_control": "flexmb.dynamics.variants.step_control",
    "flexmb.dynamics.root_checks": "flexmb.dynamics.variants.root_checks",
    "flexmb.dynamics.recorder": "flexmb.dynamics.io.recorder",
    "flexmb.dynamics.checkpoint": "flexmb.dynamics.io.checkpoint",
    "flexmb.dynamics.rigid_element": "flexmb.dynamics.solve.fused",
    "flexmb.dynamics.rigid_march": "flexmb.dynamics.march.kernels",
    "flexmb.dynamics.rigid_node": "flexmb.dynamics.node.kernels",
    "flexmb.dynamics.rigid_newton": "flexmb.dynamics.solve.fused_newton",
    "flexmb.fe_mesh": "flexmb.fe.mesh",
    "flexmb.flexible_body_data": "flexmb.fe.reduction.body_data",
    "flexmb.fe_assembly": "flexmb.fe.elements.assembly",
    "flexmb.reduction": "flexmb.fe.reduction",
}


class _Forward(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds a former module path and loads it as a module forwarding to the new one."""

    def find_spec(self, name, path=None, target=None):
        if name not in MOVED:
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        return None  # a fresh module object; the new module's own spec is left alone

    def exec_module(self, module: ModuleType) -> None:
        new_name = MOVED[module.__name__]
        warnings.warn(f"{module.__name__} moved to {new_name}; import it from there (the old path is "
                      f"kept for old scripts and files)", DeprecationWarning, stacklevel=2)
        target = importlib.import_module(new_name)
        module.__dict__["__getattr__"] = lambda attr: getattr(target, attr)
        module.__dict__["__dir__"] = lambda: dir(target)
        module.__dict__["__doc__"] = target.__doc__


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once); it answers only the names of :data:`MOVED`."""
    if not any(isinstance(f, _Forward) for f in sys.meta_path):
        sys.meta_path.insert(0, _Forward())  # before an editable install's finder of the source tree
