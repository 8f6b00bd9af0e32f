"""Time elements that end on a singular configuration of a closed loop (a change point on a time node).

The cause (measured, issue 8 section 2).  At a change point of a loop (a parallelogram four-bar's
cranks aligned with the ground link) the two branches of the constraint manifold cross: the
parallelogram motion and the anti-parallelogram one.  The kept loop constraint rows lose a rank;
their left null vector ``n`` (scaled metric of :func:`flexmb.dynamics.redundancy.scaled_loop_matrix`)
is a *self-stress*: reactions in equilibrium with no load.  When a time node falls on the change
point, the element that ends there imposes the constraints at its end node, where the row ``n^T g``
has a zero gradient: the end configuration along the second branch's tangent is fixed only by the
quadratic part of that row, which has two roots (one on each branch) as far apart as the node is from
the change point.  Parallelogram, theta = 0 at 1e-8 rad from the node t = 20 h (p = 3, h = 0.005):
Newton converged in two iterations to the *anti-parallelogram* root (cranks at +1e-8 and -1e-8 rad,
coupler turned by -1e-8 rad, 2.5e-9 m from the exact motion), and the next element, started off the
branch the momenta follow, could only return by reactions of 3e3 x their scale along ``n`` and
diverged 3.5 elements later.  The element Jacobian shows it: smallest scaled singular value 6e-16,
left vector the end node's ``n^T`` position rows, right vector ``n^T Qbar`` at the last Gauss point.

The treatment (:func:`resolve_singular_end`).  After an element has converged, the kept loop rows at
its end node are checked (:func:`self_stresses`: smallest scaled singular value below
:data:`SINGULAR_NODE_TOL` of the largest).  If the node is (nearly) singular, the element is solved
again from the same predictor with a *bordered* system of the same size: at the end node the rows
``n_k^T g`` (the constrained joint-law rows combined by each self-stress ``n_k``) are replaced by
``n_k^T (Qbar(t2) - Qbar_pred(t2)) = 0``, ``Qbar(t2)`` the reactions' polynomial (degree ``p - 1``
through the Gauss values) at the end node: the reaction along the self-stress *at the singular
instant*, which the kinematics do not determine, is held at the value extrapolated from the previous
element (the least-norm change from the predictor), and the end configuration along the second
branch follows the dynamics.  The released rows are then checked on the original equations: the
element is accepted only when the backward error of the full residual
(:func:`flexmb.dynamics.newton.scaled_residual`) is at most ``NewtonOptions.residual_tol`` (the
released rows hold to round-off: they are implied there); otherwise the plain solution is kept (the
node was not singular enough for the bordered one to vouch for it) and the event is logged.  Measured
on the case above: backward error 3.9e-17, the next element starts on the parallelogram branch (1e-14
m), passes with the near-null reset of :mod:`flexmb.dynamics.newton`, and positions stay within 1e-13
m of the exact motion.

Cost: one dense SVD (singular values only) of the kept loop rows per converged element, for models
with joints on closed loops (the loop set's size, not the model's); loop sets above
:data:`flexmb.dynamics.redundancy.MONITOR_SIZE` entries are checked at every ``k``-th node like the
redundancy monitor.  The bordered solve runs only at a singular node, with its own SuperLU (the run's
refactorization keeps its pattern and pivots, so runs stay bit-identical elsewhere).
"""
from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import NDArray

from flexmb.dynamics.layout import JOINT_SLOTS, JQ
from flexmb.errors import SingularMatrixError

log = logging.getLogger(__name__)

#: a node whose kept loop constraint rows have a smallest singular value below this fraction of the
#: largest (scaled metric) is treated as singular: the parallelogram at 1e-8 rad from its change point
#: has 1.7e-9; the two roots of the end-node row are then ~1e-8 rad apart, closer than Newton's
#: predictor error (4e-10 rad); at 1e-5 they are 6e-5 rad apart and the bordered solution still equals
#: the plain one to round-off (the released row is implied to O(sigma x truncation error))
SINGULAR_NODE_TOL = 1e-5


def _loop_rows(cm):
    """Loop joints of the model (``cm.redundancy.js``, set up by ``init_selection``), or None."""
    red = getattr(cm, "redundancy", None)
    if red is None or red.js.size == 0:
        return None
    return red


def self_stresses(cm, st, tol: float = SINGULAR_NODE_TOL):
    """Self-stresses of the kept loop constraint rows at a node ``st``: ``(labels, n, ratio)`` with the
    row labels ``(joint, component)`` (component 0-5, ``"cross"`` for a universal joint), ``n (rows,
    k)`` orthonormal in the scaled metric (:func:`flexmb.dynamics.redundancy.scaled_loop_matrix`:
    forces x L, moments) and the smallest singular value over the largest; None when that ratio is
    at least ``tol`` (a regular node) or the model has no loop."""
    from flexmb.dynamics.redundancy import scaled_loop_matrix

    red = _loop_rows(cm)
    if red is None:
        return None
    Gs, labels, _, _ = scaled_loop_matrix(cm, st, red.js)
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


def bordered_system(system, st, h: float, U0: NDArray, scale: NDArray, labels, n: NDArray):
    """``evaluate(U) -> (F, J)`` of the bordered element (module docstring): the element's rows with,
    at the end node, the self-stress combinations ``n^T`` of the constrained joint-law rows replaced by
    ``n^T (Qbar(t2) - Qbar_pred(t2))`` (scaled: rows by ``1/L`` on translations, reactions by ``L`` on
    forces, the reaction combination divided by its scale ``F L``).  ``F (N,)``, ``J (N, N)`` CSC."""
    from flexmb.dynamics.time_elements import _lagrange_matrices

    cm, lay, te = system.cm, system.lay, system.te
    p = te.p
    jj = np.array([j for j, _ in labels], dtype=np.int64)
    cc = np.array([5 if c == "cross" else c for _, c in labels], dtype=np.int64)
    trans = np.array([isinstance(c, (int, np.integer)) and c < 3 for _, c in labels])
    L = cm.length_scale
    rs = np.where(trans, 1.0 / L, 1.0)  # scaled row = rs x row; scaled reaction = reaction / rs
    base = lay.joint_off + jj * p * JOINT_SLOTS + JQ + cc  # joint-law slot of each row at point 0
    rows = base + (p - 1) * JOINT_SLOTS  # the end node is the last constraint point
    ell = _lagrange_matrices(te.c, np.array([1.0]))[0][0]  # Gauss values -> value at the end node
    qcols = base[None, :] + (np.arange(p) * JOINT_SLOTS)[:, None]  # (p, m) Qbar slots
    kappa = 1.0 / max(float(np.max(scale[qcols[0]] / rs)), 1e-300)  # 1 / (F L)
    P = n @ n.T
    Tb = (1.0 / rs)[:, None] * (np.eye(rs.size) - P) * rs[None, :]
    Cb = (1.0 / rs)[:, None] * P * (kappa / rs)[None, :]
    N = lay.size
    keep = np.setdiff1d(np.arange(N), rows)
    T = sp.csr_matrix((np.r_[np.ones(keep.size), Tb.reshape(-1)],
                       (np.r_[keep, np.repeat(rows, rows.size)], np.r_[keep, np.tile(rows, rows.size)])),
                      shape=(N, N))
    C = sp.csr_matrix(((ell[:, None, None] * Cb[None]).reshape(-1),
                       (np.broadcast_to(rows[None, :, None], (p, rows.size, rows.size)).reshape(-1),
                        np.broadcast_to(qcols[:, None, :], (p, rows.size, rows.size)).reshape(-1))),
                      shape=(N, N))

    def evaluate(U):
        F, J = system.evaluate(U, st, h)
        return T @ F + C @ (U - U0), sp.csc_matrix(T @ J + C)

    return evaluate


def resolve_singular_end(system, st, h: float, U0: NDArray, result, end, scale: NDArray, options):
    """After ``result`` (a converged :class:`~flexmb.dynamics.newton.NewtonResult` of the element from
    ``st`` of length ``h``, predictor ``U0``) with end node ``end``: if that node is singular
    (:func:`self_stresses`), solve the element again with the bordered system
    (:func:`bordered_system`) and return ``(end, result)`` of that solution when the full residual's
    backward error is at most ``options.newton.residual_tol``; otherwise the inputs unchanged.  The
    accepted result carries that backward error in ``residual`` (so the run counts it among
    ``meta["singular_elements"]``) and says what was done in ``message``."""
    from flexmb.dynamics.marching import end_values
    from flexmb.dynamics.newton import newton_solve, scaled_residual

    found = self_stresses(system.cm, end)
    if found is None:
        return end, result
    labels, n, ratio = found
    cm, lay, te = system.cm, system.lay, system.te
    if options.newton.residual_tol <= 0:  # the round-off acceptance is off: nothing can vouch for it
        return end, result
    evaluate = bordered_system(system, st, h, U0, scale, labels, n)
    r = newton_solve(evaluate, U0, scale, _superlu, options.newton)
    if not r.converged:
        log.info("t = %.6g s: the element ends on a singular configuration of the closed loops (smallest scaled "
                 "singular value of the loop constraints %.2e of the largest); the bordered solve failed (%s): the "
                 "plain solution is kept", st.t + h, ratio, r.message)
        return end, result
    with np.errstate(all="ignore"):
        F, J = system.evaluate(r.U, st, h)
    rho = scaled_residual(F, J, scale + np.abs(r.U)) if np.all(np.isfinite(F)) else np.inf
    if not rho <= options.newton.residual_tol:
        log.info("t = %.6g s: the element ends on a singular configuration of the closed loops (smallest scaled "
                 "singular value of the loop constraints %.2e of the largest); with the self-stress rows released "
                 "the equations hold only to a backward error %.3g > %.3g: the plain solution is kept",
                 st.t + h, ratio, rho, options.newton.residual_tol)
        return end, result
    r.residual = rho
    r.n_residual += result.n_residual
    r.n_jacobian += result.n_jacobian
    r.n_factor += result.n_factor
    r.iterations += result.iterations
    r.message = (f"end node on a singular configuration (loop constraints' smallest scaled singular value "
                 f"{ratio:.2e}): {n.shape[1]} self-stress row(s) released, reaction along them held at the "
                 f"predictor; backward error {rho:.3g}")
    log.debug("t = %.6g s: %s", st.t + h, r.message)
    return end_values(cm, lay, te, st, h, r.U), r
