"""Body kinematics at the internal (Gauss) points and at the constraint points of a time element.

Everything is batched over bodies and points; the ground is appended as body ``nb`` with zero
motion so that joint and force code can gather attachment data without branches.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from flexmb import rotations as rot
from flexmb.dynamics.layout import BPI, BTH, BW, BX, JLAM, JNA, JNB, JPHI, JQ, JS, Layout
from flexmb.dynamics.system import CompiledModel, ElementStart
from flexmb.dynamics.time_elements import TimeElement


@dataclass
class Kin:
    """Unknowns unpacked and derived kinematic quantities, shapes ``(nb+1, p, ...)`` for bodies
    (last entry: the ground) and ``(nj, p, ...)`` for joints.

    Gauss points: ``X, TH, PI, W, R, T (tangent), Ti (tangent inverse)``.
    Constraint points (``tau_c``): ``UX, UTH, UR, UT``.
    Joints: ``S, PHI, LAM, Q, NA, NB`` and at constraint points ``US, UPHI``.
    """

    te: TimeElement
    h: float
    t_gauss: NDArray
    t_cons: NDArray
    X: NDArray
    TH: NDArray
    PI: NDArray
    W: NDArray
    R: NDArray
    T: NDArray
    UX: NDArray
    UTH: NDArray
    UR: NDArray
    UT: NDArray
    S: NDArray
    PHI: NDArray
    LAM: NDArray
    Q: NDArray
    NA: NDArray
    NB: NDArray
    US: NDArray
    UPHI: NDArray


def _poly(te: TimeElement, M: NDArray, y1: NDArray, Y: NDArray) -> NDArray:
    """``M[k,0] y1 + sum_j M[k,1+j] Y_j`` for ``y1 (n,d)``, ``Y (n,p,d)`` -> ``(n,p,d)``."""
    return M[None, :, 0, None] * y1[:, None, :] + np.einsum("kj,njd->nkd", M[:, 1:], Y)


def unpack(cm: CompiledModel, lay: Layout, te: TimeElement, st: ElementStart, h: float, U: NDArray) -> Kin:
    nb, p = cm.nb, te.p
    B = lay.body_view(U)
    Jv = lay.joint_view(U)
    X, TH, PI, W = B[..., BX:BX + 3], B[..., BTH:BTH + 3], B[..., BPI:BPI + 6], B[..., BW:BW + 6]
    R = rot.exp(TH) @ st.R[:, None]
    T = rot.tangent(TH)
    UX = _poly(te, te.E, st.x, X)
    UTH = _poly(te, te.E, np.zeros_like(st.x), TH)
    UR = rot.exp(UTH) @ st.R[:, None]
    UT = rot.tangent(UTH)

    def g(a, val):
        gshape = (1, p) + a.shape[2:]
        return np.concatenate([a, np.broadcast_to(np.asarray(val, float), gshape)], axis=0)

    eye = np.eye(3)
    kin = Kin(
        te=te, h=h, t_gauss=st.t + h * te.c, t_cons=st.t + h * te.tau_c,
        X=g(X, 0.0), TH=g(TH, 0.0), PI=g(PI, 0.0), W=g(W, 0.0), R=g(R, eye), T=g(T, eye),
        UX=g(UX, 0.0), UTH=g(UTH, 0.0), UR=g(UR, eye), UT=g(UT, eye),
        S=Jv[..., JS:JS + 3], PHI=Jv[..., JPHI:JPHI + 3], LAM=Jv[..., JLAM:JLAM + 6], Q=Jv[..., JQ:JQ + 6],
        NA=Jv[..., JNA:JNA + 6], NB=Jv[..., JNB:JNB + 6],
        US=_poly(te, te.E, st.s, Jv[..., JS:JS + 3]),
        UPHI=_poly(te, te.E, np.zeros_like(st.s), Jv[..., JPHI:JPHI + 3]),
    )
    return kin
