"""Inertial preload stiffening of modal bodies in the dynamics (issue 7, section 3 b): the frame's
angular-velocity products *and* its accelerations (angular acceleration, frame-origin acceleration
minus gravity) scale the unit preload stiffnesses of the body data.

Physics checked: a cantilever hanging under gravity vibrates faster and a standing one slower, by
exactly the unit preload stiffness of ``-g`` (the clamped frame does not accelerate); a body in free
fall feels no preload at all (``a - g = 0``, the equivalence principle); and a cantilever clamped
to a base accelerated by a force in zero gravity vibrates like the one standing in gravity.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

import flexmb as fm
from flexmb.fe.reduction.body_data import build_flexible_body
from flexmb.fe.mesh import Material
from flexmb.fe.reduction import PRELOAD_NAMES
from flexmb.fe.mesh.structured import structured_box

G = 9.81
A_X = PRELOAD_NAMES.index("a_x")


@lru_cache(maxsize=None)
def cantilever():
    """1 m x 5 cm x 5 cm hex20 bar, soft (E = 7e7 Pa, rho = 3000): first bending 7.8 rad/s, and the
    self-weight parameter rho A g L^3 / EI = 2.0 (buckling under self-weight at 7.84)."""
    mesh = structured_box((1.0, 0.05, 0.05), (6, 1, 1), "hexahedron20", origin=(0.0, -0.025, -0.025),
                          material=Material(E=7e7, nu=0.3, rho=3000.0))
    return build_flexible_body(mesh, interfaces=["xmin"], n_modes=2)


def _period(sol, name="F"):
    q = sol.body(name).modal[:, 0]
    t = sol.t
    k = np.nonzero(np.sign(q[1:]) != np.sign(q[:-1]))[0]
    tz = t[k] - q[k] * (t[k + 1] - t[k]) / (q[k + 1] - q[k])
    return 2 * np.mean(np.diff(tz))


def _predicted(data, accel_minus_g_body):
    """omega of mode 0 alone under the unit preload stiffness scaled by ``a - g`` (body axes)."""
    Kg = data.preload_stiffness[A_X:A_X + 3, 0, 0]
    return np.sqrt(data.omega2[0] + float(np.dot(accel_minus_g_body, Kg)))


# body x axis pointing down (hanging) or up (standing): rotation about y by +-90 degrees
HANG = {"rotvec": (0.0, np.pi / 2, 0.0)}
STAND = {"rotvec": (0.0, -np.pi / 2, 0.0)}


@pytest.mark.parametrize("pose, sign", [(HANG, +1), (STAND, -1)])
def test_gravity_preload_of_a_clamped_cantilever(pose, sign):
    data = cantilever()
    om0 = np.sqrt(data.omega2[0])
    # a - g in body axes: the frame is clamped (a = 0); hanging: g points along +x_body
    s = np.array([-sign * G, 0.0, 0.0])
    om = _predicted(data, s)
    assert sign * (om - om0) > 0.05 * om0  # hanging stiffens, standing softens, by several %
    T = 2 * np.pi / om
    b = fm.FlexibleBody("F", data, modes=[0], q0=[1e-4], stiffening="preload", damping=0.0, orientation=pose)
    model = fm.Model([b], [fm.Fixed("clamp", "ground", ("F", "xmin"))], [fm.Gravity((0, 0, -G))])
    sol = fm.simulate(model, 3 * T, T / 40, p=2)
    assert abs(_period(sol) / T - 1) < 1e-4, (_period(sol), T)


def test_free_fall_feels_no_preload():
    """A vibrating body falling freely: a - g = 0 (to first order in the vibration), so it vibrates
    exactly as the same body without any preload, although gravity and the frame acceleration are
    each large (the clamped cantilever above shifts its frequency by 25 % under either alone)."""
    data = cantilever()
    T0 = 2 * np.pi / np.sqrt(data.omega2[0])

    def fall(stiffening):
        b = fm.FlexibleBody("F", data, modes=[0], q0=[1e-4], stiffening=stiffening, damping=0.0, orientation=STAND)
        return fm.simulate(fm.Model([b], [], [fm.Gravity((0, 0, -G))]), 3 * T0, T0 / 40, p=2)

    pre, lin = fall("preload"), fall("none")
    q_pre, q_lin = pre.body("F").modal[:, 0], lin.body("F").modal[:, 0]
    # what remains is second order in the vibration (the recoil of the vibration accelerates the
    # frame by O(q), times K_a q): measured 2.2e-6 of the amplitude; a missing or misplaced g
    # would shift the frequency by 25 % (tens of % of the amplitude after 3 periods)
    assert np.abs(q_pre - q_lin).max() < 1e-4 * np.abs(q_lin).max()
    assert pre.body("F").position[-1, 2] < -0.5 * G * (3 * T0) ** 2 * 0.99  # it did fall


def test_accelerated_base_is_equivalent_to_gravity():
    """Zero gravity, the cantilever standing on a rigid base that a constant force accelerates
    along the beam axis at g: the same frequency as the standing cantilever in gravity."""
    data = cantilever()
    om = _predicted(data, np.array([G, 0.0, 0.0]))  # a = +g along x_body (up), no gravity
    T = 2 * np.pi / om
    m_base = 1e4 * data.mass  # the beam's vibration does not move the base measurably
    base = fm.RigidBody("base", m_base, (1.0, 1.0, 1.0) * np.array(m_base))
    b = fm.FlexibleBody("F", data, modes=[0], q0=[1e-4], stiffening="preload", damping=0.0, orientation=STAND)
    push = fm.PointForce("base", (0.0, 0.0, G * (m_base + data.mass)), name="push")
    model = fm.Model([base, b], [fm.Fixed("weld", "base", ("F", "xmin"))], [push])
    sol = fm.simulate(model, 3 * T, T / 40, p=2)
    assert abs(_period(sol) / T - 1) < 1e-3, (_period(sol), T)
