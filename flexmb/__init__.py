"""flexmb: flexible multibody dynamics with more-than-redundant coordinates and finite elements in time.

The public API is re-exported here; everything else is internal.

>>> import numpy as np, flexmb as fm
>>> bob = fm.RigidBody("bob", mass=1.0, inertia=np.full(3, 1e-3), position=(-1, 0, 0))
>>> pin = fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))
>>> sol = fm.simulate(fm.Model([bob], [pin], [fm.Gravity((0, -9.81, 0))]), t_end=0.1, h=0.01)
>>> sol.body("bob").position.shape
(11, 3)
"""
from __future__ import annotations

import logging as _logging
from typing import TYPE_CHECKING

__version__ = "0.1.0"

from flexmb.errors import ConvergenceError as ConvergenceError
from flexmb.errors import FlexmbError as FlexmbError
from flexmb.errors import MeshImportError as MeshImportError
from flexmb.errors import ModelError as ModelError
from flexmb.errors import SingularMatrixError as SingularMatrixError
from flexmb.errors import SolutionFileError as SolutionFileError
from flexmb.errors import ConstraintViolationError as ConstraintViolationError
from flexmb.moved import install as _install_moved_paths
from flexmb.reexport import lazy_attributes as _lazy_attributes

# The rest of the public API is loaded on first access (PEP 562), so that `import flexmb` and
# `flexmb --help` do not import numpy, scipy and the engine; `from flexmb import Model` and
# `fm.Model` work as before.  name -> module that defines it
_LAZY: dict[str, str] = {
    "GROUND": "flexmb.model",
    "Contact": "flexmb.model",
    "Impulse": "flexmb.model",
    "impact": "flexmb.dynamics.impact.result",
    "ImpactResult": "flexmb.dynamics.impact.result",
    "Cylindrical": "flexmb.model",
    "Fixed": "flexmb.model",
    "Frame": "flexmb.model",
    "Gravity": "flexmb.model",
    "Joint": "flexmb.model",
    "Model": "flexmb.model",
    "Planar": "flexmb.model",
    "PointForce": "flexmb.model",
    "PointTorque": "flexmb.model",
    "Prismatic": "flexmb.model",
    "Revolute": "flexmb.model",
    "RigidBody": "flexmb.model",
    "FlexibleBody": "flexmb.model",
    "Spherical": "flexmb.model",
    "SpringDamper": "flexmb.model",
    "Universal": "flexmb.model",
    "NewtonOptions": "flexmb.dynamics.solve.newton",
    "orientation": "flexmb.rotations",
    "SimulationOptions": "flexmb.dynamics.simulate",
    "simulate": "flexmb.dynamics.simulate",
    "resume": "flexmb.dynamics.simulate",
    "load_checkpoint": "flexmb.dynamics.simulate",
    "SimulationInterrupted": "flexmb.errors",
    "Solution": "flexmb.results.solution",
    "TimeElement": "flexmb.dynamics.time_elements",
    "FEMesh": "flexmb.fe.mesh",
    "Material": "flexmb.fe.mesh",
    "read_mesh": "flexmb.fe.mesh.readers",
    "structured_box": "flexmb.fe.mesh.structured",
    "FlexibleBodyData": "flexmb.fe.reduction.body_data",
    "build_flexible_body": "flexmb.fe.reduction.body_data",
    "spinup_beam_data": "flexmb.catalog.flexible",
    "slider_crank_rod_data": "flexmb.catalog.flexible",
    "PointView": "flexmb.results.solution",
    "NodeSetView": "flexmb.results.flexible_outputs",
    "equilibrium": "flexmb.linear.equilibrium",
    "Equilibrium": "flexmb.linear.statics",
    "linearize": "flexmb.linear.linearize",
    "Linearization": "flexmb.linear.linearize",
    "eigen": "flexmb.linear.eigen",
    "EigenResult": "flexmb.linear.eigen",
    "campbell": "flexmb.linear.campbell",
    "load_path": "flexmb.linear.loadpath",
    "sensitivity": "flexmb.linear.sensitivity",
    "CampbellResult": "flexmb.linear.campbell",
    "sweep": "flexmb.studies",
    "linear_range": "flexmb.studies",
    "log_range": "flexmb.studies",
    "grid": "flexmb.studies",
    "load_results": "flexmb.studies",
}

__all__ = ["__version__", "ConvergenceError", "FlexmbError", "MeshImportError", "ModelError", "SingularMatrixError",
           "SolutionFileError", "ConstraintViolationError", *_LAZY]


_lazy_getattr, __dir__ = _lazy_attributes(__name__, _LAZY, globals())


def __getattr__(name: str):
    try:
        return _lazy_getattr(name)
    except KeyboardInterrupt as exc:
        # Ctrl-C while `fm.simulate` (or another name of the driver) loads the engine (numba) is part
        # of the simulation's set-up: SimulationInterrupted, without results
        from flexmb.errors import SimulationInterrupted

        if _LAZY.get(name) != "flexmb.dynamics.simulate" or isinstance(exc, SimulationInterrupted):
            raise
        raise SimulationInterrupted(f"simulation interrupted while loading the engine (flexmb.{name}: numba imports), "
                                    f"before any simulation: there are no results", None) from None


if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from flexmb.model.model import GROUND as GROUND
    from flexmb.model.model import Cylindrical as Cylindrical
    from flexmb.model.model import Fixed as Fixed
    from flexmb.model.model import Frame as Frame
    from flexmb.model.model import Gravity as Gravity
    from flexmb.model.model import Joint as Joint
    from flexmb.model.model import Model as Model
    from flexmb.model.model import Planar as Planar
    from flexmb.model.model import PointForce as PointForce
    from flexmb.model.model import PointTorque as PointTorque
    from flexmb.model.model import Prismatic as Prismatic
    from flexmb.model.model import Revolute as Revolute
    from flexmb.model.model import RigidBody as RigidBody
    from flexmb.model.model import FlexibleBody as FlexibleBody
    from flexmb.model.model import Spherical as Spherical
    from flexmb.model.model import SpringDamper as SpringDamper
    from flexmb.model.model import Universal as Universal
    from flexmb.dynamics.solve.newton import NewtonOptions as NewtonOptions
    from flexmb.rotations.orientation import orientation as orientation
    from flexmb.dynamics.simulate import SimulationOptions as SimulationOptions
    from flexmb.dynamics.simulate import simulate as simulate
    from flexmb.dynamics.simulate import resume as resume
    from flexmb.dynamics.simulate import load_checkpoint as load_checkpoint
    from flexmb.errors import SimulationInterrupted as SimulationInterrupted
    from flexmb.results.solution import Solution as Solution
    from flexmb.dynamics.time_elements import TimeElement as TimeElement
    from flexmb.fe.mesh.femesh import FEMesh as FEMesh
    from flexmb.fe.mesh.femesh import Material as Material
    from flexmb.fe.mesh.readers import read_mesh as read_mesh
    from flexmb.fe.mesh.structured import structured_box as structured_box
    from flexmb.fe.reduction.body_data import FlexibleBodyData as FlexibleBodyData
    from flexmb.fe.reduction.body_data import build_flexible_body as build_flexible_body
    from flexmb.catalog.flexible import slider_crank_rod_data as slider_crank_rod_data
    from flexmb.catalog.flexible import spinup_beam_data as spinup_beam_data
    from flexmb.results.solution import PointView as PointView
    from flexmb.results.flexible_outputs import NodeSetView as NodeSetView
    from flexmb.linear.equilibrium import equilibrium as equilibrium
    from flexmb.linear.statics import Equilibrium as Equilibrium
    from flexmb.linear.linearize import linearize as linearize
    from flexmb.linear.linearize import Linearization as Linearization
    from flexmb.linear.eigen import eigen as eigen
    from flexmb.linear.eigen import EigenResult as EigenResult
    from flexmb.linear.campbell import campbell as campbell
    from flexmb.linear.loadpath import load_path as load_path
    from flexmb.linear.sensitivity import sensitivity as sensitivity
    from flexmb.linear.campbell import CampbellResult as CampbellResult
    from flexmb.studies import sweep as sweep
    from flexmb.studies import linear_range as linear_range
    from flexmb.studies import log_range as log_range
    from flexmb.studies import grid as grid
    from flexmb.studies import load_results as load_results

_install_moved_paths()  # old module paths (flexmb.solution, flexmb.fe.body_data, ...) keep working
_logging.getLogger(__name__).addHandler(_logging.NullHandler())
