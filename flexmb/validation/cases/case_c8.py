"""C8: a free flexible bar landing on FE node sets: contacts at the nodes of its mesh.

A free aluminium bar (hex8 mesh 1 x 0.04 x 0.04 m, 8 x 1 x 1 cells, free-free data, 4 elastic modes:
the first bending pairs) falls with its bottom face ``zmin`` (z = -0.02 m in the body frame) onto the
ground plane z = 0, each node of the contact's set a contact point (``Contact(..., nodes=)``).

1. Impact at frozen positions, flat, approach speed ``V``, the contact on the four bottom corner nodes
   (node indices): the closed form of the reduced model (as C4) with the FE mass matrix projected on
   the basis, ``M_r = T^T M_FE T``, the nodes' normal rows ``J = e_z^T T_n``, all four closing,
   ``D = J M_r^-1 J^T``, ``D P = -(1 + e) J z-``, ``dz = M_r^-1 J^T P`` (e = 0 and 1): ``D`` has rank 3 (no
   mode twists the bar, so the corners' twist pattern ``(+, -, -, +)`` of impulses does no work and the
   node impulses are not unique), so the impulse per end (the sum of its two corners, unique), the frame
   and modal velocity jumps, Newton's law at every node, the FE nodes' momentum
   change equal to the contact impulses (linear and angular: no other impulse acts) and the energy
   balance ``T- = T+ + loss`` (e = 1: ``T+ = T-``).
2. The same bar on its whole face set ``"zmin"`` (18 nodes, the set by name): the Delassus matrix is
   singular (more nodes than the motions they see), the impulses are not unique but the velocities
   are: plastic, every node stops and so does the whole bar (``z+ = 0``, which satisfies Newton's law
   and is reached by non-negative impulses in the face's mass distribution); e = 1: the rigid
   rebound ``z+ = -z-``.  Checked: ``z+``, Newton's law and complementarity at every node, the balance
   ``M_r dz = J^T P`` with flexmb's impulses, ``sum P = m V``.
3. In the march, tilted (small rotations about x and y) and released at rest with its lowest node
   ``d`` above the ground under gravity: the first event is at that node, at ``sqrt(2 d / g)`` (free
   fall: uniform gravity does not load the mean-axis modes).
4. In the march, flat on the four corner nodes, e = 0.8, 0.3 s of bouncing and chatter of the
   vibrating ends: the first impact's impulse per end against item 1's closed form at
   ``V = sqrt(2 g d)``, and the energy balance ``|E - E0 - W| / scale`` (``W``: the impacts' loss) to
   1e-9 (the bar does not turn: its modal motion is linear, which the time element conserves).
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.rotations.so3 import exp
from flexmb.validation.cases.case_c4 import reduced_mass

CASE = dict(
    id="C8",
    title="Free flexible bar landing on FE node sets: node impulses and modal jumps vs the reduced model, "
          "first node and time, energy balance in the march",
    source="Closed form of the reduced model: T^T M_FE T dz = J^T P, Newton's law at each node; free fall",
    slow=False,
)

G, D0, V = 9.81, 0.05, 1.0


def bar_data():
    mesh = fm.structured_box((1.0, 0.04, 0.04), (8, 1, 1), "hexahedron", origin=(0, -0.02, -0.02),
                             material=fm.Material(E=70e9, nu=0.3, rho=2700.0))
    return mesh, fm.build_flexible_body(mesh, n_modes=4)


def corners(data):
    """The four bottom corner nodes (``zmin`` at both ends)."""
    return np.intersect1d(data.node_set("zmin"), np.union1d(data.node_set("xmin"), data.node_set("xmax")))


def floor(nodes, e: float) -> fm.Contact:
    return fm.Contact("floor", "ground", "bar", kind="point-plane", nodes=nodes, restitution=e)


def closed_form(Mr, T, nodes, e: float, v: float):
    """``(P (k,), dz)``: every node closing with ``-v`` (flat bar translating down)."""
    J = T.reshape(-1, 3, T.shape[1])[nodes, 2]  # (k, 6 + nm): e_z rows of the nodes
    z = np.zeros(T.shape[1])
    z[2] = -v
    Dm = J @ np.linalg.solve(Mr, J.T)
    P = -(1 + e) * np.linalg.lstsq(Dm, J @ z, rcond=1e-10)[0]  # D may be singular (4 corners: rank 3)
    return P, np.linalg.solve(Mr, J.T @ P), J


def end_sums(data, nodes, P):
    """``(2,)``: the impulses summed over the nodes at x = 0 and at x = 1: unique where the node impulses are
    not (4 corners: the twist pattern (+, -, -, +) is in D's null space, as no mode twists the bar)."""
    x = np.asarray(data.points, dtype=float)[nodes, 0]
    return np.array([P[x < 0.5].sum(), P[x >= 0.5].sum()])


def run(ctx):
    mesh, data = bar_data()
    Mfe, T, Mr = reduced_mass(mesh, data)
    X = np.asarray(data.points, dtype=float)
    ez = np.array([0.0, 0.0, 1.0])
    corner = corners(data)
    metrics = []
    for e in (0.0, 1.0):  # 1. four corners, closed form
        bar = fm.FlexibleBody("bar", data, position=(0, 0, 0.02), velocity=(0, 0, -V))
        r = fm.impact(fm.Model([bar], contacts=[floor(corner, e)]))
        P, dz, J = closed_form(Mr, T, corner, e, V)
        z0 = np.r_[0, 0, -V, np.zeros(3 + data.n_modes)]
        z = np.concatenate([r.velocity_after["bar"], r.angular_velocity_after["bar"], r.modal_rate_after["bar"]])
        Pf = np.array([r.node_impulse["floor"][int(n)] for n in corner])
        vp, vm = J @ z, J @ z0
        dp = Mfe @ (T @ (z - z0))
        metrics += [
            dict(name=f"e = {e:g}, 4 corners: impulse per end, max |P - P_closed| / max P (all > 0: {bool(P.min() > 0)})",
                 value=np.abs(end_sums(data, corner, Pf) - end_sums(data, corner, P)).max() / P.max(), reference=0.0,
                 tolerance=1e-10, kind="max"),
            dict(name=f"e = {e:g}, 4 corners: frame and modal velocity jumps, max error / max jump",
                 value=np.abs(z - z0 - dz).max() / np.abs(dz).max(), reference=0.0, tolerance=1e-10, kind="max"),
            dict(name=f"e = {e:g}, 4 corners: Newton's law, max |v+ + e v-| / V", value=np.abs(vp + e * vm).max() / V,
                 reference=0.0, tolerance=1e-10, kind="max"),
            dict(name=f"e = {e:g}, 4 corners: FE nodes' momentum change - sum P n, relative",
                 value=np.linalg.norm(dp.reshape(-1, 3).sum(axis=0) - Pf.sum() * ez) / Pf.sum(), reference=0.0,
                 tolerance=1e-10, kind="max"),
            dict(name=f"e = {e:g}, 4 corners: FE nodes' angular momentum change - sum X x P n, relative",
                 value=np.linalg.norm(np.cross(X, dp.reshape(-1, 3)).sum(axis=0)
                                      - np.cross(X[corner], Pf[:, None] * ez).sum(axis=0)) / Pf.sum(),
                 reference=0.0, tolerance=1e-10, kind="max"),
            dict(name=f"e = {e:g}, 4 corners: |T- - T+ - loss| / T-", value=abs(r.outcome.energy_residual) / r.kinetic_energy_before,
                 reference=0.0, tolerance=1e-12, kind="max"),
        ]
        if e == 1.0:
            metrics.append(dict(name="e = 1, 4 corners: |T+ - T-| / T-", reference=0.0, tolerance=1e-12, kind="max",
                                value=abs(r.kinetic_energy_after - r.kinetic_energy_before) / r.kinetic_energy_before))
        ctx.logger.info("C8 e = %g: corner impulses %s (closed form %s); modal rates after %s", e, Pf.tolist(), P.tolist(),
                        z[6:].tolist())
    face = data.node_set("zmin")
    Jf = T.reshape(-1, 3, T.shape[1])[face, 2]
    for e in (0.0, 1.0):  # 2. the whole face, by the set's name
        bar = fm.FlexibleBody("bar", data, position=(0, 0, 0.02), velocity=(0, 0, -V))
        r = fm.impact(fm.Model([bar], contacts=[floor("zmin", e)]))
        z0 = np.r_[0, 0, -V, np.zeros(3 + data.n_modes)]
        z = np.concatenate([r.velocity_after["bar"], r.angular_velocity_after["bar"], r.modal_rate_after["bar"]])
        Pf = np.array([r.node_impulse["floor"].get(int(n), 0.0) for n in face])
        vp, vm = Jf @ z, Jf @ z0
        metrics += [
            dict(name=f"e = {e:g}, face 'zmin' ({face.size} nodes): max |z+ - closed form| / V (plastic: 0; e = 1: -z-)",
                 value=np.abs(z + e * z0).max() / V, reference=0.0, tolerance=1e-10, kind="max"),
            dict(name=f"e = {e:g}, face: complementarity, max(-P, -(v+ + e v-), |P (v+ + e v-)|) / (m V)",
                 value=max(-Pf.min(), -(vp + e * vm).min() * data.mass, np.abs(Pf * (vp + e * vm)).max()) / (data.mass * V),
                 reference=0.0, tolerance=1e-10, kind="max"),
            dict(name=f"e = {e:g}, face: |M_r dz - J^T P| / ((1 + e) m V)",
                 value=np.abs(Mr @ (z - z0) - Jf.T @ Pf).max() / ((1 + e) * data.mass * V), reference=0.0, tolerance=1e-10,
                 kind="max"),
            dict(name=f"e = {e:g}, face: sum P / ((1 + e) m V)", value=r.contact_impulse["floor"] / ((1 + e) * data.mass * V),
                 reference=1.0, tolerance=1e-12),
        ]
    # 3. tilted, released at rest: the lowest node first, at the free-fall time
    R = exp(np.array([0.02, -0.05, 0.0]))
    z_nodes = (X @ R.T)[:, 2]
    low = int(np.argmin(z_nodes))
    bar = fm.FlexibleBody("bar", data, position=(0, 0, D0 - z_nodes[low]), orientation=R)
    grav = fm.Gravity((0, 0, -G))
    sol = fm.simulate(fm.Model([bar], forces=[grav], contacts=[floor("zmin", 0.5)]), 0.105, 0.01)
    first = sol.events[0]
    metrics += [
        dict(name=f"tilted: node of the first event (the lowest, node {low})", value=float(first["node"]),
             reference=float(low), tolerance=0.0, kind="abs"),
        dict(name="tilted: first impact time - sqrt(2 d / g) [s]", value=abs(first["t"] - np.sqrt(2 * D0 / G)),
             reference=0.0, tolerance=1e-10, kind="max"),
        dict(name="tilted: one node in the first impact", value=float(sum(ev["impact"] == 1 for ev in sol.events)),
             reference=1.0, tolerance=0.0, kind="abs"),
    ]
    # 4. flat on the corners in the march: the first impact's closed form, the energy balance
    bar = fm.FlexibleBody("bar", data, position=(0, 0, D0 + 0.02))
    sol = fm.simulate(fm.Model([bar], forces=[grav], contacts=[floor(corner, 0.8)]), 0.3, 0.01)
    P, _, _ = closed_form(Mr, T, corner, 0.8, np.sqrt(2 * G * D0))
    ev1 = {ev["node"]: ev["normal_impulse"] for ev in sol.events if ev["impact"] == 1}
    P1 = np.array([ev1.get(int(n), 0.0) for n in corner])
    metrics += [
        dict(name="march, corners e = 0.8: first impact's impulse per end vs closed form, max relative error",
             value=np.abs(end_sums(data, corner, P1) - end_sums(data, corner, P)).max() / P.max(), reference=0.0,
             tolerance=1e-9, kind="max"),
        dict(name=f"march, corners e = 0.8: energy balance |E - E0 - W| / scale over {sol.meta['impacts']} impacts",
             value=sol.meta["energy_balance"], reference=0.0, tolerance=1e-9, kind="max"),
    ]
    ctx.logger.info("C8 march: %d impacts (%d node rows), %d extra element solves, balance %.3g", sol.meta["impacts"],
                    len(sol.events), sol.meta["event_solves"], sol.meta["energy_balance"])
    return metrics
