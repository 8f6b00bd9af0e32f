"""Standard models used by the demo, the examples and the validation cases (one builder per model).

Every builder returns an immutable :class:`flexmb.Model`; the constants document the data and units.
"""
from __future__ import annotations

import math

import numpy as np

import flexmb as fm

# ---------------------------------------------------------------- Borri et al. 15-link chain (ft, slug, s)
G = 32.174  # ft/s^2
LENGTH = 1.0  # ft
RADIUS = 0.5 / 12.0  # ft
MASS = 490.0 / G * math.pi * RADIUS ** 2 * LENGTH  # slug
I_T = MASS * (LENGTH ** 2 / 12 + RADIUS ** 2 / 4)
I_A = MASS * RADIUS ** 2 / 2
N_BARS = 15


def chain15_points(outer_deg: float = 60.0) -> np.ndarray:
    """Points 1..16, shape (16, 3): three equilibrium arches in the y-z plane."""
    to = math.radians(outer_deg)
    ti = math.atan(0.5 * math.tan(to))
    pts = [np.zeros(3)]
    for a in [-to, -ti, 0.0, ti, to] * 3:
        pts.append(pts[-1] + LENGTH * np.array([0.0, math.cos(a), math.sin(a)]))
    return np.array(pts)


def chain15_model() -> fm.Model:
    """Bars ``bar1`` .. ``bar15`` (body y along the bar), spherical joints ``P1`` (ground) .. ``P15``."""
    pts = chain15_points()
    bodies, joints = [], []
    for i in range(N_BARS):
        d = pts[i + 1] - pts[i]
        R = fm.orientation(axis=(1, 0, 0), angle=math.atan2(d[2], d[1]))  # body y along the bar
        bodies.append(fm.RigidBody(f"bar{i + 1}", mass=MASS, inertia=(I_T, I_A, I_T),
                                   position=0.5 * (pts[i] + pts[i + 1]), orientation=R))
        joints.append(fm.Spherical(f"P{i + 1}", "ground" if i == 0 else f"bar{i}", f"bar{i + 1}", point=pts[i]))
    return fm.Model(bodies, joints, [fm.Gravity((0, 0, -G))], units="ft-slug-s")
