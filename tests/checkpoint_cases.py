"""Models and runs for the checkpoint tests (tests/test_checkpoint.py), and a command that runs one
of them with checkpoints in a process that kills itself (SIGKILL) at a chosen point of a write::

    python tests/checkpoint_cases.py CASE CHECKPOINT [KILL]

``KILL``: ``fsync:N`` (before the N-th ``os.fsync``: a file of the write not yet on disk),
``replace:N`` (before the N-th ``os.replace``: the new state written beside the old one) or
``replaced:N`` (right after it: the state replaced, the old files not yet deleted); without it the
process runs until it is killed from outside.
"""
from __future__ import annotations

import os
import signal
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import flexmb as fm  # noqa: E402


def pendulum(length: float = 1.0, mass: float = 1.0, gravity: float = 9.81, bodies: int = 1) -> fm.Model:
    """A pendulum of ``bodies`` bobs (spaced by ``length``) on revolute joints about z, under gravity -y."""
    bobs = [fm.RigidBody(f"bob{k}" if k else "bob", mass=mass, inertia=np.full(3, 1e-3),
                         position=(-length * (k + 1), 0.0, 0.0)) for k in range(bodies)]
    pins = [fm.Revolute(f"pin{k}" if k else "pin", bobs[k - 1].name if k else "ground", bobs[k].name,
                        point=(-length * k, 0.0, 0.0), axis=(0, 0, 1)) for k in range(bodies)]
    return fm.Model(bobs, pins, [fm.Gravity((0.0, -gravity, 0.0))])


def chain(n: int = 6) -> fm.Model:
    """``n`` bars of 0.1 m on spherical joints, the first to the ground, horizontal at rest (falls under -z)."""
    L, m, r = 0.1, 0.05, 0.002
    inertia = (0.5 * m * r * r, m * (3 * r * r + L * L) / 12, m * (3 * r * r + L * L) / 12)
    bars = [fm.RigidBody(f"bar{i}", mass=m, inertia=inertia, position=(L * (i + 0.5), 0.0, 0.0)) for i in range(n)]
    joints = [fm.Spherical(f"s{i}", "ground" if i == 0 else f"bar{i - 1}", f"bar{i}", point=(L * i, 0.0, 0.0))
              for i in range(n)]
    return fm.Model(bars, joints, [fm.Gravity((0.0, 0.0, -9.81))])


@lru_cache(maxsize=None)
def bar_data(E: float = 7e7):
    from flexmb.fe.mesh import Material
    from flexmb.fe.mesh.structured import structured_box

    mesh = structured_box((1.0, 0.05, 0.05), (6, 1, 1), "hexahedron20", origin=(0.0, -0.025, -0.025),
                          material=Material(E=E, nu=0.3, rho=3000.0))
    return fm.build_flexible_body(mesh, interfaces=["xmin", "xmax"], n_modes=3, method="craig-bampton")


def flexible_bar(E: float = 7e7) -> fm.Model:
    """A Craig-Bampton bar on a hub revolute, spinning at 1 rad/s with initial modal coordinates."""
    f = fm.FlexibleBody("F", bar_data(E), modes=[0, 6], q0=(0.02, 0.001), angular_velocity=(0, 0, 1.0))
    return fm.Model([f], [fm.Revolute("hub", "ground", ("F", "xmin"), axis=(0, 0, 1))])


#: case -> (model factory, simulate arguments)
CASES = {
    "pendulum": (pendulum, dict(t_end=1.0, h=0.02, p=2)),
    "chain": (chain, dict(t_end=0.3, h=5e-3, p=3)),
    "adaptive": (chain, dict(t_end=0.5, h=0.01, p=2, rtol=0.0, atol=1e-5)),
    "flexible": (flexible_bar, dict(t_end=0.3, h=0.02, p=2)),
    # the same run four times as long, for the kills at random moments (up to 0.2 s after a write): the
    # short one now ends within that delay, and a resumed leg had nothing left to run
    "flexible-long": (flexible_bar, dict(t_end=1.2, h=0.02, p=2)),
}


def run(case: str, **kw) -> fm.Solution:
    factory, args = CASES[case]
    return fm.simulate(factory(), show_progress=False, **{**args, **kw})


def _kill_at(spec: str) -> None:
    """Make this process SIGKILL itself at the point ``spec`` of a checkpoint write."""
    what, n = spec.split(":")
    count = [0]
    name = "replace" if what.startswith("replace") else what
    original = getattr(os, name)

    def wrapped(*args, **kw):
        count[0] += 1
        if count[0] == int(n) and what != "replaced":
            os.kill(os.getpid(), signal.SIGKILL)
        out = original(*args, **kw)
        if count[0] == int(n) and what == "replaced":
            os.kill(os.getpid(), signal.SIGKILL)
        return out

    setattr(os, name, wrapped)


if __name__ == "__main__":
    case, target = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 3:
        _kill_at(sys.argv[3])
    run(case, checkpoint=target, checkpoint_every=1e-9)  # a write after every time element
    sys.exit(3)  # not killed: the test's kill point was never reached
