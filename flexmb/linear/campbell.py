"""Campbell diagram: frequencies of the steady states against the spin speed, :func:`campbell`.

At every speed ``Omega``: :func:`flexmb.equilibrium` with ``steady=True`` (the model's revolute drive
to the ground set to ``Omega``), :func:`flexmb.linearize` (perturbations in the turning frame) and
:func:`flexmb.eigen`.  Modes are followed from one speed to the next by their modal assurance
criterion (``MAC = |a^H b|^2 / (|a|^2 |b|^2)`` of the mode shapes in the bodies' coordinates), so a
column of the result is one mode even where frequencies cross.  *Critical speeds* are where a
frequency meets an engine order ``k Omega / 2 pi`` (linear interpolation between the speeds);
*unstable* speeds those with a divergence or flutter eigenvalue.  Frequencies are those of the
turning frame (a blade's, a rotor's as seen by the rotor).

*Whirl* (:func:`whirl`): a mode of a rotor modelled in the turning frame whirls about the spin axis
``e`` (``omega = Omega e``, ``Omega > 0``); its lateral motion (every body's translation and rotation
components perpendicular to ``e``, and a flexible body's FE node displacements) splits into a part
turning counter-clockwise about ``e`` (amplitude ``|u + i v|`` of each pair ``(u, v)`` of components
along ``e1``, ``e2``, ``e1 x e2 = e``) and one turning clockwise (``|u - i v|``).  When the
counter-clockwise share of the summed squares is at least ``WHIRL_SHARE`` the mode turns at ``+omega_r``
in the turning frame (at ``-omega_r`` when the clockwise share is), ``omega_r`` its frequency there;
in the fixed frame at ``sigma = +-omega_r + Omega``: a *forward* whirl (with the spin) when
``sigma > 0``, *backward* when ``sigma < 0``, at the fixed-frame frequency ``|sigma| / 2 pi``.  Zero
modes, modes without lateral motion and modes whose two circular parts are closer than that (planar
motion, the degenerate pairs at ``Omega = 0``) are undecidable: ``None``.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from flexmb.errors import ModelError
from flexmb.model.model import GROUND, Model, Revolute

#: smallest share of the lateral motion turning one way for a whirl direction to be decided
WHIRL_SHARE = 0.8


@dataclass
class CampbellResult:
    """``speeds (ns,)`` [rad/s]; ``frequency``, ``damping_ratio (ns, n)`` [Hz, -] (one column per
    followed mode); ``kind (ns, n)`` (``"stable"``, ``"zero"``, ``"divergence"``, ``"flutter"``);
    ``orders``: the engine orders of :meth:`critical_speeds`; ``whirl (ns, n)``: ``"forward"``,
    ``"backward"`` or None (undecidable, module docstring) in the fixed frame; ``fixed_frequency (ns,
    n)`` [Hz]: the frequency in the fixed frame (NaN where the whirl is undecidable)."""

    speeds: NDArray
    frequency: NDArray
    damping_ratio: NDArray
    kind: NDArray
    orders: tuple = (1, 2, 3)
    whirl: NDArray = None
    fixed_frequency: NDArray = None

    @property
    def unstable_speeds(self) -> NDArray:
        """Speeds [rad/s] at which some mode diverges or flutters."""
        bad = np.isin(self.kind, ["divergence", "flutter"]).any(axis=1)
        return self.speeds[bad]

    def critical_speeds(self, frame: str = "rotating"):
        """A pandas DataFrame of the crossings of each mode with each engine order: ``mode``, ``order``,
        ``speed_rad_s``, ``speed_rpm``, ``frequency_Hz``, ``whirl`` (the mode's label at the nearer
        speed).  ``frame="rotating"``: the turning frame's frequencies (a blade excited by loads fixed in
        space); ``"fixed"``: the fixed-frame frequencies of the decided whirls (a rotor's critical speeds:
        its forward whirl meeting the unbalance at order 1)."""
        import pandas as pd

        if frame not in ("rotating", "fixed"):
            raise ModelError(f"critical_speeds: frame={frame!r}; use 'rotating' or 'fixed'")
        F = self.frequency if frame == "rotating" else self.fixed_frequency
        labels = self.whirl if self.whirl is not None else np.full(F.shape, None, dtype=object)
        rows = []
        W = self.speeds
        for k in self.orders:
            line = k * W / (2 * np.pi)
            for m in range(F.shape[1]):
                d = F[:, m] - line
                for i in np.nonzero(np.sign(d[:-1]) * np.sign(d[1:]) < 0)[0]:
                    t = d[i] / (d[i] - d[i + 1])
                    w = W[i] + t * (W[i + 1] - W[i])
                    rows.append(dict(mode=m, order=k, speed_rad_s=w, speed_rpm=w * 30 / np.pi,
                                     frequency_Hz=k * w / (2 * np.pi), whirl=labels[i + int(t > 0.5), m]))
        return pd.DataFrame(rows, columns=["mode", "order", "speed_rad_s", "speed_rpm", "frequency_Hz", "whirl"])

    def table(self):
        """A pandas DataFrame, one row per speed: the speed [rad/s, rpm] and ``f<m>_Hz`` per mode."""
        import pandas as pd

        out = {"speed_rad_s": self.speeds, "speed_rpm": self.speeds * 30 / np.pi}
        for m in range(self.frequency.shape[1]):
            out[f"f{m}_Hz"] = self.frequency[:, m]
        return pd.DataFrame(out)

    def plot(self, path=None, ax=None, rpm: bool = True):
        """Frequencies against speed with the engine-order lines; unstable points marked; saved to
        ``path``."""
        import matplotlib

        if path is not None and ax is None:
            matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        fig = None
        if ax is None:
            fig, ax = plt.subplots(figsize=(6, 4))
        x = self.speeds * (30 / np.pi if rpm else 1.0)
        for m in range(self.frequency.shape[1]):
            ax.plot(x, self.frequency[:, m], "-o", ms=3, label=f"mode {m}")
            bad = np.isin(self.kind[:, m], ["divergence", "flutter"])
            if bad.any():
                ax.plot(x[bad], self.frequency[bad, m], "rx")
        top = np.nanmax(self.frequency) if self.frequency.size else 1.0
        for k in self.orders:
            ax.plot(x, k * self.speeds / (2 * np.pi), "k--", lw=0.7)
        ax.set_ylim(0, 1.05 * top)
        ax.set_xlabel("speed [rpm]" if rpm else "speed [rad/s]")
        ax.set_ylabel("frequency [Hz]")
        ax.legend(fontsize=7)
        if path is not None and fig is not None:
            fig.savefig(path, dpi=120, bbox_inches="tight")
            plt.close(fig)
        return ax


def with_speed(model: Model, speed: float) -> Model:
    """``model`` with its revolute drive to the ground (``angular_velocity=``) set to ``speed``."""
    joints = list(model.joints)
    for k, jt in enumerate(joints):
        if isinstance(jt, Revolute) and jt.angular_velocity is not None and GROUND in (jt.body_a, jt.body_b):
            joints[k] = replace(jt, angular_velocity=float(speed))
            return replace(model, joints=joints)
    raise ModelError("campbell: the model has no revolute joint to the ground with an angular_velocity drive; "
                     "give one (its rate is swept), or pass build(speed) -> Model")


def _mac(A: NDArray, B: NDArray) -> NDArray:
    num = np.abs(A.conj().T @ B) ** 2
    return num / np.outer(np.sum(np.abs(A) ** 2, axis=0), np.sum(np.abs(B) ** 2, axis=0))


def campbell(model, speeds, n: int = 6, *, orders=(1, 2, 3), t: float = 0.0) -> CampbellResult:
    """Frequencies of the ``n`` lowest modes of the steady states at ``speeds`` [rad/s].

    ``model``: a Model with a revolute drive to the ground (``angular_velocity=``; its rate is set to
    each speed), or ``build(speed) -> Model``.  Each speed starts its equilibrium from the previous
    one's (continuation).
    """
    speeds = np.asarray(speeds, dtype=float).reshape(-1)
    if speeds.size < 1 or not np.all(np.isfinite(speeds)):
        raise ModelError(f"campbell: speeds={speeds!r}; give finite spin speeds [rad/s]")
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ModelError(f"campbell: n={n!r}; give a positive number of modes")
    from flexmb.linear.eigen import eigen
    from flexmb.linear.equilibrium import equilibrium
    from flexmb.linear.linearize import linearize

    build = model if callable(model) and not isinstance(model, Model) else (lambda w, m=model: with_speed(m, w))
    F = np.full((speeds.size, n), np.nan)
    Z = np.full((speeds.size, n), np.nan)
    K = np.full((speeds.size, n), "", dtype=object)
    Wh = np.full((speeds.size, n), None, dtype=object)
    Ff = np.full((speeds.size, n), np.nan)
    prev_modes, start, Q = None, None, None
    for i, w in enumerate(speeds):
        m = build(w)
        if start is not None:  # continuation: the previous steady configuration and reactions, the new rate
            m = replace(start, joints=m.joints)
        eq = equilibrium(m, t, steady=True, stability=False, reactions=Q)
        start, Q = eq.model, eq.reactions
        res = eigen(linearize(eq), n)
        modes = res.modes
        order = np.arange(min(n, res.eigenvalues.size))
        if prev_modes is not None and modes.shape[1]:
            mac = _mac(prev_modes, modes)
            order = np.full(prev_modes.shape[1], -1)
            free = set(range(modes.shape[1]))
            for a in np.argsort(-mac.max(axis=1)):  # best matches first
                if not free:
                    break
                b = max(free, key=lambda j: mac[a, j])
                order[a] = b
                free.discard(b)
            order = order[order >= 0]
        k = order.size
        F[i, :k] = res.frequency[order]
        Z[i, :k] = res.damping_ratio[order]
        K[i, :k] = res.kind[order]
        for c, j in enumerate(order):
            Wh[i, c], Ff[i, c] = whirl(res, int(j), eq.spin.omega)
        prev_modes = modes[:, order]
    return CampbellResult(speeds=speeds, frequency=F, damping_ratio=Z, kind=K, orders=tuple(orders), whirl=Wh,
                          fixed_frequency=Ff)


def whirl(res, k: int, omega) -> tuple:
    """``(label, fixed-frame frequency [Hz])`` of mode ``k`` of the eigen result ``res`` of a steady
    rotation at ``omega (3,)`` [rad/s] (module docstring): ``("forward" | "backward", f)`` or
    ``(None, nan)``."""
    om = np.asarray(omega, float)
    W = float(np.linalg.norm(om))
    if W == 0.0 or res.kind[k] == "zero":
        return None, np.nan
    e = om / W
    e1 = np.cross(e, [1.0, 0.0, 0.0] if abs(e[0]) < 0.9 else [0.0, 1.0, 0.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(e, e1)
    names = res.coordinates
    v = res.modes[:, k]
    vecs = []  # (m, 3) complex lateral vectors: translations, rotations, FE nodes
    model = res.model
    for body in model.bodies:
        for part in (("x", "y", "z"), ("theta_x", "theta_y", "theta_z")):
            idx = [names.index(f"{body.name}:{c}") for c in part]
            vecs.append(v[idx][None, :])
        if hasattr(body, "data"):
            vecs.append(res.node_displacements(k, body.name))
    d = np.concatenate(vecs)
    u, w = d @ e1, d @ e2
    ccw = float(np.sum(np.abs(u + 1j * w) ** 2))
    cw = float(np.sum(np.abs(u - 1j * w) ** 2))
    if ccw + cw <= 1e-12 * float(np.sum(np.abs(d) ** 2)) or max(ccw, cw) < WHIRL_SHARE * (ccw + cw):
        return None, np.nan
    sigma = (1.0 if ccw > cw else -1.0) * abs(res.eigenvalues[k].imag) + W
    if sigma == 0.0:
        return None, np.nan
    return ("forward" if sigma > 0 else "backward"), abs(sigma) / (2 * np.pi)
