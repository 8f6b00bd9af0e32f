"""Error-controlled steps of :func:`~flexmb.simulate` (``rtol``/``atol``): the local error estimate,
the step-size controller and the landing on requested output times.

Local error estimate ("history", the default; no extra solve)
--------------------------------------------------------------
The time element of order ``p`` is Gauss collocation: its node values superconverge at order
``2p``, with the local error (one step of length ``h`` from exact start values)

    ``le = -(-1)^p C_p h^(2p+1) y^(2p+1) + O(h^(2p+2))``,   ``C_p = (p!)^2 / ((2p)! (2p+1)!)``

(``1/12``, ``1/720``, ``1/100800`` for ``p = 1, 2, 3``), exactly for linear motion (``e^z`` minus
the diagonal Pade approximant that the element's growth function is) and to leading order
otherwise.  The derivative ``y^(2p+1)`` of the bodies' positions and rotation vectors is read off
the Hermite interpolant (values and velocities) through the last ``p + 2`` nodes, at the middle of
the step being judged: one small dense solve per step.  The rotation vectors of the nodes relative
to the judged step's start are taken on their branch continuous in time
(:func:`unwrap_rotation_vectors`): ``log`` folds a rotation past half a turn onto the other branch,
and a body turning by more than ~1 rad per element (``p = 3``: the interpolant spans 4 elements)
then put a jump into the interpolated data (the heavy top of validation case R7 at 150 rad/s: an
estimate 1e7 x the true local error at 1.05 rad per element, so steps were rejected and re-grown
again and again, and ``rtol = 1e-4`` cost more elements than ``1e-6``).  Both the computed and the exact motion
satisfy the position constraints at the nodes, so the node error lies in the joints' tangent
space; the normal part of the estimate (the centripetal part of ``y^(2p+1)`` on a circle, 5-10x
the true error of a pendulum) is projected out (:meth:`StepControl.tangent`).  Measured against
the true local error (``tests/test_adaptive_estimate.py``, 8 substeps as reference) the estimate
is 1.0 / 2.5-2.9 / 2.5-3.6 x too high at ``p = 1 / 2 / 3`` on a pendulum and a spinning body
(a linear oscillator: 0.38 / 2.5 / 0.8), hence the factors :data:`CALIBRATION` (after them: within
0.4-1.8 on those cases, and 1.0 median / 1.7 sum (``p = 2``), 1.5 / 2.4 (``p = 3``) on the 15-link
chain).  Interpolating the positions alone through ``2p + 2`` nodes (no velocities: the nodes'
velocities differ from the derivative of their positions by ``O(h^2p)``, the order of the
estimated error) was measured too: medians nearer 1 uncalibrated, but a 10x wider step-to-step
scatter, hence more rejected steps.  The first steps (before ``p + 2`` nodes exist) and the option
``SimulationOptions(step_error="doubling")`` use step doubling (the step and its two halves from
the same start, difference ``/ (2^2p - 1)``): 1.5 solved elements per recorded one.

Error measure and acceptance
----------------------------
Per body, the larger of the reference-point error and the rotation error times the body's lever
length (:func:`flexmb.dynamics.solve.scales.body_lengths`), divided by ``atol + rtol |x|``; the largest
over the bodies, divided by the step's share of the tolerance, is ``err``.  The tolerance is
shared equally among the run's steps (the accepted ones plus ``(t_end - t) / h`` still to come):
equal local errors per step minimise the number of steps for a given sum of local errors (a
Lagrange-multiplier argument on ``sum h^(2p+1) |y^(2p+1)|``), where the classical "error per unit
step" spends too many steps on smooth stretches.  A step is accepted when ``err <= 1 + credit``,
``credit`` the unspent shares of the steps before it (at most :data:`CREDIT_MAX`): the sum of the
estimates stays within the tolerance while a noisy estimate (1.5-3x step to step on the chain) does
not force a rejection each time it exceeds its share.  The sum bounds the global error as long as
the dynamics do not amplify the local errors; a chaotic chain does (measured on the 15-link chain
at ``p = 2``: global 1.6x the sum), see benchmarks/README.md.

Controller
----------
A PI controller (Gustafsson 1991; Hairer, Norsett & Wanner, *Solving ODEs I*, II.4) on ``err ~ h^k``,
``k = 2p + 1``, aiming at ``err = TARGET``: ``h_new = h (TARGET/err)^(0.7/k) (err_prev/TARGET)^(0.4/k)``
within ``[0.2, 2.5] h`` (no growth right after a rejection); a rejected step is retried with
``h max(0.2, (TARGET/err)^(1/k))``.

Turn cap
--------
Whatever the estimate, a step turns no body by more than :data:`TURN_MAX` = 2.5 rad (below the root
check's half turn, :data:`flexmb.dynamics.variants.root_checks.MAX_TURN`), nor by more than :data:`SPAN_MAX`
= 5 rad over the ``p + 1`` elements the interpolant spans (``p = 1 / 2 / 3``: 2.5 / 1.67 / 1.25 rad
per element), from the largest angular speed of the bodies at the last ``p + 1`` nodes
(:meth:`StepControl.turn_cap`).  The continuous branch is singular at a full turn; towards it the
interpolant's own error grows: on the heavy top (``p = 3``) the estimate is 3.5 / 9 / 42 x the true
local error at spans of 3.0 / 4.2 / 5.4 rad (too high: safe, the controller shortens the step) and
310 x at 6.6 rad, past a full turn.  Heavy top over 2 s, ``rtol = atol`` = 1e-8 / 1e-6 / 1e-4: 537 /
313 / 252 solved elements (520 / 303 / 245 without the calibration below), 1 / 1 / 0 rejected,
centre of mass within 4.6e-8 / 2.1e-6 / 9.5e-6 m of the reference (before: 522 / 311 / 485 elements,
2 / 3 / 82 rejected); at 1e-4 the cap holds the step
(1.25 rad, h = 0.0083 s; a fixed h = 0.01 s gives 3.4e-5 m in 200 elements).  Models turning by less
than ~1 rad per element are unaffected (the 15-link chain: the same steps as before).  The speed is
the bodies', not the joints' relative one: a joint's relative speed is at most the sum of its two
bodies' speeds, and Newton's basin at large turns is the predictor's business (docs/theory.md
section 4: the retry from the constant-velocity guess).

Online calibration
------------------
``C_p h^(2p+1) y^(2p+1)`` is the leading local error of linear motion; on nonlinear motion it can be
low: a free asymmetric body tumbling at 100 rad/s has a true local error ~ ``h^7`` where the estimate
goes like ``h^8`` (0.15 / 0.29 / 0.47 x the true error at 0.35 / 0.74 / 1.25 rad per element), and its
global error was 8.9 / 4.5 / 2.1 x ``rtol = atol`` = 1e-8 / 1e-6 / 1e-4.  So every
:data:`CALIBRATE_EVERY` = 32 accepted steps a pair of two of the controller's steps is also solved
whole (step doubling: one extra solved element), and the history estimates are multiplied by the
ratio doubling / history of the pair's first half, log-smoothed (half weight per sample) and kept
within ``[1, CALIBRATION_MAX]``: it only raises estimates found low (the pendulum and the 15-link
chain keep 1).  A pair never passes a requested output time or the end, nor turns a body by more
than :data:`TURN_MAX`; the pair's halves are judged by the (calibrated) history estimate like any
step, so a calibration costs one solved element.  The tumbling body: 3.0 / 1.9 / 1.5 x the tolerance
with 210 / 104 / 51 solved elements (step doubling throughout: 1.1 / 1.2 / 1.0 x with 342 / 153 / 78);
``meta["calibrations"]``, ``meta["calibration"]`` (the factor at the end) report it.

Output times
------------
With ``t_eval``, a requested time within reach of the next step becomes a node (the step is
shortened to land on it, or the distance split in two equal steps to avoid a sliver), so that the
results there carry the nodal accuracy; requested times closer together than a step are
interpolated (:mod:`flexmb.results.dense_output`, cubic Hermite, error ``h^4 y^(4) / 384``), and a step
holding such times also bounds that interpolation error by the tolerance.
"""
from __future__ import annotations

import logging
from math import factorial

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.sparse.linalg import splu

from flexmb import rotations as rot
from flexmb.results.dense_output import hermite_positions, hermite_rotations
from flexmb.dynamics.node.constraints import node_velocity, velocity_constraint_matrix
from flexmb.errors import ConvergenceError, ModelError

log = logging.getLogger(__name__)

__all__ = ["StepControl", "ERROR_CONSTANT", "hermite_derivatives"]

#: ``C_p``: the local error of the nodes is ``C_p h^(2p+1) |y^(2p+1)|`` to leading order
ERROR_CONSTANT = {p: factorial(p) ** 2 / (factorial(2 * p) * factorial(2 * p + 1)) for p in (1, 2, 3)}
#: true / estimated local error, measured on the pendulum and the spinning body (module docstring)
CALIBRATION = {1: 1.0, 2: 0.5, 3: 0.5}
#: the controller aims at err = TARGET (its safety margin); step ratio limits
TARGET, GROW_MAX, SHRINK_MIN = 0.7, 2.5, 0.2
#: a step may spend the unspent share of the steps before it, up to CREDIT_MAX shares
CREDIT_MAX = 2.0
#: PI gains (times 1/k): Gustafsson's 0.7 / 0.4
K_I, K_P = 0.7, 0.4
ESTIMATORS = ("history", "doubling")
#: the interpolant spans p + HISTORY_EXTRA elements
HISTORY_EXTRA = 1
#: largest rotation of a body over the span of the interpolant [rad]: the rotation vectors relative to the
#: judged step's start are taken on their continuous branch (:func:`unwrap_rotation_vectors`), which is
#: singular at a full turn; measured on the heavy top (p = 3, 4 elements spanned), estimate / true local
#: error 3.5 / 9 / 42 at spans of 3.0 / 4.2 / 5.4 rad (too high, hence safe, but fast growing), 310 at 6.6
SPAN_MAX = 5.0
#: largest rotation of a body per element [rad], whatever the estimate: below the root check's half turn
#: (:data:`flexmb.dynamics.variants.root_checks.MAX_TURN`) with a margin for the speed's change within the step
TURN_MAX = 2.5
#: every CALIBRATE_EVERY accepted steps a history-estimated run takes one step by step doubling and raises
#: the history estimates by the ratio (doubling / history, smoothed, within [1, CALIBRATION_MAX])
CALIBRATE_EVERY, CALIBRATION_MAX = 32, 30.0


def row_space_component(G, e: NDArray, rel_shift: float = 1e-10) -> NDArray:
    """The component of ``e (n,)`` in the row space of the sparse ``G (m, n)``: ``G^T y`` with
    ``(G G^T + eps I) y = G e``, ``eps = rel_shift x max diag(G G^T)`` (a Tikhonov shift: dependent rows
    at singular positions contribute nothing, directions with eigenvalues below ``eps`` are damped
    smoothly, like a least-squares solve with ``rcond = rel_shift``).  Sparse: the cost grows with the
    model like the node-velocity projection's, not with ``m^3`` (a dense solve took 0.23 s per step for a
    300-bar chain, 6 s at 1000 bars)."""
    G = sp.csr_matrix(G)
    if G.shape[0] == 0:
        return np.zeros_like(e)
    A = (G @ G.T).tocsc()
    eps = rel_shift * max(float(A.diagonal().max()), 1e-300)
    y = splu((A + eps * sp.identity(A.shape[0], format="csc")).tocsc(), permc_spec="MMD_AT_PLUS_A").solve(G @ e)
    return G.T @ y


def hermite_derivatives(s: NDArray, y: NDArray, dy: NDArray, orders, at: float = 0.5) -> list[NDArray]:
    """Derivatives of the Hermite interpolant through ``(s_i, y_i, dy_i)``.

    ``s (n,)`` distinct abscissae (scaled time), ``y, dy (n, c)`` values and first derivatives of
    ``c`` components; the interpolant has degree ``2n - 1``.  Returns, for each ``q`` in ``orders``,
    its ``q``-th derivative at ``at``, shape ``(c,)``."""
    n = s.size
    deg = np.arange(2 * n)
    A = np.zeros((2 * n, 2 * n))
    A[:n] = s[:, None] ** deg
    A[n:, 1:] = deg[1:] * s[:, None] ** (deg[1:] - 1)
    coef = np.linalg.solve(A, np.concatenate([y, dy]))  # (2n, c)
    out = []
    for q in orders:
        k = deg[q:]
        w = np.array([factorial(int(kk)) / factorial(int(kk - q)) for kk in k]) * at ** (k - q)
        out.append(w @ coef[q:])
    return out


def unwrap_rotation_vectors(th: NDArray, k0: int) -> NDArray:
    """The rotation vectors ``th (n, nb, 3)`` of nodes relative to node ``k0`` (``th[k0] = 0``) on the
    branch continuous in time.  ``log`` returns angles up to half a turn: a body that turned by more
    between node ``k0`` and node ``k`` gets the other branch, ``v (1 - 2 pi / |v|)`` (the same rotation,
    angle ``2 pi - |v|`` about the opposite axis), and an interpolant through such values has a jump, not
    the motion (the heavy top at 1.05 rad per element, four elements spanned: estimates 1e7 x the true
    local error).  Walking outward from ``k0``, each node takes the branch (``j = -1, 0, 1`` turns added)
    nearest to the linear extrapolation of its two inner neighbours.  Valid while the span stays below a
    full turn (:data:`SPAN_MAX`)."""
    th = th.copy()
    for k in range(k0 - 1, -1, -1):  # the nodes after k0 are within one element: principal values
        guess = 2 * th[k + 1] - th[k + 2]
        v = th[k]
        a = np.linalg.norm(v, axis=-1, keepdims=True)
        u = v / np.where(a > 0, a, 1.0)
        cands = np.stack([v + 2 * np.pi * j * u for j in (-1, 0, 1)])  # (3, nb, 3)
        best = np.argmin(np.linalg.norm(cands - guess[None], axis=-1), axis=0)  # (nb,)
        th[k] = np.take_along_axis(cands, best[None, :, None], axis=0)[0]
    return th


class StepControl:
    """Error-controlled steps of a :class:`~flexmb.dynamics.simulate.Run` (module docstring).

    ``rtol`` [-], ``atol`` [model length unit]; ``t_eval`` the requested output times [s] or None;
    ``estimator``: ``"history"`` or ``"doubling"``.  Counts ``accepted``, ``rejected`` steps and
    ``solved`` elements (every element Newton solved: kept, rejected and the estimator's own)."""

    def __init__(self, run, rtol: float, atol: float, t_eval=None, estimator: str = "history"):
        if estimator not in ESTIMATORS:
            raise ModelError(f"SimulationOptions(step_error={estimator!r}): use one of {ESTIMATORS}")
        self.rtol, self.atol = float(rtol), float(atol)
        self._run = run  # its constraint selection (which a re-selection replaces)
        self.estimator = estimator
        self.p = run.te.p
        self.k = 2 * self.p + 1  # err ~ h^k (local error per step)
        self.m = self.p + HISTORY_EXTRA  # elements spanned by the Hermite interpolant
        self.t_end = run.t_end
        self.t_eval = None if t_eval is None else np.sort(np.asarray(t_eval, dtype=float).reshape(-1))
        self.h_next = run.h
        self.accepted = self.rejected = self.solved = 0
        self.err_prev = 1.0
        #: unspent tolerance of the accepted steps, in units of one step's share
        self.credit = 0.0
        self.after_reject = False
        #: online factor on the history estimates (>= 1), log of the smoothed ratio, the next calibration
        self.cal, self.cal_log, self.next_cal, self.calibrations = 1.0, 0.0, 0, 0
        #: accepted nodes (t, x (nb, 3), R (nb, 3, 3), v (nb, 3), omega (nb, 3)), the last p
        self.history: list = []
        run.rec.stats["local_error"] = []  # estimated local error of each recorded element [m]
        cols = run.cm.vel_off[:, None] + np.arange(6)
        self._vcols, self._ocols = cols[:, :3], cols[:, 3:]

    # ------------------------------------------------------------------ node data and error measures
    def _node(self, cm, st, w=None) -> tuple:
        w = node_velocity(cm, st, sel=self._run.selection) if w is None else w
        return (st.t, st.x.copy(), st.R.copy(), w[self._vcols], w[self._ocols])

    def _scaled(self, dx: NDArray, dr: NDArray, x: NDArray, lever: NDArray) -> float:
        """Largest body error ``max(|dx|, |dr| lever) / (atol + rtol |x|)``; ``dx, dr (nb, 3)``."""
        e = np.maximum(np.linalg.norm(dx, axis=1), np.linalg.norm(dr, axis=1) * lever)
        return float(np.max(e / (self.atol + self.rtol * np.linalg.norm(x, axis=1)), initial=0.0))

    def tangent(self, cm, st, d: NDArray, lever: NDArray) -> NDArray:
        """The part of the error estimate ``d (2 nb, 3)`` (positions, then rotation vectors) that the
        joints allow at the node ``st``: both the computed and the exact motion satisfy the position
        constraints at the nodes, so the error of the nodes lies in the constraints' tangent space;
        the component normal to it (e.g. the centripetal part of ``y^(2p+1)`` of a body on a circle)
        is removed, orthogonally in the lever-scaled metric (rotations x lever)."""
        if not cm.nj:
            return d
        G, _ = velocity_constraint_matrix(cm, st, self._run.selection)
        if G.shape[0] == 0:
            return d
        nb = cm.nb
        e = np.zeros(cm.nv)
        e[self._vcols] = d[:nb]
        e[self._ocols] = d[nb:] * lever[:, None]
        sc = np.ones(cm.nv)
        sc[self._ocols] = lever[:, None]
        Gs = sp.csr_matrix(G) @ sp.diags(1.0 / sc)  # the constraints on the scaled vector
        e = e - row_space_component(Gs, e)
        return np.concatenate([e[self._vcols], e[self._ocols] / lever[:, None]])

    def history_estimate(self, nodes: list, lever: NDArray, dense: bool = False, cm=None, st=None) -> tuple[float, float, float]:
        """Local error of the last step of ``nodes`` (``m + 1`` node tuples) from the Hermite
        interpolant through them: ``(err_local, err_dense, local_error_length)``; ``err_local`` scaled
        by the tolerances (not yet per unit step), ``err_dense`` the scaled cubic-interpolation error
        on the step (0 unless ``dense``), ``local_error_length`` the largest body error [m]."""
        t = np.array([n[0] for n in nodes])
        h = t[-1] - t[-2]
        s = (t - t[-2]) / h  # the step being judged is s in [0, 1]
        R0 = nodes[-2][2]
        nb = R0.shape[0]
        # positions, and rotation vectors relative to the step's start with their rates T^-1 omega
        Rn = np.stack([n[2] for n in nodes])  # (n, nb, 3, 3)
        th = unwrap_rotation_vectors(rot.log(Rn @ np.swapaxes(R0, 1, 2)[None]), len(nodes) - 2)  # (n, nb, 3)
        dth = np.einsum("knij,knj->kni", rot.tangent_inv(th), np.stack([n[4] for n in nodes]))
        y = np.concatenate([np.stack([n[1] for n in nodes]), th], axis=1).reshape(len(nodes), -1)
        dy = h * np.concatenate([np.stack([n[3] for n in nodes]), dth], axis=1).reshape(len(nodes), -1)
        q = 2 * self.p + 1
        orders = (q, 4) if dense else (q,)
        der = hermite_derivatives(s, y, dy, orders, at=0.5)
        d = ERROR_CONSTANT[self.p] * CALIBRATION[self.p] * der[0].reshape(2 * nb, 3)
        if cm is not None:
            d = self.tangent(cm, st, d, lever)
        x = nodes[-1][1]
        err = self._scaled(d[:nb], d[nb:], x, lever)
        length = float(np.max(np.maximum(np.linalg.norm(d[:nb], axis=1), np.linalg.norm(d[nb:], axis=1) * lever),
                              initial=0.0))
        err_dense = 0.0
        if dense:
            dd = der[1].reshape(2 * nb, 3) / 384.0
            err_dense = self._scaled(dd[:nb], dd[nb:], x, lever)
        return err, err_dense, length

    # ------------------------------------------------------------------ step planning
    def _planned(self, t: float, t_end: float) -> tuple[float, bool]:
        """The next step from ``t`` and whether requested output times fall inside it (interpolated
        there).  The end of the run and sparse output times are landed on (module docstring)."""
        h = min(self.h_next, self.turn_cap())
        eps = 1e-12 * max(1.0, abs(t_end))
        ahead = np.empty(0) if self.t_eval is None else self.t_eval[(self.t_eval > t + eps) & (self.t_eval < t_end - eps)]
        ahead = np.append(ahead, t_end)
        t1 = ahead[0]
        if ahead.size > 1 and ahead[1] - t1 < h:  # output times denser than the steps: interpolate
            h = min(h, t_end - t)
            return h, bool(t1 < t + h - eps)
        if t1 <= t + h * (1 + 1e-9):
            return t1 - t, False  # land on it
        if t1 < t + 2 * h:
            return (t1 - t) / 2, False  # two equal steps instead of a sliver
        return h, False

    def turn_cap(self) -> float:
        """Largest step [s] from the bodies' angular speeds at the last nodes: at most :data:`TURN_MAX` per
        element, and :data:`SPAN_MAX` over the ``m`` elements the history estimate spans."""
        if not self.history:
            return np.inf
        speed = max(float(np.max(np.linalg.norm(n[4], axis=-1), initial=0.0)) for n in self.history)
        per_element = TURN_MAX if self.estimator == "doubling" else min(TURN_MAX, SPAN_MAX / self.m)
        return per_element / speed if speed > 0 else np.inf

    def _budget(self, t: float, h: float) -> float:
        """``1 / share``: the tolerance is shared among the run's steps, the accepted ones and those
        still to come at the step ``h`` from ``t`` (at the start: the error per unit step)."""
        return self.accepted + max(self.t_end - t, h) / h

    def _grow(self, err: float, ok: bool = True) -> float:
        """Step ratio: PI control on ``err ~ h^k`` aiming at ``err = TARGET`` after an accepted step;
        plain I control, without growth, right after a rejection; ``(TARGET / err)^(1/k)`` for a
        rejected step."""
        k, e = self.k, max(err, 1e-300)
        if not ok:
            return (TARGET / e) ** (1.0 / k)
        if self.after_reject:
            return min(1.0, (TARGET / e) ** (1.0 / k))
        return (TARGET / e) ** (K_I / k) * (self.err_prev / TARGET) ** (K_P / k)

    def _decide(self, err: float, err_dense: float, dense: bool) -> tuple[bool, float]:
        """Accept (``err`` within the tolerance plus the unspent credit, the dense-output error within
        the tolerance) and the step ratio for the next step, limited to ``[SHRINK_MIN, GROW_MAX]``."""
        ok = err <= 1.0 + self.credit and err_dense <= 1.0
        g = self._grow(err, ok)
        if dense:
            g = min(g, (TARGET / max(err_dense, 1e-300)) ** 0.25)
        return ok, min(GROW_MAX, max(SHRINK_MIN, g))

    # ------------------------------------------------------------------ the step
    def step(self, run) -> None:
        """Advance ``run`` by one accepted step (retrying rejected ones smaller)."""
        if self.estimator == "doubling" or len(self.history) < self.m:
            return self._step_doubling(run)
        if self.accepted >= self.next_cal:
            pair = self._calibration_pair(run)
            if pair is not None:
                return self._step_calibration(run, pair)
        cm = run.cm
        while True:
            h, dense = self._planned(run.st.t, run.t_end)
            out = run.solve_element(run.st, h, run.w, run.prev)
            self.solved += len(out.pieces)
            end = out.end
            w_end = node_velocity(cm, end, sel=run.selection)
            err, err_dense, length = self.history_estimate(self.history[-self.m:] + [self._node(cm, end, w_end)],
                                                           run.lever, dense, cm, end)
            err *= self._budget(run.st.t, h) * self.cal
            length *= self.cal
            ok, g = self._decide(err, err_dense, dense)
            if ok:
                break
            self._reject(run, h, g, err)
        # (the step planned to land on an output time keeps the controller's step for the next one)
        self._accept(run, out, h, err, g, length)

    def _reject(self, run, h: float, g: float, err: float) -> None:
        self.rejected += 1
        self.after_reject = True
        self.h_next = h * min(g, 0.9)
        log.debug("step rejected at t = %.6g s: h = %.4g s, err = %.3g; retry with h = %.4g s", run.st.t, h, err,
                  self.h_next)
        if self.h_next < 1e-12 * max(1.0, abs(run.t_end)):
            raise ConvergenceError(
                f"error-controlled step at t = {run.st.t:.6g} s: the step fell below 1e-12 s without meeting "
                f"rtol = {self.rtol:g}, atol = {self.atol:g}; loosen the tolerances", time=run.st.t)

    def _step_doubling(self, run) -> None:
        """``h`` and two ``h/2`` from the same start; keep the halves when the difference
        ``/ (2^2p - 1)`` (their estimated local error) is within the tolerances."""
        cm, p = run.cm, self.p
        if not self.history:
            self.history = [self._node(cm, run.st, run.w)]
        while True:
            h, dense = self._planned(run.st.t, run.t_end)
            whole = run.solve_element(run.st, h, run.w, None)
            first, second, _ = self._halves(run, h / 2, None)
            mid, end = first.end, second.end
            self.solved += len(whole.pieces) + len(first.pieces) + len(second.pieces)
            whole = whole.end
            w_end = node_velocity(cm, end, sel=run.selection)
            scale = 2.0 ** (2 * p) - 1.0
            dx = (whole.x - end.x) / scale
            dr = rot.log(whole.R @ np.swapaxes(end.R, 1, 2)) / scale
            # (dx, dr: the error of the two halves together; per element half of it)
            err = 0.5 * self._scaled(dx, dr, end.x, run.lever) * self._budget(run.st.t, h / 2)
            length = float(np.max(np.maximum(np.linalg.norm(dx, axis=1), np.linalg.norm(dr, axis=1) * run.lever),
                                  initial=0.0))
            err_dense = 0.0
            if dense:  # the cubic through the step's ends misses the computed mid node by ~16 x the
                # interpolation error on the halves
                err_dense = self._dense_miss(run.st, run.w, mid, end, w_end, h, run.lever) / 16.0
            ok, g = self._decide(err, err_dense, dense)
            if ok:
                break
            self._reject(run, h, g, err)
        self.accepted += 2  # two steps of h / 2 are kept
        self.after_reject = False
        self.credit = min(CREDIT_MAX, self.credit + 1.0 - err)
        self.err_prev = max(err, 1e-4)
        self.h_next = max(h * g, self.h_next if h < self.h_next else 0.0) if g >= 1 else h * g
        run.commit(first, self.h_next, local_error=length / 2)
        self.history.append(self._node(cm, first.end, run.w))
        run.commit(second, self.h_next, local_error=length / 2)
        self.history = (self.history + [self._node(cm, end, run.w)])[-self.m:]

    def _accept(self, run, out, h: float, err: float, g: float, length: float) -> None:
        """Record an accepted history-judged step ``out`` of ``h`` (controller bookkeeping)."""
        self.credit = min(CREDIT_MAX, self.credit + 1.0 - err)
        self.err_prev = max(err, 1e-4)
        self.after_reject = False
        self.accepted += 1
        self.h_next = max(h * g, self.h_next if h < self.h_next else 0.0) if g >= 1 else h * g
        run.commit(out, self.h_next, local_error=length)
        self.history = (self.history + [self._node(run.cm, out.end, run.w)])[-self.m:]

    def _step_calibration(self, run, pair: float) -> None:
        """Two of the controller's steps (``pair`` [s] together), judged by the history estimate as every
        step, and the pair solved once more whole: the doubling estimate of the first half's local error
        calibrates the history estimate (:meth:`_calibrate`) before it judges the halves.  One extra
        solved element; a half that fails is rejected like any step (the second is then not kept)."""
        cm, h = run.cm, pair / 2
        whole = run.solve_element(run.st, pair, run.w, None)
        first, second, w_mid = self._halves(run, h, run.prev)
        mid, end = first.end, second.end
        self.solved += len(whole.pieces) + len(first.pieces) + len(second.pieces)
        whole = whole.end
        scale = 2.0 ** (2 * self.p) - 1.0
        dx = (whole.x - end.x) / scale
        dr = rot.log(whole.R @ np.swapaxes(end.R, 1, 2)) / scale
        doubled = 0.5 * float(np.max(np.maximum(np.linalg.norm(dx, axis=1), np.linalg.norm(dr, axis=1) * run.lever),
                                     initial=0.0))
        n_mid = self._node(cm, mid, w_mid)
        e1, _, l1 = self.history_estimate(self.history[-self.m:] + [n_mid], run.lever, False, cm, mid)
        self._calibrate(doubled, l1)
        e2, _, l2 = self.history_estimate(self.history[-self.m + 1:] + [n_mid, self._node(cm, end)], run.lever, False,
                                          cm, end)
        t0 = run.st.t
        e1 *= self._budget(t0, h) * self.cal
        ok, g = self._decide(e1, 0.0, False)
        if not ok:
            self._reject(run, h, g, e1)
            return self.step(run)
        self._accept(run, first, h, e1, g, l1 * self.cal)
        e2 *= self._budget(run.st.t, h) * self.cal
        ok, g = self._decide(e2, 0.0, False)
        if not ok:
            self._reject(run, h, g, e2)  # the run goes on from the mid node
            return
        self._accept(run, second, h, e2, g, l2 * self.cal)

    @staticmethod
    def _halves(run, h: float, prev):
        """Two elements of ``h`` [s] from the run's node (the first after ``prev``): their
        :class:`~flexmb.dynamics.step.outcome.ElementOutcome` and the node velocities between them."""
        first = run.solve_element(run.st, h, run.w, prev)
        w_mid = node_velocity(run.cm, first.end, sel=run.selection)
        return first, run.solve_element(first.end, h, w_mid, first.last), w_mid

    def _calibration_pair(self, run) -> float | None:
        """Length [s] of a calibration pair (two of the controller's steps) from the current node, or None
        when it would pass a requested output time or the end, or turn a body by more than TURN_MAX."""
        h = min(self.h_next, self.turn_cap())
        t = run.st.t
        eps = 1e-12 * max(1.0, abs(self.t_end))
        nxt = self.t_end if self.t_eval is None else min([self.t_end] + [float(x) for x in self.t_eval[self.t_eval > t + eps][:1]])
        speed = max(float(np.max(np.linalg.norm(n[4], axis=-1), initial=0.0)) for n in self.history)
        if t + 2 * h > nxt - eps or 2 * h * speed > TURN_MAX:
            return None
        return 2 * h

    def _calibrate(self, doubled: float, history: float) -> None:
        """Raise the history estimates where step doubling finds them low: ``doubled``, ``history`` [m] the
        two estimates of the same element's local error.  The history estimate is ``C_p h^(2p+1)
        y^(2p+1)``, exact to leading order for linear motion only; on a free body tumbling at 100 rad/s it
        was 0.15-0.47 x the true local error (the rotation's own derivatives small, the error from the
        nonlinearity of the rotation).  The log-ratio is smoothed (half weight per calibration) and the
        factor kept within ``[1, CALIBRATION_MAX]``: it only ever makes the steps more careful."""
        self.calibrations += 1
        self.next_cal = self.accepted + 2 + CALIBRATE_EVERY
        if doubled > 0 and history > 0:
            r = float(np.clip(doubled / history, 1e-2, 1e2))
            self.cal_log = 0.5 * self.cal_log + 0.5 * np.log(r)
            self.cal = float(np.clip(np.exp(self.cal_log), 1.0, CALIBRATION_MAX))
        log.debug("step-error calibration %d: doubling %.3g m, history %.3g m, factor %.3g", self.calibrations, doubled,
                  history, self.cal)

    def _dense_miss(self, a, wa, mid, b, wb, h: float, lever: NDArray) -> float:
        """Scaled distance between the computed mid node of a step and the cubic Hermite
        interpolation (:mod:`flexmb.results.dense_output`) through the step's end nodes."""
        t2 = np.array([0.0, h])
        v = np.stack([wa[self._vcols], wb[self._vcols]])
        om = np.stack([wa[self._ocols], wb[self._ocols]])
        xi = hermite_positions(t2, np.stack([a.x, b.x]), v, np.array([h / 2]))[0]
        Ri = hermite_rotations(t2, np.stack([a.R, b.R]), om, np.array([h / 2]))[0]
        return self._scaled(xi - mid.x, rot.log(Ri @ np.swapaxes(mid.R, 1, 2)), mid.x, lever)

    def state(self) -> dict:
        """The controller's state as named arrays (for checkpoints: :mod:`flexmb.dynamics.io.checkpoint`)."""
        out = {"scalars": np.array([self.rtol, self.atol, self.h_next, self.accepted, self.rejected, self.solved,
                                    self.err_prev, self.credit, float(self.after_reject),
                                    float(ESTIMATORS.index(self.estimator)), self.cal, self.cal_log,
                                    self.next_cal, self.calibrations])}
        if self.t_eval is not None:
            out["t_eval"] = self.t_eval
        if self.history:
            for i, key in enumerate(("t", "x", "R", "v", "omega")):
                out[f"history/{key}"] = np.stack([np.asarray(n[i]) for n in self.history])
        return out

    @classmethod
    def restore(cls, run, state: dict) -> "StepControl":
        """The controller of ``run`` from :meth:`state` (a resumed run continues bit-identically)."""
        sc = state["scalars"]
        ctl = cls(run, sc[0], sc[1], t_eval=state.get("t_eval"), estimator=ESTIMATORS[int(sc[9])])
        ctl.h_next, ctl.err_prev, ctl.credit = float(sc[2]), float(sc[6]), float(sc[7])
        ctl.accepted, ctl.rejected, ctl.solved = int(sc[3]), int(sc[4]), int(sc[5])
        ctl.after_reject = bool(sc[8])
        if sc.size > 10:
            ctl.cal, ctl.cal_log, ctl.next_cal, ctl.calibrations = float(sc[10]), float(sc[11]), int(sc[12]), int(sc[13])
        if "history/t" in state:
            cols = [state[f"history/{key}"] for key in ("t", "x", "R", "v", "omega")]
            ctl.history = [(float(cols[0][i]),) + tuple(np.array(c[i]) for c in cols[1:]) for i in range(cols[0].size)]
        return ctl

    def meta(self) -> dict:
        return {"rtol": self.rtol, "atol": self.atol, "accepted_steps": self.accepted, "rejected_steps": self.rejected,
                "solved_elements": self.solved, "step_error": self.estimator, "calibrations": self.calibrations,
                "calibration": self.cal}
