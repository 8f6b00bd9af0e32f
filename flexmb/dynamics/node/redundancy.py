"""Redundant (dependent) constraint equations of closed kinematic loops.

* set-up: which joints lie on loops (:func:`loop_joints`), the rank decision in a scaled metric at a
  generic configuration and the choice of the equations to drop (:func:`detect_redundant`,
  :func:`scaled_loop_matrix`, :func:`rank_select`); dropping them makes a new
  :class:`~flexmb.dynamics.node.selection.Selection`;
* during the run, at every node: the violation of the dropped equations (:func:`dropped_violation`;
  :func:`constraint_violation` of any set, all of them when a run resumes from a checkpoint), the full
  set's SVD (:func:`node_svd`) from which the run's :class:`~flexmb.dynamics.node.monitor.RedundancyMonitor`
  judges the choice and revises it;
* output: the dependences' null basis for the least-norm reactions (:func:`null_basis`; the reactions:
  :mod:`flexmb.dynamics.node.least_norm`).

``docs/theory.md`` (section 4, redundant constraints) states the criteria and the measured numbers.
"""
from __future__ import annotations

import logging
from types import SimpleNamespace

import numpy as np
import scipy.linalg.lapack as _lapack
from numpy.typing import NDArray

from flexmb.dynamics.node import kernels as nk
from flexmb.dynamics.node.projection import NodeFrames, node_frames, rate_blocks
from flexmb.dynamics.elements.joints import drive_targets
from flexmb.dynamics.layout import COMPONENT_NAMES
from flexmb.dynamics.node.selection import Selection

log = logging.getLogger(__name__)


def loop_joints(cm) -> NDArray:
    """Indices of the joints that lie on closed kinematic loops (the ground is a node).

    Joints of a tree (bridges of the body graph) can never be redundant; only the loop joints
    need a rank test.  Leaves of the graph are pruned until only cycles (and paths between them)
    remain.  Joints whose equations are switched by another stage (a contact's row,
    :attr:`~flexmb.dynamics.node.selection.Selection.switched`) are not edges of the graph: a contact
    row is on while the contact rests and off while it is open, whatever the loops' dependences, so it
    is never a candidate to drop as redundant (nor a part of the dependences the monitor judges).
    """
    from collections import deque

    n_nodes = cm.nb + 1
    alive = np.ones(cm.nj, bool)
    alive[[j for j, _ in Selection.full(cm).switched]] = False
    ja, jb = cm.jnt_a, cm.jnt_b
    deg = np.bincount(np.concatenate([ja[alive], jb[alive]]), minlength=n_nodes)
    incident: list[list[int]] = [[] for _ in range(n_nodes)]
    for j in np.nonzero(alive)[0].tolist():
        incident[ja[j]].append(j)
        incident[jb[j]].append(j)
    queue = deque(np.nonzero(deg == 1)[0].tolist())
    while queue:
        v = queue.popleft()
        if deg[v] != 1:
            continue
        for j in incident[v]:
            if alive[j]:
                alive[j] = False
                other = jb[j] if ja[j] == v else ja[j]
                deg[v] -= 1
                deg[other] -= 1
                if deg[other] == 1:
                    queue.append(other)
                break
    return np.nonzero(alive)[0]


#: a constraint set whose smallest singular value in the scaled metric (:func:`scaled_loop_matrix`),
#: relative to the largest, is below this is dependent: round-off of exact dependence (the X3 rod's
#: out-of-plane interface entries, 1e-13 of the in-plane ones) sits far below, a genuinely
#: independent set far above (the loops of the examples: 1e-2 .. 1e-1)
DEPENDENT_TOL = 1e-8
#: an independent set this close to dependent (below it, above DEPENDENT_TOL) is kept with a WARNING:
#: its equations hold the motion through lever arms of < 1e-6 of the natural ones
NEAR_DEPENDENT_TOL = 1e-6
#: the choice of the dropped equations is revised when its quality (:meth:`~flexmb.dynamics.node.monitor.RedundancyMonitor.quality`: 1 for
#: a kept set as well conditioned as the full set's dependence allows, 0 for a singular one; the
#: reactions are within 1 / quality of the least-norm ones) falls below RESELECT_TOL and a fresh
#: choice is RESELECT_GAIN times better
RESELECT_TOL = 0.25
RESELECT_GAIN = 2.0
#: two rows of the left null space whose squared leverages (orthonormal basis: O(1)) differ by less than
#: this are a tie in the choice of the dropped rows, broken by the row order (:func:`_pivot_rows`):
#: round-off of the SVD is ~1e-15, a real preference in a non-symmetric loop >> 1e-9
TIE_TOL = 1e-9
#: the loop matrix is monitored at every node up to this many entries, every k-th node above
MONITOR_SIZE = 2e5
#: modal (non-rigid) velocity columns are scaled by their own interface magnitude, floored at this
#: fraction of the body's largest one (a mode that barely moves the interfaces stays small)
MODAL_FLOOR = 1e-3


def column_magnitudes(cm, st, frames=None) -> NDArray:
    """Natural magnitude ``(nv,)`` of each body velocity coordinate as seen by the joints: the largest
    entry of the attachments' velocity maps ``nu = B w`` in that column, translational rows divided
    by the model length ``L``: 1/L for a rigid translation (so its scaled unit is L per second),
    ``max(1, |r|/L)`` for a rotation, ``max(|Phi_t|/L, |Phi_r|)`` over the interfaces for a modal
    coordinate (floored at :data:`MODAL_FLOOR` of the body's largest modal one).  Columns no joint
    sees get 1.  ``frames``: the node's :class:`~flexmb.dynamics.node.projection.NodeFrames` (their
    velocity maps ``B``), computed (and kept on the node) when not given."""
    fr = frames if frames is not None else _frames(cm, st)
    rigid, body, _ = _column_classes(cm)
    mag = np.empty(cm.nv)
    nk.column_magnitudes(fr.Ba, fr.ca, fr.wa, fr.Bb, fr.cb, fr.wb, float(cm.length_scale), rigid, body, cm.nb,
                         MODAL_FLOOR, mag)
    return mag


def _frames(cm, st, sel=None):
    """The joints' frames at ``st``: a node's are kept on it (:func:`~flexmb.dynamics.node.projection.node_frames`,
    shared with the node projection); a made-up configuration (a namespace of ``x``, ``R``) gets its own."""
    return node_frames(cm, st, sel) if hasattr(st, "extra") else NodeFrames(cm, st, sel)


def _column_classes(cm):
    """``(rigid, body, modal)``: the velocity columns that are a body's first six (rigid motion), the body of
    each column, the others (modal); ``(nv,)`` each, kept in ``cm.cache.loops``."""
    loops = loop_structure(cm)
    if loops.columns is None:
        rigid = np.zeros(cm.nv, bool)
        rigid[(cm.vel_off[:, None] + np.arange(6)).reshape(-1)] = True
        # body of each column: the last body offset at or before it
        order = np.argsort(cm.vel_off)
        body = order[np.searchsorted(cm.vel_off[order], np.arange(cm.nv), side="right") - 1] if cm.nb \
            else np.zeros(0, int)
        loops.columns = (rigid, body, ~rigid)
    return loops.columns


def _row_structure(cm, fr, js, sel):
    """The fixed part of the loop matrix (:func:`scaled_loop_matrix`) of the joints ``js`` under the selection ``sel``: the rows'
    joints and components ``jj, cc``, their labels and row scales (``1/L`` on translations), the velocity
    columns the rows touch (increasing), and per side (B, A) the position among those columns of each
    row's entries ``(n_rows, cw)`` (-1: unused); kept in ``cm.cache.loops`` by the selection's key and
    ``js`` (the attachments' velocity columns are fixed per model)."""
    loops = loop_structure(cm)
    key = (sel.key, np.asarray(js, dtype=np.int64).tobytes())
    hit = loops.rows.get(key)
    if hit is None:
        mask = np.concatenate([sel.constrained, sel.universal[:, None]], axis=1)
        on = np.zeros(cm.nj, bool)
        on[np.asarray(js, dtype=int)] = True
        mask &= on[:, None]
        jj, cc = np.nonzero(mask)
        labels = [(int(j), int(c) if c < 6 else "cross") for j, c in zip(jj, cc)]
        rs = np.array([1.0 / cm.length_scale if isinstance(c, int) and c < 3 else 1.0 for _, c in labels])
        sides = []
        for width, B, vcols in ((fr.wb, fr.Bb, fr.cb), (fr.wa, fr.Ba, fr.ca)):
            used = np.arange(B.shape[-1])[None, :] < width[jj, None]
            sides.append((np.broadcast_to(np.arange(jj.size)[:, None], used.shape)[used], used, vcols[jj][used]))
        cols = np.unique(np.concatenate([c for _, _, c in sides]))
        dense = []  # per side: the position among ``cols`` of each row's entry ``(n_rows, cw)``, -1 unused
        for _, used, c in sides:
            pos = np.full(used.shape, -1, dtype=np.int64)
            pos[used] = np.searchsorted(cols, c)
            dense.append(pos)
        jj, cc = (np.ascontiguousarray(a, dtype=np.int64) for a in (jj, cc))
        hit = loops.rows[key] = (jj, cc, labels, rs, cols.astype(np.int64), dense)
    return hit


def scaled_loop_matrix(cm, st, js, sel=None):
    """The velocity constraint matrix of joints ``js`` in the scaled metric, dense:
    ``Gs = Dr G Dc`` with ``Dr = 1/L`` on translational rows, 1 on rotational ones, and
    ``Dc = 1 / column_magnitudes`` so that every entry is a dimensionless rate of O(1) when it is a
    real lever and round-off when it is round-off.  Returns ``(Gs, labels, cols, colscale)`` with
    ``cols`` the velocity columns touched and ``colscale (nv,)`` the column scaling ``Dc``.  ``sel``: the
    kept equations (:class:`~flexmb.dynamics.node.selection.Selection`; None: the model's full set).

    The rows, their labels and order, and the columns are those of
    :func:`~flexmb.dynamics.node.constraints.velocity_constraint_matrix` (its sparse matrix's stored entries),
    from the same rate blocks (:func:`~flexmb.dynamics.node.projection.rate_blocks`) and velocity maps,
    written and scaled in one compiled call (:func:`flexmb.dynamics.node.kernels.scaled_loop_values`):
    0.04 ms for X3's 18-row loop set (load 3), against 0.14 ms in numpy and 1.2 ms through the sparse
    assembly."""
    fr = _frames(cm, st, sel)
    sel = sel if sel is not None else Selection.full(cm)
    jj, cc, labels, rs, cols, (posb, posa) = _row_structure(cm, fr, js, sel)
    Cb, Ca = rate_blocks(fr)
    rigid, body, _ = _column_classes(cm)
    Gs, colscale = np.empty((jj.size, cols.size)), np.empty(cm.nv)
    # (C @ B: numpy's product, as the sparse constraint matrix has it, velocity_constraint_matrix)
    nk.scaled_loop_values(Cb @ fr.Bb, Ca @ fr.Ba, jj, cc, posb, posa, rs, cols, fr.Ba, fr.ca, fr.wa, fr.Bb, fr.cb,
                          fr.wb, float(cm.length_scale), rigid, body, cm.nb, MODAL_FLOOR, colscale, Gs)
    return Gs, list(labels), cols, colscale


def rank_select(Gs, svd=None):
    """Rank decision and choice of the rows to drop, from the SVD of ``Gs`` ``(n_rows, n_cols)``.

    The rank counts the singular values above :data:`DEPENDENT_TOL` of the largest; the left null
    space ``N (n_rows, n_dep)`` (``N^T Gs = 0``) holds the exact dependences.  The rows to drop are
    chosen from ``N`` by a QR with column pivoting of ``N^T`` (greedy: the ``n_dep`` rows whose block
    ``N[D]`` has the largest volume), ties broken by the row order (:func:`_pivot_rows`).  Rows that take part in no exact dependence (e.g. an in-plane
    equation near a change point, nearly but not exactly dependent) are never chosen.  Returns
    ``(rank, order, sv, N)``: ``order`` lists the kept rows first and the dropped ones last.
    """
    n = Gs.shape[0]
    if Gs.size == 0:
        return 0, np.arange(n), np.zeros(0), np.zeros((n, n))
    U, sv = svd if svd is not None else np.linalg.svd(Gs, full_matrices=True)[:2]
    rank = int(np.sum(sv > DEPENDENT_TOL * max(sv[0], 1e-300)))
    N = U[:, rank:]
    if N.shape[1] == 0:
        return rank, np.arange(n), sv, N
    drop = _pivot_rows(N)
    keep = np.setdiff1d(np.arange(n), drop)
    return rank, np.concatenate([keep, drop]), sv, N


def _pivot_rows(N) -> NDArray:
    """The ``n_dep`` rows of ``N (n_rows, n_dep)`` (orthonormal columns) to drop, sorted: a QR with row
    pivoting (greedy largest volume of ``N[D]``) whose ties are broken by the row order.

    At each step the row with the largest norm of its part orthogonal to the rows already chosen is
    taken; rows whose squared norm is within :data:`TIE_TOL` of the largest (``N`` is orthonormal: the
    norms are O(1) leverages) count as equal and the first of them is taken.  A symmetric loop has exact
    ties (the parallelogram: pairs and fours of rows of equal leverage at every angle; Bricard's
    mechanism: all 30 rows at 1/30); LAPACK's pivoted QR broke them by the SVD's round-off (the choice
    depended on the BLAS kernels).  Invariant under ``N -> N Q`` (norms of the projector's rows)."""
    A = np.array(N, dtype=float)
    free = np.ones(A.shape[0], bool)
    chosen = []
    for _ in range(A.shape[1]):
        norms = np.where(free, np.einsum("ij,ij->i", A, A), -np.inf)
        r = int(np.argmax(norms >= norms.max() - TIE_TOL))  # the first of the (near-)largest
        chosen.append(r)
        free[r] = False
        v = A[r] / np.sqrt(norms[r])
        A -= np.outer(A @ v, v)
    return np.sort(np.array(chosen, dtype=int))


def drop_quality(N, drop) -> float:
    """Smallest singular value of ``N[drop]`` (``N`` orthonormal): 1 when the dropped rows carry the
    dependences cleanly, 0 when the kept rows are singular.  With the dropped reaction components set
    to zero, the reactions differ from the least-norm ones by at most |their dropped part| / this."""
    if N.shape[1] == 0:
        return 1.0
    return float(np.linalg.svd(N[np.asarray(drop)], compute_uv=False)[-1])


def conditioning(Gs) -> float:
    """Smallest over largest singular value of a (full-row-rank) scaled constraint matrix (1 if empty)."""
    if Gs.shape[0] == 0:
        return 1.0
    sv = np.linalg.svd(Gs, compute_uv=False)
    if sv.size < Gs.shape[0]:
        return 0.0
    return float(sv[-1] / max(sv[0], 1e-300))


def _dependent_rows(cm, st, js, tol: float = DEPENDENT_TOL):
    """Rank decision on the loop constraints at ``st`` in the scaled metric:
    ``(Gs, labels, cols, rank, pivots, colscale)``."""
    Gs, labels, cols, colscale = scaled_loop_matrix(cm, st, js)
    rank, piv, _, _ = rank_select(Gs)
    return Gs, labels, cols, rank, piv, colscale


#: relative size of the step to the generic neighbour (:func:`_generic_neighbour`)
NEIGHBOUR_STEP = 0.1 * np.sqrt(DEPENDENT_TOL)


def _generic_neighbour(cm, st, Gs, cols, colscale, seed: int = 0):
    """A configuration near ``st`` reached along a random motion that the constraints allow at
    ``st`` (first order): at a singular configuration this leaves the singularity.

    The step (:data:`NEIGHBOUR_STEP`, 1e-5 of the model's size) sits between the two effects it must
    separate: at a singular configuration the lost singular value returns in proportion to the step
    (1e-5, far above :data:`DEPENDENT_TOL`), while the first-order step leaves the constraint manifold by
    the square of it, which can make equations that are dependent along the whole motion look
    independent (an over-constrained mechanism such as Bricard's: 1.3e-8 of the largest singular
    value, above the tolerance, at a step of 1e-3; ~1e-12 at 1e-5)."""
    from flexmb import rotations as rot

    rng = np.random.default_rng(seed)
    _, sv, vt = np.linalg.svd(Gs, full_matrices=True)
    rank = int(np.sum(sv > DEPENDENT_TOL * max(sv.max(initial=0.0), 1e-300)))
    null = vt[rank:]
    if null.shape[0] == 0:
        return None
    dw = np.zeros(cm.nv)
    dw[cols] = (rng.standard_normal(null.shape[0]) @ null) * colscale[cols]  # undo the column scaling
    first6 = (cm.vel_off[:, None] + np.arange(6))
    d6 = dw[first6]
    eps = NEIGHBOUR_STEP / max(np.abs(d6[:, 3:]).max(initial=0.0), np.abs(d6[:, :3]).max(initial=0.0) / cm.length_scale, 1e-300)
    return SimpleNamespace(x=st.x + eps * d6[:, :3], R=rot.exp(eps * d6[:, 3:]) @ st.R, extra=getattr(st, "extra", {}))


def format_labels(cm, labels) -> str:
    """``"joint:component, ..."`` for (joint, component) labels."""
    return ", ".join(f"{cm.model.joints[j].name}:{COMPONENT_NAMES[c] if isinstance(c, int) else c}" for j, c in labels)


def _involved(cm, Gs, labels, n: int = 6) -> str:
    """The rows that carry the smallest singular value of ``Gs`` (the near-dependent combination)."""
    u, _, _ = np.linalg.svd(Gs, full_matrices=False)
    w = np.abs(u[:, -1])
    rows = [r for r in np.argsort(-w)[:n] if w[r] > 0.05 * w.max()]
    return format_labels(cm, [labels[r] for r in sorted(rows)])


def detect_redundant(cm, st, t0: float = 0.0, tol: float = DEPENDENT_TOL):
    """Dependent constraint equations of the model, decided at a generic configuration.

    Only joints on closed loops are examined, in the scaled metric of :func:`scaled_loop_matrix`
    (rows and columns at their natural magnitudes, modal columns by their interface shapes): the
    rank counts the singular values above ``tol`` (:data:`DEPENDENT_TOL`) of the largest, and a
    QR with column pivoting of its left null space chooses the rows to drop (ties by the row order).  When equations are
    dependent at ``st``, the test is repeated at a nearby configuration reached along a random
    admissible motion: if the rank is higher there, ``st`` is a singular configuration (e.g. a
    parallelogram four-bar at its change point) and only the generically dependent equations are
    reported (a WARNING names the singularity).  A kept set that is independent but barely (smallest
    singular value below :data:`NEAR_DEPENDENT_TOL` of the largest) is reported with a WARNING
    naming the equations involved.

    Returns
    -------
    dependent : list of (joint, component)
        Labels of the dependent rows (empty if the constraints are independent).
    inconsistent : list of (joint, component)
        Dependent rows whose prescribed rate (drives) contradicts the independent rows: such a
        model has no motion at all.
    """
    if cm.nj == 0:
        return [], []
    js = loop_structure(cm).js  # (kept in cm.cache: the loop matrix's row structure reads it too)
    if js.size == 0:
        return [], []
    n_rows = int(np.count_nonzero(cm.jnt_constrained[js]) + np.count_nonzero(cm.jnt_universal[js]))
    if n_rows * 6 * (cm.nb + 1) > 2e7:
        log.warning("redundancy check skipped: %d loop constraints on %d bodies is too large for a dense test",
                    n_rows, cm.nb)
        return [], []
    Gs, labels, cols, colscale = scaled_loop_matrix(cm, st, js)
    if conditioning_bound(Gs) >= 2.0 * NEAR_DEPENDENT_TOL:
        # independent (rank_select: DEPENDENT_TOL) and not barely (NEAR_DEPENDENT_TOL): the bound proves the
        # SVD's ratio above both (its round-off, 4e-14 / (2e-6)^2 = 1 % relative, is inside the factor 2),
        # which the two SVDs below would decide (X3 at t0: 0.03; 0.15 ms of SVDs)
        return [], []
    rank, piv, _, _ = rank_select(Gs)
    if rank < Gs.shape[0]:
        near = _generic_neighbour(cm, st, Gs, cols, colscale)
        if near is not None:
            Gn, labels_n, cols_n, rank_n, piv_n, _ = _dependent_rows(cm, near, js, tol)
            if rank_n > rank and labels_n == labels:
                lost = sorted(set(piv[rank:].tolist()) - set(piv_n[rank_n:].tolist()))
                log.warning(
                    "the initial configuration is singular: %d constraint equation(s) are dependent there but not "
                    "in the neighbouring configurations (candidates: %s); redundancy is decided at a generic "
                    "configuration. The motion may bifurcate at this position", rank_n - rank,
                    format_labels(cm, [labels[r] for r in lost]) or "-")
                Gs, rank, piv = Gn, rank_n, piv_n
    kept = sorted(piv[:rank].tolist())
    kappa = conditioning(Gs[kept])
    if kappa < NEAR_DEPENDENT_TOL:
        log.warning(
            "the joint constraints on closed loops are barely independent: the smallest singular value of the "
            "kept equations is %.2e of the largest (scaled by the natural lengths and interface shapes); the "
            "equations involved (%s) hold the motion through lever arms of round-off size and will distort it. "
            "Check the joints (a revolute where a spherical or universal joint belongs?) or the interface modes",
            kappa, _involved(cm, Gs[kept], [labels[r] for r in kept]))
    dep = sorted(piv[rank:].tolist())
    if not dep:
        return [], []
    _, rate = drive_targets(cm, np.array([t0]))
    rs = np.array([1.0 / cm.length_scale if isinstance(c, int) and c < 3 else 1.0 for _, c in labels])
    target = np.array([rate[j, c, 0] if isinstance(c, int) else 0.0 for j, c in labels]) * rs
    # dependent rows are combinations of the independent ones: their rates must be too
    C = np.linalg.lstsq(Gs[kept].T, Gs[dep].T, rcond=None)[0]
    mismatch = np.abs(target[dep] - C.T @ target[kept])
    scale = max(np.abs(target).max(initial=0.0), 1.0)
    inconsistent = [labels[dep[k]] for k in np.nonzero(mismatch > 1e-8 * scale)[0]]
    return [labels[r] for r in dep], inconsistent


def dropped_violation(cm, st, sel):
    """Position-level violation of the equations the selection ``sel`` drops as redundant at a node
    (:func:`constraint_violation` of ``sel.redundant``: a switched-off contact row is open, its gap is
    not implied by the others), or None when nothing was dropped so."""
    if not sel.redundant:
        return None
    return constraint_violation(cm, st, sel.redundant)


def constrained_labels(cm) -> list:
    """Every constraint equation of the model's joints as ``(joint, component)`` labels (component
    0..5 of the relative coordinates, ``"cross"`` for a universal joint's cross condition)."""
    jj, cc = np.nonzero(cm.jnt_constrained)
    return [(int(j), int(c)) for j, c in zip(jj, cc)] + [(int(j), "cross") for j in np.nonzero(cm.jnt_universal)[0]]


def constraint_violation(cm, st, labels):
    """Position-level violation of the constraint equations ``labels`` (``(joint, component)``) at the
    node ``st``: the largest ``(value, joint, component)`` relative to the assembly tolerance
    (lengths scaled by the model size); ``(0.0, None, None)`` for no labels.

    Measured twice and the larger kept: on the joint's relative coordinates in the state (``s``,
    ``acc``) and on the geometry of its attachment frames at the node (``R_A^T (x_B - x_A)``, and the
    relative rotation ``R_A^T R_B`` against the state's ``Rr``), which goes through the attachments and
    so sees a flexible body's interface motion (modal coordinates) like a rigid one's."""
    if not labels:
        return (0.0, None, None)
    from flexmb import rotations as rot

    tgt, _ = drive_targets(cm, np.array([st.t]))
    q = np.concatenate([st.s, st.acc], axis=1)
    js = np.array(sorted({j for j, _ in labels}))
    xa, Ra = cm.att_a.node_pose(cm, st)
    xb, Rb = cm.att_b.node_pose(cm, st)
    RAt = np.swapaxes(Ra[js], 1, 2)
    geo = np.zeros((cm.nj, 6))
    geo[js, :3] = np.einsum("jde,je->jd", RAt, xb[js] - xa[js])
    geo[js, 3:] = st.acc[js] + rot.axial(np.swapaxes(st.Rr[js], 1, 2) @ RAt @ Rb[js])
    worst = (0.0, None, None)
    tol = cm.model.assembly_tol
    for j, c in labels:
        if isinstance(c, int):
            dev = max(abs(q[j, c] - tgt[j, c, 0]), abs(geo[j, c] - tgt[j, c, 0]))
            v = dev / (tol * (cm.length_scale if c < 3 else 1.0))
        else:  # universal cross condition: x_A . y_B
            v = max(abs(st.Rr[j, 0, 1]), abs(float(Ra[j][:, 0] @ Rb[j][:, 1]))) / tol
        if v > worst[0]:
            worst = (v, j, c)
    return worst


# ---------------------------------------------------------------------------------------------- during the run
def loop_structure(cm):
    """The model's loop joints ``js`` (:func:`loop_joints`) and ``every``: the loop matrix is examined at
    every node up to :data:`MONITOR_SIZE` entries, at every ``every``-th node above (kept in ``cm.cache``)."""
    hit = cm.cache.loops
    if hit is None:
        js = loop_joints(cm) if cm.nj else np.zeros(0, int)
        n_rows = int(np.count_nonzero(cm.jnt_constrained[js]) + np.count_nonzero(cm.jnt_universal[js]))
        every = int(np.ceil(n_rows * 6 * (cm.nb + 1) / MONITOR_SIZE)) if js.size else 1
        # (rows, columns: the loop matrix's fixed structure, :func:`_row_structure`, :func:`_column_classes`)
        hit = cm.cache.loops = SimpleNamespace(js=js, every=max(every, 1), rows={}, columns=None)
    return hit


def full_loop_matrix(cm, st):
    """The scaled loop matrix of the model's full constraint set (nothing dropped) and its labels."""
    Gs, labels, _, _ = scaled_loop_matrix(cm, st, loop_structure(cm).js)
    return Gs, labels


def conditioning_bound(Gs) -> float:
    """A lower bound of ``sigma_min / sigma_max`` of ``Gs (n_rows, n_cols)``, ``n_rows <= n_cols``, without
    an SVD (0.0 when it proves nothing: more rows than columns, a Cholesky that fails, NaN):
    ``sigma_max <= |Gs|_F`` and ``sigma_min^2 = lambda_min(Gs Gs^T) = 1 / |L^-1|_2^2 >= 1 / |L^-1|_F^2``
    with ``Gs Gs^T = L L^T`` (Cholesky), so ``sigma_min / sigma_max >= 1 / (|Gs|_F |L^-1|_F)``.  The bound is
    at most ``n_rows`` times below the ratio (X3's 18 x 23 loop set: 0.032 against 0.155).  Round-off: the
    computed Gram matrix and its Cholesky are the exact ones of ``Gs Gs^T + E``, ``|E|_2 <~ (n_cols + n_rows^2)
    eps |Gs|_F^2`` (4e-14 |Gs|_F^2 for X3), which moves ``lambda_min / |Gs|_F^2`` by as much: a computed bound
    ``b`` with ``b^2 >> 4e-14`` holds to ``O(4e-14 / b^2)`` relative.  One Gram product and two LAPACK calls
    (0.03 ms for X3's set against 0.09 ms for its SVD)."""
    n, m = Gs.shape
    if n == 0 or n > m:
        return 0.0
    L, info = _lapack.dpotrf(Gs @ Gs.T, lower=1, clean=1)
    if info != 0:
        return 0.0
    Li, info = _lapack.dtrtri(L, lower=1)
    if info != 0:
        return 0.0
    g, li = Gs.ravel(), Li.ravel()
    b = 1.0 / np.sqrt(float(g @ g) * float(li @ li))
    return b if b >= 0.0 else 0.0  # (NaN: nothing proven)


def node_svd(cm, st, matrix=None):
    """``(Gs, labels, U, sv)``: the scaled loop matrix of the full constraint set at the node ``st`` and
    its SVD (``full_matrices=True``), remembered for the last node asked about (by identity, in
    ``cm.cache``): the singular-node check of an element's end node (:mod:`flexmb.dynamics.variants.singular_node`)
    and the redundancy monitor at that node (:mod:`flexmb.dynamics.node.monitor`) share one SVD.
    ``matrix``: ``(Gs, labels)`` of this node (:func:`full_loop_matrix`) when the caller has them."""
    memo = cm.cache.node_svd
    if memo is not None and memo[0] is st:
        return memo[1]
    Gs, labels = matrix if matrix is not None else full_loop_matrix(cm, st)
    U, sv = np.linalg.svd(Gs, full_matrices=True)[:2] if Gs.size else (np.eye(Gs.shape[0]), np.zeros(0))
    cm.cache.node_svd = (st, (Gs, labels, U, sv))
    return cm.cache.node_svd[1]


def null_basis(cm, st):
    """``(labels, N)``: the full loop set's row labels and its left null space ``N (n_rows, n_dep)``
    (orthonormal, scaled metric) at ``st``."""
    Gs, labels = full_loop_matrix(cm, st)
    return labels, rank_select(Gs)[3]


def pad_monitor_stats(stats: dict) -> None:
    """Give the elements recorded since the last monitored node NaN monitor entries (a run stopped
    before :meth:`~flexmb.dynamics.node.monitor.RedundancyMonitor.node` saw their end node), so that the partial results stay consistent."""
    if "constraint_conditioning" not in stats:
        return
    n_new = len(stats["t_start"]) - len(stats["constraint_conditioning"])
    for key, fill in (("constraint_conditioning", np.nan), ("redundancy_quality", np.nan), ("reselected", 0)):
        stats[key].extend([fill] * n_new)
