"""Body types of the dynamics.  Each body type is a class whose instance is a *group*: all bodies
of that type in a model, evaluated as one batch.  The engine talks to a group only through this
contract (``RigidBodies`` in :mod:`.rigid` is the reference implementation):

===================================  ===========================================================
``kind``, ``slots``, ``nv``           name; unknowns per internal point; velocity coordinates per body
``equations``                         first slot -> equation name (error messages)
``local_index(bodies)``               model body indices -> positions in the group
``initial(model)``                    ``x, R, w``: reference-point position, rotation, velocities
``unpack(ek, Ug)``                    the group's unknowns ``Ug (n, p, slots)`` -> kinematics object
``residual(ek, kin, r, trip, g)``     the group's own rows and Jacobian blocks (gravity included)
``attach_data / attach_pose /``       the attachments contract (:mod:`flexmb.dynamics.elements.attachments`)
``attach_velocity / wrench_map``
``node_attach_pose``,                 the same at a time node (set-up, projection, output)
``node_velocity_map``
optional ``node_attach``              ``node_attach_pose`` and ``node_velocity_map`` in one call:
                                      ``(x (m,3), R (m,3,3), cols (m,c), B (m,6,c))`` (the node kernels,
                                      :mod:`flexmb.dynamics.node.kernels`, read ``B`` padded to the
                                      widest body type; without it both methods are asked)
``mass_blocks``, ``inverse_mass_blocks``, ``momenta``, ``velocities``, ``kinetic_energy``,
``gravity_potential``, ``frame_output``         node-level physics
``end_values``, ``predict_cold``, ``predict_warm``, ``scales``   time marching
optional: ``initial_extra()`` (body-type end values in ``ElementStart.extra``, returned as a
4th item by ``end_values``), ``strain_energy(st)``, ``node_output(st, w)`` (recorded per body),
``node_frames_energy(st, w)`` (``frame_output`` and ``kinetic_energy`` in one call)
===================================  ===========================================================

Nothing outside a body module assumes a rigid body's unknowns or its 6 x 6 mass matrix.
``residual`` may be called with ``trip.jacobian`` False (Newton reusing a factorization): the rows
must be the same bit for bit; the Jacobian blocks are ignored and need not be computed.

The joint and force laws never see a body type: they get the attachments' poses, velocities and
Jacobian blocks through ``attach_pose`` / ``attach_velocity`` and hand their wrenches back through
``wrench_map`` (:mod:`flexmb.dynamics.elements.attachments`).  Each body type computes its values in
compiled kernels of its own (rigid: :mod:`.rigid_kernels`); the shared pieces of a floating frame are
:func:`.rigid.frame_end_values` (end values) and :func:`flexmb.dynamics.march.kernels.extrapolate`
(warm predictor).  A model of :class:`RigidBodies` and :class:`FlexibleBodies` is evaluated by the fused evaluator
(:mod:`flexmb.dynamics.solve.fused`), which calls the same kernels directly (where it applies:
:meth:`~flexmb.dynamics.solve.fused.FusedEvaluator.applies`); every other model goes through this
contract (:mod:`flexmb.dynamics.solve.evaluation`), which also records the Jacobian's pattern.
"""
from __future__ import annotations

from flexmb.dynamics.bodies.modal import FlexibleBodies
from flexmb.dynamics.bodies.rigid import RigidBodies

#: body types in storage order: model body class name -> group class
BODY_TYPES: dict[str, type] = {"RigidBody": RigidBodies, "FlexibleBody": FlexibleBodies}


def register_body_type(model_class_name: str, group_class: type) -> None:
    """Register the group class that evaluates bodies of ``model_class_name`` (a class name of a
    model body element)."""
    BODY_TYPES[model_class_name] = group_class
