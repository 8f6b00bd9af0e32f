"""Rows and analytic Jacobian of the modal flexible bodies (:mod:`.modal`): one call of the compiled
kernel :func:`flexmb.dynamics.bodies.modal_kernels.modal_residual` per group and evaluation, the
row and column of every value fixed per model (:func:`~flexmb.dynamics.bodies.modal_kernels.jacobian_indices`).

The acceleration preloads (``Ka``) need the frame accelerations at the internal points, the
derivative of the element's frame-velocity polynomial: ``h (v', omega')_i = D_i0 w1 + sum_j D_ij w_j``,
with the node velocity ``w1`` the projected one of the marching driver (``st.extra[NODE_VELOCITY]``:
it satisfies the velocity constraints; the velocity from the raw node momenta ``Rb Mb(q1)^-1 Rb^T p1``
does not exactly, and its difference from the internal velocities over h made a spurious zig-zag
acceleration: 0.9 rad/s^2 on the constant-spin X5 strip, shifting its frequency by 4.5e-4), else
the raw one.

The cubic and quartic elastic force (``stiffening="full"``) is integrated along the element with
the ``2p``-point Gauss rule instead of being collocated at the ``p`` Gauss points
(:func:`force_points`): row ``i`` carries ``(1/b_i) int l_i(tau) f_nl(q(tau)) dtau``, ``l_i`` the
Lagrange basis on the Gauss points (the test function of the weak form), ``q(tau)`` the element's
polynomial of degree ``p`` through the start value and the internal values.  The integrand has
degree ``4p - 1`` (``f_nl`` cubic in ``q``), so the rule is exact: the work of the elastic force
over the element is exactly the change of the strain energy (the cG(p) time element with exact
force quadrature conserves the energy of a conservative system, Betsch and Steinmann 2000).
Collocated at the ``p`` points it is not, and at steps that do not resolve the stiff modes (the
X3 rod's axial mode, 29,000 rad/s, at h = 1e-3 ... 2e-3) the energy the nonlinear coupling moved
between modes grew until Newton met a spurious root (X3 at p = 3, h = 1e-3: crank angle 1.51
rad).  The linear part ``K q`` is exact with the ``p`` points and stays collocated.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from flexmb.dynamics.bodies import modal_kernels as mk
from flexmb.dynamics.kernels import frozen
from flexmb.dynamics.time_elements import lagrange_matrices, once_per_time_element

#: key of the node velocities (nv,) in ``ElementStart.extra``, set by the marching driver
NODE_VELOCITY = "node_velocity"


def state_extras(st) -> tuple:
    """The values of ``st.extra`` (an :class:`~flexmb.dynamics.system.ElementStart` or any node with the
    same fields) that are the node's state: all but :data:`NODE_VELOCITY`, which the marching driver
    derives from the node and stores on it after the node's values were computed.  The caches of values
    computed from a node (its values, its frames) are keyed on these."""
    return tuple(v for k, v in st.extra.items() if k != NODE_VELOCITY)


def node_frame_velocity(grp, st) -> np.ndarray:
    """Frame velocities ``(v, omega) (n, 6)`` at the start node (see the module docstring)."""
    w_node = st.extra.get(NODE_VELOCITY)
    if w_node is not None:  # the projected node velocity (consistent with the constraints)
        return np.ascontiguousarray(w_node[grp.vel_cols][:, :6])
    return np.ascontiguousarray(grp.velocities(st, st.pi[grp.vel_cols])[:, :6])


@once_per_time_element
def force_points(te):
    """``Ef (2p, p+1)``: the element's polynomial at the ``2p`` Gauss points ``tau_m`` of ``[0, 1]``
    (on the nodes ``{0, c}``); ``Wf (p, 2p)``: ``w_m l_i(tau_m) / b_i`` (module docstring)."""
    x, w = np.polynomial.legendre.leggauss(2 * te.p)
    tau, wt = (x + 1.0) / 2.0, w / 2.0
    Ef, _ = lagrange_matrices(np.concatenate([[0.0], te.c]), tau)
    L, _ = lagrange_matrices(te.c, tau)  # l_i(tau_m) = L[m, i]
    return np.ascontiguousarray(Ef), np.ascontiguousarray((L * wt[:, None]).T / te.b[:, None])


def n_values(grp, p: int) -> int:
    """Jacobian values per body and internal point of :func:`modal_residual` (``mk.n_entries``)."""
    d = grp.data
    return mk.n_entries(grp.nm, p, d["Ka"].shape[0] > 0, d["cs"].shape[1] + d["ql"].shape[1] > 0)


def kernel_start(grp, st, te) -> tuple:
    """The group's start values and data as the kernels read them (the ``mod`` tuple of
    :mod:`flexmb.dynamics.solve.fused_modal` without its last item): ``(x1, R1, q1, pi1, w1, mass, S0, S1,
    J0, J1, J2, psi0, dpsi, Mq, K, C, cs, cu, cV, ql, qA, Ef, Wf, Kg, Ka)``, contiguous."""
    d = grp.data
    b = grp.bodies
    w1 = node_frame_velocity(grp, st) if d["Ka"].shape[0] > 0 else np.zeros((grp.n, 6))
    Ef, Wf = force_points(te)
    c = np.ascontiguousarray
    return (c(st.x[b]), c(st.R[b]), c(grp.node_q(st)), c(st.pi[grp.vel_cols]), w1, grp.mass, d["S0"], d["S1"],
            d["J0"], d["J1"], d["J2"], d["psi0"], d["dpsi"], d["Mq"], d["K"], d["C"], d["cs"], d["cu"], d["cV"],
            d["ql"], d["qA"], Ef, Wf, d["Kg"], d["Ka"])


def modal_residual(grp, ek, kin, r, trip, gravity) -> None:
    """Rows of the group into ``r (n, p, slots)`` and their Jacobian values into ``trip``."""
    te, p, n = ek.te, ek.te.p, grp.n
    if n == 0:
        return
    d = grp.data
    jac = trip.jacobian
    ka = d["Ka"].shape[0] > 0
    nl = d["cs"].shape[1] + d["ql"].shape[1] > 0
    (x1, _R1, q1, pi1, w1, mass, S0, S1, J0, J1, J2, psi0, dpsi, Mq, K, C, cs, cu, cV, ql, qA, Ef, Wf, Kg,
     Ka) = kernel_start(grp, ek.st, te)
    vals = np.empty((n, p, n_values(grp, p)) if jac else (0, 0, 0))
    mk.modal_residual(te.D, float(ek.h), x1, pi1, q1, kin.U, kin.R, kin.T, mass, S0, S1, J0, J1, J2, psi0, dpsi, Mq, K,
                      C, cs, cu, cV, ql, qA, Ef, Wf, Kg, Ka, w1, np.asarray(gravity, dtype=float), r, vals, jac)
    if not jac:
        return
    if trip.values_only:
        trip.add_diag(None, None, vals)
        return
    rows, cols = jacobian_indices(tuple(int(s) for s in ek.lay.body_start[grp.bodies]), grp.nm, p, ka, nl)
    trip.add_diag(rows, cols, vals)


@lru_cache(maxsize=32)
def jacobian_indices(body_start: tuple, nm: int, p: int, ka: bool, nl: bool) -> tuple[NDArray, NDArray]:
    """:func:`~flexmb.dynamics.bodies.modal_kernels.jacobian_indices` (read-only), kept per argument values
    across models and runs (a function of these integers only: 0.4 ms per run of X3 at 10 modes)."""
    return frozen(mk.jacobian_indices(np.array(body_start, dtype=np.int64), nm, p, ka, nl))
