"""The run's watch over its choice of dropped (redundant) loop equations: :class:`RedundancyMonitor`.

At every new node of a run whose closed loops have dependent equations the monitor judges the choice
(:meth:`RedundancyMonitor.quality`) and, when the kept equations are becoming singular, returns a
better :class:`~flexmb.dynamics.node.selection.Selection` (:meth:`RedundancyMonitor.node`); the run
adopts it.  The monitor owns its state (the choice made at t0, the re-selections, the last quality, the
dependences at every output node for the least-norm reactions) and its thresholds (options of the run:
``RedundancyMonitor(reselect_tol=...)``); the criteria are in :mod:`flexmb.dynamics.node.redundancy`.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from flexmb.dynamics.node.redundancy import (RESELECT_GAIN, RESELECT_TOL, drop_quality, format_labels, loop_structure,
                                             node_svd, rank_select)

log = logging.getLogger(__name__)


@dataclass(eq=False)
class RedundancyMonitor:
    """The choice of dropped equations of one run.

    Options: ``reselect_tol`` (the choice is revised when its quality falls below it, 0: never) and
    ``reselect_gain`` (and a fresh choice is that many times better), defaults
    :data:`~flexmb.dynamics.node.redundancy.RESELECT_TOL`, :data:`~flexmb.dynamics.node.redundancy.RESELECT_GAIN`.

    State: ``initial`` the labels dropped at t0, ``events`` the re-selections ``(t, before, dropped,
    quality before, quality after)``, ``last`` the last ``(quality, kappa)``, ``null`` the dependences
    ``(labels, N)`` at the last node judged, ``nulls`` those of every output node (None once a node is
    skipped)."""

    reselect_tol: float = RESELECT_TOL
    reselect_gain: float = RESELECT_GAIN
    initial: list = field(default_factory=list)
    events: list = field(default_factory=list)
    last: tuple | None = None
    null: tuple | None = None
    nulls: list | None = None

    def quality(self, cm, st, sel):
        """How good the choice ``sel`` of dropped equations is at ``st``, and a fresh choice.

        Returns ``(quality, kappa, fresh, fresh_quality)``: ``quality`` in [0, 1]
        (:func:`~flexmb.dynamics.node.redundancy.drop_quality` of the dropped rows in the left null space
        of the full scaled loop matrix: the reactions are within 1 / quality of the least-norm ones),
        ``kappa`` the full set's conditioning (its smallest kept singular value over the largest: small
        near a singular configuration of the mechanism, whatever the choice), ``fresh`` the labels
        :func:`~flexmb.dynamics.node.redundancy.rank_select` would drop here and their quality.  When the
        number of dependences at ``st`` differs from the choice's (``st`` is a singular configuration) the
        quality is not defined: ``(nan, kappa, None, 0)``."""
        if loop_structure(cm).js.size == 0:
            return 1.0, 1.0, None, 0.0
        Gs, labels, U, sv = node_svd(cm, st)
        rank, order, sv, N = rank_select(Gs, (U, sv))
        self.null = (labels, N)  # for the least-norm reactions (flexmb.dynamics.node.least_norm)
        kappa = float(sv[rank - 1] / sv[0]) if rank else 1.0
        # the choice is sel.redundant: a switched contact row is no loop equation (not in the loop matrix)
        if N.shape[1] != len(sel.redundant):
            return float("nan"), kappa, None, 0.0
        if N.shape[1] == 0:
            return 1.0, kappa, None, 0.0
        index = {lab: r for r, lab in enumerate(labels)}
        current = [index[(j, c)] for j, c in sel.redundant]
        drop = np.sort(order[rank:])
        return drop_quality(N, current), kappa, [labels[r] for r in drop], drop_quality(N, drop)

    def node(self, cm, st, sel, stats: dict, n_nodes: int, controlled: bool):
        """The choice ``sel`` at a new node of a run (``n_nodes`` recorded so far); a new
        :class:`~flexmb.dynamics.node.selection.Selection` when it is re-selected, else None.

        Records ``stats["constraint_conditioning"]`` (the full set's smallest kept singular value over
        the largest, scaled metric: small near a singular configuration) and ``stats["redundancy_quality"]``
        (:meth:`quality`: 1 when the dropped equations carry the dependences cleanly, 0 when the kept
        ones are singular and the reactions blow up like its inverse) for the elements that ended here.
        When the quality is below ``reselect_tol`` and a fresh choice here is ``reselect_gain`` times
        better, the dropped set is re-selected for the following elements (WARNING for the first, INFO
        after; ``stats["reselected"]`` = 1 on the element that ended here; :attr:`events`): the caller
        adopts the new selection and rebuilds the Jacobian pattern.  The node multipliers ``lam`` are the
        joints' full wrenches whatever is dropped, so the newly kept equations start from them; their
        reaction components are unknowns of the next element.  Keeps the dependences of every output
        node for :func:`~flexmb.dynamics.node.least_norm.add_least_norm` (not with error-controlled steps,
        ``controlled``, whose middle nodes are not seen here)."""
        if "constraint_conditioning" not in stats:
            return None
        every = loop_structure(cm).every
        if every > 1 and self.last is not None and n_nodes % every:  # large loop sets: every k-th node
            quality, kappa, fresh, fresh_q = *self.last, None, 0.0
        else:
            quality, kappa, fresh, fresh_q = self.quality(cm, st, sel)
            self.last = (quality, kappa)
        new = None
        if fresh is not None and quality < self.reselect_tol and fresh_q > self.reselect_gain * quality:
            old = list(sel.redundant)
            new = sel.changed(keep=old, drop=fresh)  # the switched rows (contacts) as they are
            self.events.append((float(st.t), old, list(new.redundant), quality, fresh_q))
            # the first re-selection is a WARNING; a mechanism that turns may need one every half turn
            (log.warning if len(self.events) == 1 else log.info)(
                "t = %.6g s: the kept closed-loop constraint equations are becoming singular (quality of the "
                "choice of redundant equations %.2e: the reactions may be %.0f x the least-norm ones); the "
                "redundant equations are re-selected: %s dropped instead of %s (quality %.2f)",
                st.t, quality, 1.0 / max(quality, 1e-300), format_labels(cm, fresh), format_labels(cm, old), fresh_q)
        if self.nulls is not None:  # the dependences at every output node, for the least-norm reactions
            if every > 1 or controlled or n_nodes - len(self.nulls) != 1:
                self.nulls = None  # not at every node (large loop sets, error-controlled steps, resumed run)
            else:
                self.nulls.append(self.null)
        n_new = len(stats["t_start"]) - len(stats["constraint_conditioning"])
        stats["constraint_conditioning"].extend([kappa] * n_new)
        stats["redundancy_quality"].extend([quality] * n_new)
        stats["reselected"].extend([0] * (n_new - 1) + [int(new is not None)] if n_new else [])
        return new

    def since(self, t0: float) -> float:
        """The time from which the current choice holds (its last re-selection, else ``t0``)."""
        return self.events[-1][0] if self.events else t0

    # ------------------------------------------------------------------ meta and checkpoints
    def meta(self, cm, sel=None) -> dict:
        """``meta`` entries of a run: ``redundant_constraints`` (the choice made at t0, [joint name,
        component]) and ``redundancy_reselections`` (t, dropped, before, quality before and after)."""

        def names(labels):
            return [[cm.model.joints[j].name, str(c)] for j, c in labels]

        return {"redundant_constraints": names(self.initial),
                "redundancy_reselections": [{"t": t, "dropped": names(new), "before": names(old), "quality": [k0, k1]}
                                            for t, old, new, k0, k1 in self.events]}

    def restore(self, cm, meta: dict):
        """Take the re-selections recorded in a run's ``meta`` (``redundant_constraints``: the choice made
        at t0, ``redundancy_reselections``: its revisions; a checkpoint written after a re-selection) and
        return the dropped labels they end with (the current choice)."""
        names = {jn.name: j for j, jn in enumerate(cm.model.joints)}

        def labels(pairs):
            return [(names[n], int(c) if c.isdigit() else c) for n, c in pairs]

        current = labels(meta.get("redundant_constraints", []))
        self.events = [(float(e["t"]), labels(e["before"]), labels(e["dropped"]), *map(float, e["quality"]))
                       for e in meta.get("redundancy_reselections", [])]
        return self.events[-1][2] if self.events else current
