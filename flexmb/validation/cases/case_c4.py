"""C4: a free flexible bar struck at an interface: the modal velocity jumps.

A free aluminium bar (hex8 mesh, Craig-Bampton data: the root face ``xmin`` is the floating frame,
the tip face ``xmax`` a second rigid interface; 4 normal + 6 constraint modes), at rest, struck at
the tip interface by an impulse ``F``.  The closed form of the reduced model: with the FE nodes'
velocities ``v_i = v + omega x X_i + Phi_i q'`` (``T_i = [I, -X_i~, Phi_i]``, body frame = inertial at the
start) the reduced mass matrix is ``M_r = T^T M_FE T`` (the FE mass matrix assembled from the mesh)
and the impulse's generalized impulse is ``(F, c x F, P_t^T F)`` (``c`` the interface point, ``P_t`` its
translational modal map), so that

    M_r dz = (F, c x F, P_t^T F),    dz = (dv, domega, dq')

Checked: flexmb's jumps of the frame velocity, angular velocity and every modal rate against ``dz``
(the modal body's mass invariants, its interface velocity map and the impact solve together), the
FE nodes' linear momentum ``1^T M_FE T dz = F`` and angular momentum ``c x F`` (momentum conserved:
the only external impulse is F), and ``T+ = W_F`` to round-off.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm

CASE = dict(
    id="C4",
    title="Free flexible bar struck at its tip interface: modal velocity jumps vs the reduced model's closed form",
    source="Closed form of the reduced (Craig-Bampton) model: T^T M_FE T dz = T^T f with the FE mass matrix",
    slow=False,
)

F = np.array([0.3, 2.0, -0.7])


def bar_data():
    mesh = fm.structured_box((1.0, 0.04, 0.04), (8, 1, 1), "hexahedron", origin=(0, -0.02, -0.02),
                             material=fm.Material(E=70e9, nu=0.3, rho=2700.0))
    return mesh, fm.build_flexible_body(mesh, interfaces=["xmin", "xmax"], n_modes=4)


def reduced_basis(data):
    """``T (3 n_nodes, 6 + nm)`` at the undeformed state (frame at the reference interface; free-free
    data: at the mesh origin, the body frame's)."""
    X = np.asarray(data.points, dtype=float)
    if data.reference is not None:
        X = X - np.asarray(data.interface(data.reference).position, dtype=float)
    n = X.shape[0]
    T = np.zeros((n, 3, 6 + data.n_modes))
    T[:, :, :3] = np.eye(3)
    T[:, 0, 4], T[:, 0, 5] = X[:, 2], -X[:, 1]  # -X~ : omega x X = -X x omega
    T[:, 1, 3], T[:, 1, 5] = -X[:, 2], X[:, 0]
    T[:, 2, 3], T[:, 2, 4] = X[:, 1], -X[:, 0]
    T[:, :, 6:] = data.mode_shapes
    return T.reshape(3 * n, -1)


def reduced_mass(mesh, data):
    """``(M_FE (3 n_nodes, 3 n_nodes), T, M_r = T^T M_FE T)``: the FE mass matrix assembled from the mesh
    (dense) projected on the reduced basis :func:`reduced_basis`."""
    from flexmb.fe.elements.assembly import assemble_mass

    Mfe = assemble_mass(mesh)
    Mfe = Mfe.toarray() if hasattr(Mfe, "toarray") else np.asarray(Mfe)
    T = reduced_basis(data)
    return Mfe, T, T.T @ Mfe @ T


def run(ctx):
    mesh, data = bar_data()
    Mfe, T, Mr = reduced_mass(mesh, data)
    tip = data.interface("xmax")
    c = np.asarray(tip.position, dtype=float) - np.asarray(data.interface(data.reference).position, dtype=float)
    g = np.concatenate([F, np.cross(c, F), np.asarray(tip.modal_map, dtype=float)[:3].T @ F])
    dz = np.linalg.solve(Mr, g)
    bar = fm.FlexibleBody("bar", data)
    r = fm.impact(fm.Model([bar], impulses=[fm.Impulse(("bar", "xmax"), F)]))
    z = np.concatenate([r.velocity_after["bar"], r.angular_velocity_after["bar"], r.modal_rate_after["bar"]])
    scale = np.abs(dz).max()
    metrics = [
        dict(name="frame velocity jump, max error / max jump", value=np.abs(z[:3] - dz[:3]).max() / scale, reference=0.0,
             tolerance=1e-10, kind="max"),
        dict(name="angular velocity jump, max error / max jump", value=np.abs(z[3:6] - dz[3:6]).max() / scale,
             reference=0.0, tolerance=1e-10, kind="max"),
        dict(name=f"modal rate jumps ({data.n_modes} modes), max error / max jump",
             value=np.abs(z[6:] - dz[6:]).max() / scale, reference=0.0, tolerance=1e-10, kind="max"),
    ]
    v_nodes = (T @ z).reshape(-1, 3)
    m_nodes = Mfe @ (T @ z)
    p = m_nodes.reshape(-1, 3).sum(axis=0)
    X = np.asarray(data.points, dtype=float) - np.asarray(data.interface(data.reference).position, dtype=float)
    H = np.cross(X, m_nodes.reshape(-1, 3)).sum(axis=0)
    metrics += [
        dict(name="FE nodes' linear momentum after - F, relative", value=np.linalg.norm(p - F) / np.linalg.norm(F),
             reference=0.0, tolerance=1e-10, kind="max"),
        dict(name="FE nodes' angular momentum after - c x F, relative",
             value=np.linalg.norm(H - np.cross(c, F)) / np.linalg.norm(np.cross(c, F)), reference=0.0, tolerance=1e-10,
             kind="max"),
        dict(name="|T+ - W_F| / T+", value=abs(r.kinetic_energy_after - r.work) / r.kinetic_energy_after, reference=0.0,
             tolerance=1e-12, kind="max"),
    ]
    ctx.logger.info("C4: modal rate jumps %s (closed form %s); nodes' speed up to %.4g m/s", z[6:].tolist(),
                    dz[6:].tolist(), np.abs(v_nodes).max())
    return metrics
