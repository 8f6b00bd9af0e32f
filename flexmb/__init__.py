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

__version__ = "0.1.0"

from .errors import ConvergenceError as ConvergenceError
from .errors import FlexmbError as FlexmbError
from .errors import MeshImportError as MeshImportError
from .errors import ModelError as ModelError
from .model import GROUND as GROUND
from .model import Cylindrical as Cylindrical
from .model import Fixed as Fixed
from .model import Frame as Frame
from .model import Gravity as Gravity
from .model import Joint as Joint
from .model import Model as Model
from .model import Planar as Planar
from .model import PointForce as PointForce
from .model import PointTorque as PointTorque
from .model import Prismatic as Prismatic
from .model import Revolute as Revolute
from .model import RigidBody as RigidBody
from .model import Spherical as Spherical
from .model import SpringDamper as SpringDamper
from .model import Universal as Universal
from .newton import NewtonOptions as NewtonOptions
from .rotations import orientation as orientation
from .simulate import SimulationOptions as SimulationOptions
from .simulate import simulate as simulate
from .solution import Solution as Solution
from .time_elements import TimeElement as TimeElement

_logging.getLogger(__name__).addHandler(_logging.NullHandler())
