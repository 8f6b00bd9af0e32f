"""The node reactions of a model with dropped (dependent) loop equations, independent of which
equations were dropped: the least-norm reactions (:func:`least_norm_reactions`, added to a Solution by
:func:`add_least_norm`) and the full constraint set in which a run's reactions are recovered after a
re-selection (:func:`reaction_set`).  The choice itself: :mod:`flexmb.dynamics.node.redundancy`."""
from __future__ import annotations

import numpy as np

from flexmb.dynamics.node.selection import Selection


def least_norm_reactions(cm, labels, N, force, moment):
    """The least-norm reactions of a node: ``force``, ``moment`` ``(nj, 3)`` (frame A, any particular
    solution of the statically indeterminate loops) minus their component in the dependences ``N``
    (:func:`flexmb.dynamics.node.redundancy.null_basis`), in the scaled metric (forces x L, moments).  The bodies' generalized forces
    ``G^T r`` are unchanged (``N^T Gs = 0``), so this is the same motion's reaction, independent of
    which equations were dropped.  Returns new ``(force, moment)``; universal cross rows are not
    handled (returned unchanged)."""
    force, moment = np.array(force, dtype=float), np.array(moment, dtype=float)
    if N.shape[1] == 0 or any(not isinstance(c, int) for _, c in labels):
        return force, moment
    j = np.array([j for j, _ in labels])
    c = np.array([c for _, c in labels])
    t = c < 3
    r = np.where(t, force[j, np.minimum(c, 2)], moment[j, np.maximum(c - 3, 0)])
    rs = np.where(t, 1.0 / cm.length_scale, 1.0)
    rh = r / rs
    rh -= N @ (N.T @ rh)
    r = rh * rs
    force[j[t], c[t]] = r[t]
    moment[j[~t], c[~t] - 3] = r[~t]
    return force, moment


def reaction_set(cm, monitor, sel):
    """The constraint selection in which to recover a run's node reactions: after a re-selection (the
    run's ``monitor`` has events), the full constraint set (a component dropped now was kept before: its
    reaction comes from the impulses, not from a zero law; while it was dropped its impulse was zero
    anyway); otherwise the run's selection ``sel``."""
    return Selection.full(cm) if monitor is not None and monitor.events else sel


def add_least_norm(cm, sol, monitor, sel, recover=None):
    """Add the least-norm node reactions of a model with dropped equations to ``sol.extra``
    (``joint_force_least_norm``, ``joint_moment_least_norm``, (nt, nj, 3), frame A like
    ``joint_force``; :func:`least_norm_reactions`), independent of the choice of dropped equations.
    Only when the dependences are known at every output node (``monitor.nulls``, the run's
    :class:`~flexmb.dynamics.node.monitor.RedundancyMonitor`; ``sel`` its current selection); returns
    ``sol``.  ``recover(selection) -> (force, moment)``, called with the full set, recovers the dropped
    components from the impulses too (the reported ones take their zero law at the node: in a turning
    frame A that differs between choices by the recovery's O(h^2p), 2e-4 N m on the parallelogram)."""
    if (monitor is None or not sel.redundant or monitor.nulls is None or len(monitor.nulls) != sol.t.size
            or sol.joint_force is None):
        return sol
    force, moment = sol.joint_force, sol.joint_moment
    if recover is not None and not monitor.events:  # after a re-selection they are recovered with the full set
        force, moment = recover(Selection.full(cm))
    out = [least_norm_reactions(cm, lab, N, f, m) for (lab, N), f, m in zip(monitor.nulls, force, moment)]
    sol.extra.update(sol._checked_extra({"joint_force_least_norm": np.array([f for f, _ in out]),
                                         "joint_moment_least_norm": np.array([m for _, m in out])}))
    return sol
