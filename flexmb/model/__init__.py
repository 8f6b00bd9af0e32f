"""The model: an immutable description of bodies, joints and force elements, validated when defined.

Modules: :mod:`.model` (rigid bodies, joints, :class:`Model`), :mod:`.flexible` (flexible bodies),
:mod:`.forces` (gravity, point loads, spring-dampers), :mod:`.frames` (the ground, attachment
frames), :mod:`.checks` (input checks shared with :func:`flexmb.simulate`), :mod:`.units` (unit
labels). The public names are re-exported here (``from flexmb.model import Model`` works).
"""
from __future__ import annotations

from flexmb.model.contacts import Contact as Contact
from flexmb.model.contacts import Impulse as Impulse
from flexmb.model.flexible import FlexibleBody as FlexibleBody
from flexmb.model.forces import Gravity as Gravity
from flexmb.model.forces import PointForce as PointForce
from flexmb.model.forces import PointTorque as PointTorque
from flexmb.model.forces import SpringDamper as SpringDamper
from flexmb.model.frames import GROUND as GROUND
from flexmb.model.frames import Frame as Frame
from flexmb.model.model import Cylindrical as Cylindrical
from flexmb.model.model import Fixed as Fixed
from flexmb.model.model import Joint as Joint
from flexmb.model.model import Model as Model
from flexmb.model.model import Planar as Planar
from flexmb.model.model import Prismatic as Prismatic
from flexmb.model.model import Revolute as Revolute
from flexmb.model.model import RigidBody as RigidBody
from flexmb.model.model import Spherical as Spherical
from flexmb.model.model import Universal as Universal

__all__ = ["GROUND", "Contact", "Cylindrical", "Fixed", "FlexibleBody", "Frame", "Gravity", "Impulse", "Joint", "Model", "Planar",
           "PointForce", "PointTorque", "Prismatic", "Revolute", "RigidBody", "Spherical", "SpringDamper",
           "Universal"]
