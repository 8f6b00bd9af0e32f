"""Shared fixtures: small models used across the engine tests."""
from __future__ import annotations

import numpy as np
import pytest

from flexmb.model import Gravity, Model, Revolute, RigidBody


def bar_inertia(m: float, L: float, r: float = 0.01) -> np.ndarray:
    """Principal inertia of a slender cylindrical bar along its x axis [kg m^2]."""
    return np.array([0.5 * m * r * r, m * (3 * r * r + L * L) / 12, m * (3 * r * r + L * L) / 12])


@pytest.fixture
def pendulum():
    """IFToMM A01: 1 kg point mass (tiny inertia) on a massless 1 m rod, released horizontally at x = -1."""
    body = RigidBody("mass", mass=1.0, inertia=np.full(3, 1e-3), position=(-1.0, 0.0, 0.0))
    pin = Revolute("pin", "ground", "mass", point=(0, 0, 0), axis=(0, 0, 1))
    return Model([body], [pin], [Gravity((0, -9.81, 0))])
