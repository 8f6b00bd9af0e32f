"""Equilibrium, linearization and eigen analysis of a model (issue 19).

* :func:`~flexmb.linear.equilibrium.equilibrium`: static equilibrium (drives and loads held at ``t``);
* :func:`~flexmb.linear.linearize.linearize`: the linearized equations at an equilibrium or, frozen-time,
  at a point of a trajectory (:mod:`~flexmb.linear.trajectory`) (descriptor pencil ``E y' = A y`` of the
  engine's unknowns; ``M``, ``C``, ``K`` and the constraint Jacobian in the bodies' coordinates, and in
  independent coordinates: :mod:`~flexmb.linear.forms`); state-space models
  (:mod:`~flexmb.linear.statespace`);
* :func:`~flexmb.linear.eigen.eigen`: frequencies, damping ratios, modes and stability;
  :func:`~flexmb.linear.campbell.campbell` (whirl in the fixed frame), load paths, sensitivities.

Everything is read off the p = 1 time element's residual and analytic Jacobian
(:mod:`flexmb.linear.pencil`): no law is written twice.
"""
