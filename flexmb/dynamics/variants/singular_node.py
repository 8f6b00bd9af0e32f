"""Time elements that start or end on a singular configuration of a closed loop (a change point on a
time node; issue 8 section 2, docs/theory.md section 4).

The cause (measured).  At a change point of a loop (a parallelogram four-bar's cranks aligned with the
ground link) the two branches of the constraint manifold cross: the parallelogram motion and the
anti-parallelogram one.  The kept loop constraint rows lose a rank; their left null vector ``n``
(scaled metric of :func:`flexmb.dynamics.node.redundancy.scaled_loop_matrix`) is a *self-stress*: reactions
in equilibrium with no load.  When a time node falls on the change point, the element that ends there
imposes the constraints at its end node, where the row ``n^T g`` has a zero gradient: the end
configuration along the second branch's tangent is fixed only by the quadratic part of that row, which
has two roots (one on each branch) as far apart as the node is from the change point.  Parallelogram,
theta = 0 at 1e-8 rad from the node t = 20 h (p = 3, h = 0.005): Newton converged in two iterations to
the *anti-parallelogram* root (cranks at +1e-8 and -1e-8 rad, coupler turned by -1e-8 rad, 2.5e-9 m from
the exact motion), and the next element, started off the branch the momenta follow, could only return
by reactions of 3e3 x their scale along ``n`` and diverged 3.5 elements later.  The element Jacobian
shows it: smallest scaled singular value 6e-16, left vector the end node's ``n^T`` position rows, right
vector ``n^T Qbar`` at the last Gauss point.  The element that starts on the node has its own
degeneracy: the reactions along ``n`` act on the motion through levers that vanish at its start
(singular values 1.4e-15, 4e-9, 2.4e-8 against 7e-7 for the rest); left to Newton they took +-9300 N at
the Gauss points (node reactions 4308 N against the physical 34.5 N, p = 3, h = 0.01) or stalled.

The treatment, with *bordered* systems of the element's size (:func:`bordered_system`: row combinations
``Y^T F`` replaced by ``Z^T (U - U0)``), in two checks around the solve and end-values stages of
:mod:`flexmb.dynamics.step.advance` (:func:`solve`: the start node, before Newton; :func:`check_end`: the
end node, after the end values):

* end node singular (:func:`self_stresses`: the kept loop rows' smallest scaled singular value below
  :data:`SINGULAR_NODE_TOL` of the largest, checked after every converged element, and on the
  predictor's end node when Newton failed): the element is solved again from its predictor with the
  end node's rows ``n_k^T g`` replaced by ``n_k^T (Qbar(t2) - Qbar_pred(t2)) = 0``, ``Qbar(t2)`` the
  reactions' polynomial (degree ``p - 1`` through the Gauss values) at the end node: the reaction along
  the self-stress *at the singular instant*, which the kinematics do not determine, is held at the value
  extrapolated from the previous element (the least-norm change from the predictor), and the end
  configuration along the second branch follows the dynamics;
* start node singular (p >= 2): the interior constraint points' rows ``n_k^T g`` are released and the
  reaction combinations they control are held at the predictor (:func:`_start_pins`); the end node
  keeps all its rows.

The released rows are checked on the original equations: a bordered solution is accepted only when the
full residual's backward error (:func:`flexmb.dynamics.solve.newton.scaled_residual`) is at most
``NewtonOptions.dependent_tol``; otherwise the plain Newton decides (INFO line), and fails loudly as
before if it fails.  Accepted ones carry that backward error in ``NewtonResult.residual`` and count in
``meta["singular_elements"]``.  The node-velocity projection at a singular node is deflated along the
self-stresses (:func:`flexmb.dynamics.node.projection.deflated_solve`).

Cost: the singular-node test reads the full loop set's SVD at the end node
(:func:`flexmb.dynamics.node.redundancy.node_svd`), which the redundancy monitor reuses at that node: no
extra SVD for models with dropped equations; loop models without (no monitor) first try a proof that the
node is regular without an SVD (:func:`flexmb.dynamics.node.redundancy.conditioning_bound`, a lower bound
of the ratio from a Cholesky of the Gram matrix: X3 0.032 against its 0.155; the SVD when the bound is
below :data:`BOUND_MARGIN` x the tolerance, so the decision is always the SVD's); the kept rows' SVD only
near a singular node.  The loop matrix is written densely from the node's joint frames, which the
node projection then reuses (X3's 18 x 23 loop set: 0.16 ms for the matrix, 0.08 ms for its SVD, 0.3 ms
per node for the whole check; 1.3 ms before, through the sparse constraint matrix); the check runs at
every node, with no threshold of its own.  Loop sets that the monitor examines every ``k``-th node only (above
:data:`flexmb.dynamics.node.redundancy.MONITOR_SIZE` entries) are not checked.  The bordered solves run with
their own SuperLU (the run's refactorization keeps its pattern and pivots: runs without a singular node
are unchanged, bit for bit).
"""
from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import NDArray

from flexmb.dynamics.layout import JOINT_SLOTS, JQ
from flexmb.dynamics.node.redundancy import (conditioning_bound, full_loop_matrix, loop_structure, node_svd,
                                             scaled_loop_matrix)
from flexmb.dynamics.step.outcome import ElementOutcome, ElementPiece
from flexmb.errors import SingularMatrixError

log = logging.getLogger(__name__)

#: a node whose kept loop constraint rows have a smallest singular value below this fraction of the
#: largest (scaled metric) is treated as singular: the parallelogram at 1e-8 rad from its change point
#: has 1.7e-9; the two roots of the end-node row are then ~1e-8 rad apart, closer than Newton's
#: predictor error (4e-10 rad); at 1e-5 they are 6e-5 rad apart and the bordered solution still equals
#: the plain one to round-off (the released row is implied to O(sigma x truncation error))
SINGULAR_NODE_TOL = 1e-5
#: a regular node is proven without the SVD when the loop set's conditioning bound
#: (:func:`flexmb.dynamics.node.redundancy.conditioning_bound`) is at least this many times the tolerance:
#: then the SVD's ratio is too (the bound's round-off, 4e-14 / (2e-5)^2 = 1e-4 relative at the default
#: tolerance, and the SVD's, 1e-14 absolute, are far inside the factor 2): the decision is the SVD's
BOUND_MARGIN = 2.0
#: the bound is trusted down to this tolerance (below, its squared round-off is no longer negligible)
BOUND_MIN_TOL = 1e-6
#: what a plain Newton root at a singular node does not vouch for (WARNING: p = 2, h = 0.02, one
#: parallelogram: node reactions of 191 N against the motion's 34.5 N; positions 8.7e-8 m)
_PLAIN = ("; a plain root keeps the motion to Newton's tolerance, but the reactions at this node may then carry "
          "a component along the self-stress, which the motion does not determine (a smaller step or p = 3 avoids it)")


def self_stresses(cm, st, sel, tol: float = SINGULAR_NODE_TOL):
    """Self-stresses of the kept loop constraint rows at a node ``st``: ``(labels, n, ratio)`` with the
    row labels ``(joint, component)`` (component 0-5, ``"cross"`` for a universal joint), ``n (rows,
    k)`` orthonormal in the scaled metric (:func:`flexmb.dynamics.node.redundancy.scaled_loop_matrix`:
    forces x L, moments) and the smallest singular value over the largest; None when that ratio is
    at least ``tol`` (a regular node) or the model has no loop.  ``sel``: the kept rows
    (:class:`~flexmb.dynamics.node.selection.Selection`)."""
    loops = loop_structure(cm)
    if loops.js.size == 0 or loops.every > 1:
        return None
    matrix = None
    if not sel.redundant and tol >= BOUND_MIN_TOL:
        # nothing dropped (no redundancy monitor shares the SVD at this node): a node whose full loop set's
        # conditioning is proven at least BOUND_MARGIN x tol (redundancy.conditioning_bound) is regular: the
        # SVD's ratio is at least that too, the same decision
        matrix = full_loop_matrix(cm, st)
        if conditioning_bound(matrix[0]) >= BOUND_MARGIN * tol:
            return None
    # the full set's SVD (shared with the redundancy monitor at this node): generically of rank
    # n_rows - n_dropped; a singular configuration loses one more
    Gf, _, _, svf = node_svd(cm, st, matrix)
    r = Gf.shape[0] - len(sel.redundant)  # (a switched contact row is not in the loop set)
    if r <= 0 or (r <= svf.size and svf[r - 1] >= tol * max(float(svf[0]), 1e-300)):
        return None
    Gs, labels, _, _ = scaled_loop_matrix(cm, st, loops.js, sel)
    if Gs.size == 0:
        return None
    sv = np.linalg.svd(Gs, compute_uv=False)
    top = max(float(sv[0]), 1e-300)
    short = Gs.shape[0] - sv.size  # more rows than columns: dependent by count
    ratio = 0.0 if short > 0 else float(sv[-1]) / top
    if ratio >= tol:
        return None
    U, sv, _ = np.linalg.svd(Gs, full_matrices=True)
    k = int(np.count_nonzero(sv < tol * top)) + max(short, 0)
    return labels, U[:, Gs.shape[0] - k:], ratio


def _superlu(A):
    """A SuperLU of its own for the bordered matrices (another pattern than the run's)."""
    try:
        lu = spla.splu(sp.csc_matrix(A), permc_spec="COLAMD")
    except RuntimeError as exc:
        raise SingularMatrixError(str(exc)) from exc
    return lu.solve


def node_self_stresses(cm, st, sel):
    """:func:`self_stresses` of the node ``st`` under the constraint selection ``sel``, kept on the node
    (``st.self_stresses``): the end node of an element is the start node of the next one, and the node
    projection (:mod:`flexmb.dynamics.node.projection`) deflates its multipliers along them."""
    key = sel.key
    hit = st.self_stresses
    if hit is not None and hit[0] == key:
        return hit[1]
    found = self_stresses(cm, st, sel)
    st.self_stresses = (key, found)
    return found


def _self_stress_vectors(system, scale: NDArray, labels, n: NDArray):
    """The self-stresses ``n (m, k)`` as vectors of the element: ``Y (p, N, k)`` the combinations of the
    constrained joint-law rows at each constraint point (``Y[i, :, c] . F``: the scaled rows combined by
    ``n[:, c]``), ``Yhat`` their dual (``Y[i]^T Yhat[i] = I``), ``Z (p, N, k)`` the same combinations of
    the reactions ``Qbar`` at each Gauss point (scaled: forces x L, divided by the scale ``F L``)."""
    cm, lay, te = system.cm, system.lay, system.te
    p = te.p
    jj = np.array([j for j, _ in labels], dtype=np.int64)
    cc = np.array([5 if c == "cross" else c for _, c in labels], dtype=np.int64)
    trans = np.array([isinstance(c, (int, np.integer)) and c < 3 for _, c in labels])
    rs = np.where(trans, 1.0 / cm.length_scale, 1.0)  # scaled row = rs x row; scaled reaction = reaction / rs
    base = lay.joint_off + jj * p * JOINT_SLOTS + JQ + cc  # joint-law slot of each row at point 0
    slots = base[None, :] + (np.arange(p) * JOINT_SLOTS)[:, None]  # (p, m): rows at tau_i = Qbar at c_i
    kappa = 1.0 / max(float(np.max(scale[slots[0]] / rs)), 1e-300)  # 1 / (F L)
    N, k = lay.size, n.shape[1]
    Y, Yhat, Z = (np.zeros((p, N, k)) for _ in range(3))
    for i in range(p):
        Y[i, slots[i]] = rs[:, None] * n
        Yhat[i, slots[i]] = n / rs[:, None]
        Z[i, slots[i]] = (kappa / rs)[:, None] * n
    return Y, Yhat, Z


def bordered_system(system, st, h: float, U0: NDArray, Y: NDArray, Yhat: NDArray, Z: NDArray):
    """``evaluate(U) -> (F, J)`` of a bordered element (module docstring): the element's rows ``F`` with
    the combinations ``Y^T F`` (``Y (N, K)``, dual ``Yhat``: ``Y^T Yhat = I``) replaced by
    ``Z^T (U - U0)`` (``Z (N, K)``): ``F~ = F - Yhat (Y^T F) + Yhat Z^T (U - U0)``.  ``F~ (N,)``, ``J~``
    CSC ``(N, N)``."""
    Ys, Yh, Zs = sp.csr_matrix(Y), sp.csr_matrix(Yhat), sp.csr_matrix(Z)
    T = sp.identity(Y.shape[0], format="csr") - Yh @ Ys.T
    C = Yh @ Zs.T

    def evaluate(U):
        F, J = system.evaluate(U, st, h)
        return T @ F + C @ (U - U0), sp.csc_matrix(T @ J + C)

    return evaluate


def _start_pins(system, st, h: float, U0: NDArray, Y: NDArray, Z: NDArray):
    """For an element that starts on a singular node: the combinations of the self-stress reactions
    ``Z (p, N, k)`` that the interior constraint points' self-stress rows ``Y[:p-1]`` control, ``(N,
    (p-1) k)``: the range of ``Z^T J^-1 Y`` (the reactions' response to those rows' residuals, ``J`` the
    element's Jacobian at the predictor)."""
    p, N, k = Z.shape
    _, J = system.evaluate(U0, st, h)
    solve = _superlu(J)
    Yr = Y[:p - 1].transpose(1, 0, 2).reshape(N, -1)
    Zc = Z.transpose(1, 0, 2).reshape(N, -1)
    M = Zc.T @ np.column_stack([solve(Yr[:, c]) for c in range(Yr.shape[1])])
    Um, sm, _ = np.linalg.svd(M, full_matrices=False)
    log.debug("singular start node: response of the self-stress reactions to the interior rows, singular values %s",
              np.array2string(sm, precision=3))
    return Zc @ Um


def _bordered(system, st, h: float, U0: NDArray, scale: NDArray, options, found, where: str):
    """The bordered solve; ``where``: ``"end"`` (the end node's self-stress rows released, the
    reactions' value there held at the predictor's) or ``"start"`` (the interior constraint points'
    rows released, the reaction combinations they control held, :func:`_start_pins`).  The
    :class:`~flexmb.dynamics.solve.newton.NewtonResult` when it converged and the full residual's backward
    error is at most ``residual_tol``, else None (logged)."""
    from flexmb.dynamics.solve.newton import newton_solve, scaled_residual
    from flexmb.dynamics.time_elements import lagrange_matrices

    labels, n, ratio = found
    te = system.te
    p = te.p
    tol = options.newton.dependent_tol  # the released rows are the (nearly) dependent equations
    if options.newton.residual_tol <= 0 or (where == "start" and p == 1):  # nothing can vouch for released rows / no interior point
        return None
    Y, Yhat, Z = _self_stress_vectors(system, scale, labels, n)
    what = (f"t = {st.t if where == 'start' else st.t + h:.6g} s: the element {where}s on a singular configuration "
            f"of the closed loops (smallest scaled singular value of the loop constraints {ratio:.2e} of the largest)")
    try:
        if where == "start":
            Yr = Y[:p - 1].transpose(1, 0, 2).reshape(Y.shape[1], -1)
            Yh = Yhat[:p - 1].transpose(1, 0, 2).reshape(Y.shape[1], -1)
            Zr = _start_pins(system, st, h, U0, Y, Z)
        else:
            ell = lagrange_matrices(te.c, np.array([1.0]))[0][0]  # Gauss values -> value at the end node
            Yr, Yh, Zr = Y[p - 1], Yhat[p - 1], np.einsum("j,jnk->nk", ell, Z)
    except SingularMatrixError as exc:
        log.warning("%s; the bordered system could not be set up (%s): the plain Newton decides" + _PLAIN, what, exc)
        return None
    r = newton_solve(bordered_system(system, st, h, U0, Yr, Yh, Zr), U0, scale, _superlu, options.newton)
    if not r.converged:
        log.warning("%s; the bordered solve failed (%s): the plain Newton decides" + _PLAIN, what, r.message)
        return None
    with np.errstate(all="ignore"):
        F, J = system.evaluate(r.U, st, h)
    rho = scaled_residual(F, J, scale + np.abs(r.U)) if np.all(np.isfinite(F)) else np.inf
    if not rho <= tol:
        log.warning("%s; with the self-stress rows released the equations hold only to a backward error %.3g > %.3g: "
                    "the plain Newton decides" + _PLAIN, what, rho, tol)
        return None
    r.residual = rho  # counted among meta["singular_elements"]
    r.message = (f"{where} node on a singular configuration (loop constraints' smallest scaled singular value "
                 f"{ratio:.2e}): {Yr.shape[1]} self-stress row(s) released, the reactions they control held at the "
                 f"predictor; backward error {rho:.3g}")
    log.debug("%s; %s", what, r.message)
    return r


def solve(system, st, h: float, U0: NDArray, scale: NDArray, factor, options, newton=None) -> ElementPiece:
    """The solve stage with the start-node check (:mod:`flexmb.dynamics.step.advance`): the element from
    ``st`` of length ``h`` [s] from the predictor ``U0 (lay.size,)``, Newton's scales ``scale``, the run's
    ``factor`` and ``options`` (:class:`~flexmb.dynamics.simulate.SimulationOptions`), as an
    :class:`~flexmb.dynamics.step.outcome.ElementPiece`.  Start node singular (:func:`node_self_stresses`):
    the bordered solve with the interior constraint points' self-stress rows released (p >= 2,
    ``released="start"``) when it can vouch for itself (:func:`_bordered`), else the element's Newton
    ``newton(system, st, h, U0, scale, factor, newton_options)`` (default:
    :meth:`flexmb.dynamics.solve.evaluation.ElementSystem.newton`; the run's
    :class:`~flexmb.dynamics.step.advance.Stages`)."""
    found = node_self_stresses(system.cm, st, system.lay.selection)
    r = _bordered(system, st, h, U0, scale, options, found, "start") if found is not None else None
    if r is not None:
        return ElementPiece(st, h, r.U, r, released="start")
    if newton is None:
        r = system.newton(st, h, U0, scale, factor, options.newton)
    else:
        r = newton(system, st, h, U0, scale, factor, options.newton)
    return ElementPiece(st, h, r.U, r)


def check_end(system, piece: ElementPiece, end, U0: NDArray, scale: NDArray, options, end_values) -> ElementOutcome:
    """The end-node check, after the end-values stage: the :class:`~flexmb.dynamics.step.outcome.ElementOutcome`
    of the solved ``piece`` (from the predictor ``U0``) whose end node is ``end`` (None when Newton failed),
    or a replacement.  ``end_values(U) -> ElementStart``: the end-values stage of this element.

    End node of the solution (or, when Newton failed, of the predictor) singular: the bordered solve with
    the end node's self-stress rows released replaces it when it can vouch for itself (:func:`_bordered`;
    ``released="end"``, the Newton counts of both solves).  The self-stresses of the outcome's end node are
    left on it (:func:`node_self_stresses`) for the next element and the node projection.  A piece solved
    with the start node's rows released keeps its end node (no end check)."""
    cm, st, h, r, sel = system.cm, piece.start, piece.h, piece.result, system.lay.selection
    if piece.released == "start":
        node_self_stresses(cm, end, sel)  # for the next element, which starts there
        return ElementOutcome(end, [piece])
    if end is None:
        # Newton may fail outright when the end node is singular (a row of three parallelograms, three
        # self-stresses at once, p = 3: diverging): the predictor's end node tells
        found = self_stresses(cm, end_values(U0), sel)
    else:
        found = node_self_stresses(cm, end, sel)
    r2 = _bordered(system, st, h, U0, scale, options, found, "end") if found is not None else None
    if r2 is None:
        return ElementOutcome(end, [piece])
    for k in ("n_residual", "n_jacobian", "n_factor", "iterations"):
        setattr(r2, k, getattr(r2, k) + getattr(r, k))
    end = end_values(r2.U)
    node_self_stresses(cm, end, sel)  # for the next element, which starts there
    return ElementOutcome(end, [ElementPiece(st, h, r2.U, r2, released="end")])
