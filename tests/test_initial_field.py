"""Initial state of a flexible body from nodal fields (FlexibleBody.from_field): the modal coordinates,
their rates and the frame's motion recovered exactly from fields of the reduced body, the kinetic
energy equal to that of the nodal velocities with the consistent mass, and clear errors for fields
the modes cannot reproduce, for too few nodes and for arguments that the fit sets."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

import flexmb as fm
from flexmb.errors import ModelError
from flexmb.fe.elements.assembly import assemble_scalar_mass
from flexmb.rotations.so3 import exp

STEEL = fm.Material(210e9, 0.3, 7850.0)
R0 = exp(np.array([0.1, 0.2, 0.3]))
X0 = np.array([1.0, 2.0, 3.0])


@lru_cache(maxsize=None)
def rod():
    mesh = fm.structured_box((0.3, 0.008, 0.008), (12, 1, 1), "hexahedron20", origin=(0, -0.004, -0.004),
                             material=STEEL)
    # the tests read the shapes, inertia invariants and interfaces, no quartic term: built without it
    # (those are array_equal with and without)
    return mesh, fm.build_flexible_body(mesh, interfaces=["xmin", "xmax"], n_modes=4, stresses=False, quartic=False)


def motion(data, seed=0):
    rng = np.random.default_rng(seed)
    nm = data.n_modes
    return 1e-5 * rng.normal(size=nm), 1e-3 * rng.normal(size=nm), np.array([0.5, -0.2, 0.1]), np.array([0.3, -1.0, 2.0])


def fields(data, q, qd, V, w, R=R0):
    """u = Phi q (body frame) and v = V + w x R (X + Phi q) + R Phi qd (inertial) at every node."""
    X, Phi = data.points, data.mode_shapes
    r = (X + Phi @ q) @ R.T
    return Phi @ q, V + np.cross(w, r) + (Phi @ qd) @ R.T


def test_fields_of_the_reduced_body_give_back_its_state():
    _, data = rod()
    q, qd, V, w = motion(data)
    u, v = fields(data, q, qd, V, w)
    body = fm.FlexibleBody.from_field("rod", data, displacement=u, node_velocity=v, position=X0, orientation=R0)
    np.testing.assert_allclose(body.q0, q, rtol=0, atol=1e-12 * np.abs(q).max())
    np.testing.assert_allclose(body.qd0, qd, rtol=0, atol=1e-10 * np.abs(qd).max())
    np.testing.assert_allclose(body.velocity, V, atol=1e-12)
    np.testing.assert_allclose(body.angular_velocity, w, atol=1e-10)
    np.testing.assert_allclose(body.position, X0, atol=1e-15)
    np.testing.assert_allclose(body.orientation, R0, atol=1e-15)
    # a small rigid part of the displacement moves the frame: x + R t, R exp(theta)
    t, theta = np.array([1e-4, -2e-4, 3e-5]), np.array([2e-4, -1e-4, 5e-4])
    body = fm.FlexibleBody.from_field("rod", data, displacement=u + t + np.cross(theta, data.points),
                                      position=X0, orientation=R0)
    np.testing.assert_allclose(body.position, X0 + R0 @ t, atol=1e-15)
    np.testing.assert_allclose(body.orientation, R0 @ exp(theta), atol=1e-14)
    np.testing.assert_allclose(body.q0, q, atol=1e-12 * np.abs(q).max())
    assert np.all(body.qd0 == 0) and np.all(body.velocity == 0)


def test_fitted_kinetic_energy_is_that_of_the_nodal_velocities():
    """1/2 W^T M(q) W of the fitted state (exact mass matrix of the reduced field) equals
    1/2 v^T M v of the nodal velocity field with the consistent FE mass."""
    from modal_reference_matrices import mass_polynomial  # the dense M(q) of the NumPy reference

    mesh, data = rod()
    q, qd, V, w = motion(data, seed=3)
    _, v = fields(data, q, qd, V, w)
    body = fm.FlexibleBody.from_field("rod", data, displacement=data.mode_shapes @ q, node_velocity=v,
                                      position=X0, orientation=R0)
    Ms = assemble_scalar_mass(mesh).toarray()
    T_field = 0.5 * np.einsum("na,nm,ma->", v, Ms, v)
    M0, M1, M2 = mass_polynomial(data.invariants, data.n_modes)
    M = M0 + np.einsum("k,krs->rs", body.q0, M1) + np.einsum("k,l,klrs->rs", body.q0, body.q0, M2)
    W = np.concatenate([R0.T @ body.velocity, R0.T @ body.angular_velocity, body.qd0])
    assert 0.5 * W @ M @ W == pytest.approx(T_field, rel=1e-10)


def test_fields_the_modes_cannot_reproduce_are_errors():
    _, data = rod()
    rng = np.random.default_rng(5)
    noise = 1e-6 * rng.normal(size=data.points.shape)
    with pytest.raises(ModelError, match=r"from_field\('rod'\): the displacement is not a motion of the reduced body: "
                                         r"relative RMS residual .* > tol = 0.01 \(worst at node \d+"):
        fm.FlexibleBody.from_field("rod", data, displacement=noise)
    body = fm.FlexibleBody.from_field("rod", data, displacement=noise, tol=10.0)  # accepted when asked
    assert body.q0.shape == (data.n_modes,)
    with pytest.raises(ModelError, match="node velocity is not a motion"):
        fm.FlexibleBody.from_field("rod", data, node_velocity=noise)
    with pytest.raises(ModelError, match=r"does not determine .* give the field at more nodes"):
        fm.FlexibleBody.from_field("rod", data, displacement=np.zeros((1, 3)), nodes=[5])
    turned = np.cross([0.0, 0.0, 0.2], data.points)  # 0.2 rad as a displacement field
    with pytest.raises(ModelError, match=r"turns the body by 0.2 rad.*give the rotation as orientation="):
        fm.FlexibleBody.from_field("rod", data, displacement=turned)


def test_from_field_arguments_are_checked():
    _, data = rod()
    n = data.n_nodes
    with pytest.raises(ModelError, match=r"q0, velocity given with the fields that set them; drop them"):
        fm.FlexibleBody.from_field("rod", data, displacement=np.zeros((n, 3)), q0=np.zeros(data.n_modes),
                                   velocity=(1, 0, 0))
    with pytest.raises(ModelError, match=r"displacement must be finite nodal vectors of shape \(%d, 3\)" % n):
        fm.FlexibleBody.from_field("rod", data, displacement=np.zeros((n - 1, 3)))
    with pytest.raises(ModelError, match=r"node_velocity must be finite nodal vectors of shape \(4, 3\)"):
        fm.FlexibleBody.from_field("rod", data, node_velocity="fast", nodes=[0, 1, 2, 3])
    with pytest.raises(ModelError, match="tol=0"):
        fm.FlexibleBody.from_field("rod", data, displacement=np.zeros((n, 3)), tol=0)
    tip = data.interface("xmax").nodes
    body = fm.FlexibleBody.from_field("rod", data, node_velocity=np.tile([0.0, 1.0, 0.0], (tip.size, 1)), nodes="xmax",
                                      modes=[], position=X0)  # a rigid body: translation of the tip face
    np.testing.assert_allclose(body.velocity, [0, 1, 0], atol=1e-14)
