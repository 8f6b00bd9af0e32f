"""The force laws, compiled: the one implementation of the wrench of every force element and of its
derivatives, called by the general element evaluator (:mod:`flexmb.dynamics.elements.forces`) and by
the fused evaluator (:mod:`flexmb.dynamics.solve.fused`).

A force law returns the wrench ``(f, m)`` (force; moment about the attachment point; inertial) at the
Gauss points and its derivatives with respect to the attachment poses ``(dx, psi)`` and velocities
``(v, omega)``; the body types turn it into generalized forces (the attachments' wrench map).  Gravity
is a body-type term (each body type knows its mass distribution).  User functions of time are
evaluated in Python before the kernels run (values at the Gauss points); state callbacks are
differentiated by central differences in :mod:`flexmb.dynamics.elements.forces` (the only place
flexmb does so).
"""
from __future__ import annotations

import numpy as np

from flexmb.dynamics.kernels import jit_kernel, scratch  # the kernels' compilation (cache, no fastmath)


@jit_kernel
def spring_damper(d, vrel, k, c, L0, Fb, dx, dv, jac):
    """Linear spring-dampers between two attachment points: the force on B ``Fb = -f e`` with
    ``f = k (L - L0) + c Ldot``, ``L = |d|``, ``e = d / L``, ``Ldot = e . vrel`` (``A`` receives
    ``-Fb``), for ``d = x_B - x_A``, ``vrel = v_B - v_A`` ``(s, p, 3)`` and ``k``, ``c``, ``L0 (s,)``.

    ``jac``: ``dx (s, p, 6, 6)`` = ``d(Fb, 0)/d(dx_B, psi_B)`` (``-`` that for A) and ``dv`` likewise for
    the velocities ``(v_B, omega_B)``; only the force / translation blocks are nonzero::

        dFb/dd = -(e (k e + c P vrel)^T + f P),   P = (I - e e^T) / L,     dFb/dvrel = -c e e^T
    """
    s, p = d.shape[0], d.shape[1]
    P = scratch((3, 3))
    for q in range(s):
        for i in range(p):
            d0, d1, d2 = d[q, i, 0], d[q, i, 1], d[q, i, 2]
            L = max(np.sqrt(d0 * d0 + d1 * d1 + d2 * d2), 1e-300)
            e = (d0 / L, d1 / L, d2 / L)
            v = (vrel[q, i, 0], vrel[q, i, 1], vrel[q, i, 2])
            Ldot = e[0] * v[0] + e[1] * v[1] + e[2] * v[2]
            f = k[q] * (L - L0[q]) + c[q] * Ldot
            for a in range(3):
                Fb[q, i, a] = -f * e[a]
            if not jac:
                continue
            for a in range(6):
                for b in range(6):
                    dx[q, i, a, b] = 0.0
                    dv[q, i, a, b] = 0.0
            for a in range(3):
                for b in range(3):
                    P[a, b] = ((1.0 if a == b else 0.0) - e[a] * e[b]) / L
            for b in range(3):
                pv = v[0] * P[0, b] + v[1] * P[1, b] + v[2] * P[2, b]  # (P vrel)_b
                for a in range(3):
                    dx[q, i, a, b] = -(e[a] * (k[q] * e[b] + c[q] * pv) + f * P[a, b])
                    dv[q, i, a, b] = -c[q] * e[a] * e[b]


@jit_kernel
def body_frame_load(R, vals, k0, wrench, dW, jac):
    """A point force (``k0 = 0``) or torque (``k0 = 3``) given in the body frame of its attachment:
    ``wrench[..., k0:k0+3] = R v`` (the other components zero) for the attachment rotations ``R
    (n, p, 3, 3)`` and the values ``vals (p, 3)`` at the Gauss points, and (``jac``) its derivative with
    respect to the attachment's rotation increment ``psi``: ``dW[..., k0:k0+3, 3:] = -skew(R v)``
    (``dW (n, p, 6, 6)``, zero elsewhere)."""
    n, p = R.shape[0], R.shape[1]
    for q in range(n):
        for i in range(p):
            for a in range(6):
                wrench[q, i, a] = 0.0
            for a in range(3):
                wrench[q, i, k0 + a] = R[q, i, a, 0] * vals[i, 0] + R[q, i, a, 1] * vals[i, 1] + R[q, i, a, 2] * vals[i, 2]
            if not jac:
                continue
            for a in range(6):
                for b in range(6):
                    dW[q, i, a, b] = 0.0
            w0, w1, w2 = wrench[q, i, k0], wrench[q, i, k0 + 1], wrench[q, i, k0 + 2]
            dW[q, i, k0, 4] = w2
            dW[q, i, k0, 5] = -w1
            dW[q, i, k0 + 1, 3] = -w2
            dW[q, i, k0 + 1, 5] = w0
            dW[q, i, k0 + 2, 3] = w1
            dW[q, i, k0 + 2, 4] = -w0
