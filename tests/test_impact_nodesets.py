"""Contacts at FE node sets of flexible bodies (issue 21): case C8 (closed form of the reduced model,
the first node to touch, the energy balance in the march), the node sets kept by the body data (saved,
loaded, older files), bad input named with the contact, the value and the fix, and the vectorized gap
crossing against the per-contact reference."""
from __future__ import annotations

import json

import numpy as np
import pytest

import flexmb as fm
from flexmb import validation
from flexmb.dynamics.impact.flight import first_crossing, hermite, predict
from flexmb.errors import MeshImportError, ModelError
from flexmb.fe.reduction.body_io import FORMAT_VERSION


@pytest.fixture(scope="module")
def data():
    mesh = fm.structured_box((1.0, 0.04, 0.04), (8, 1, 1), "hexahedron", origin=(0, -0.02, -0.02),
                             material=fm.Material(E=70e9, nu=0.3, rho=2700.0))
    return fm.build_flexible_body(mesh, n_modes=2)


def test_case_c8():
    result = validation.run_case(validation.discover_cases()["C8"], fast=True)
    assert result.error is None, f"C8 raised {result.error}\n{result.traceback}"
    failed = [f"{m.name} = {m.value!r}" for m in result.metrics if not m.passed]
    assert result.metrics and not failed, failed


def model(data, nodes, z=0.02, v=-1.0, body="bar", **kw):
    bar = fm.FlexibleBody("bar", data, position=(0, 0, z), velocity=(0, 0, v))
    ball = fm.RigidBody("ball", mass=1.0, inertia=np.ones(3), position=(0, 0, 1))
    return fm.Model([bar, ball], contacts=[fm.Contact("floor", "ground", body, kind="point-plane", nodes=nodes, **kw)])


def test_node_set_by_name_and_by_indices_agree(data):
    face = data.node_set("zmin")
    assert face.size == 18 and np.allclose(data.points[face, 2], -0.02)
    a, b = fm.impact(model(data, "zmin")), fm.impact(model(data, face))
    assert a.contact_impulse["floor"] == pytest.approx(data.mass, rel=1e-12)  # plastic: the bar stops
    assert np.allclose(a.velocity_after["bar"], b.velocity_after["bar"], atol=1e-14)
    assert set(a.node_impulse["floor"]) <= set(face.tolist())
    # a node above the ground (the top face) never takes part: the contacts are per node
    r = fm.impact(model(data, np.r_[face[:2], data.node_set("zmax")[:2]]))
    assert set(r.node_impulse["floor"]) == set(face[:2].tolist())


@pytest.mark.parametrize("nodes, body, words", [
    ([], "bar", ["nodes=[]", "empty", "node set"]),
    ("", "bar", ["nodes=''", "empty"]),
    ("bottom", "bar", ["nodes='bottom'", "flexible body 'bar' (data 'body') has no node set 'bottom'", "'zmin'", "'xmax'"]),
    ([0, 36], "bar", ["nodes=[0, 36]", "node 36 is outside the mesh of 'bar' (36 nodes, 0 .. 35)"]),
    ([0, -1], "bar", ["nodes=[0, -1]", ">= 0"]),
    ([0, 0], "bar", ["distinct"]),
    ([[0, 1]], "bar", ["neither a node set's name nor node indices"]),
    ([0.5], "bar", ["neither a node set's name nor node indices"]),
    ("zmin", "ball", ["nodes='zmin' on 'ball', a RigidBody", "node sets belong to flexible bodies", "point_b"]),
])
def test_bad_node_sets_are_named(data, nodes, body, words):
    with pytest.raises(ModelError) as exc:
        model(data, nodes, body=body)
    msg = str(exc.value)
    assert "Contact 'floor'" in msg and all(w in msg for w in words), msg


def test_node_set_with_an_interface_or_a_point_is_refused():
    with pytest.raises(ModelError, match=r"nodes='zmin' with body_b=\('bar', 'tip'\).*give body_b='bar'"):
        fm.Contact("floor", "ground", ("bar", "tip"), kind="point-plane", nodes="zmin")
    with pytest.raises(ModelError, match=r"point_b=\[0.0, 0.0, 0.1\] with nodes='zmin'.*leave point_b"):
        fm.Contact("floor", "ground", "bar", kind="point-plane", nodes="zmin", point_b=(0, 0, 0.1))


def test_interpenetration_names_the_deepest_node(data):
    tilt = fm.FlexibleBody("bar", data, position=(0, 0, 0.019))  # every bottom node 1 mm in
    m = fm.Model([tilt], contacts=[fm.Contact("floor", "ground", "bar", kind="point-plane", nodes="zmin")])
    with pytest.raises(ModelError, match=r"Contact 'floor'.*interpenetrate at node \d+ \(18 of its nodes in\).*gap -0.001"):
        fm.impact(m)


def test_node_sets_are_saved_and_loaded(data, tmp_path):
    assert FORMAT_VERSION == 2
    path = data.save(tmp_path / "bar.npz")
    back = fm.FlexibleBodyData.load(path)
    assert sorted(back.node_sets) == sorted(data.node_sets) == ["xmax", "xmin", "ymax", "ymin", "zmax", "zmin"]
    for k, v in data.node_sets.items():
        assert np.array_equal(back.node_sets[k], v)
    # a version-1 file (before the node sets): loads without them, the interfaces' sets still named
    with np.load(path, allow_pickle=False) as f:
        arr = {k: f[k] for k in f.files if not k.startswith("node_set/")}
    meta = json.loads(str(arr["meta"]))
    meta["version"] = 1
    del meta["node_sets"]
    arr["meta"] = np.array(json.dumps(meta))
    old = tmp_path / "old.npz"
    np.savez_compressed(old, **arr)
    back = fm.FlexibleBodyData.load(old)
    assert back.node_sets == {}
    with pytest.raises(ModelError, match=r"body '.*' has no node set 'zmin'.*interfaces only.*rebuild"):
        back.node_set("zmin")
    # a damaged set (a node beyond the mesh) is named
    arr = {k: v for k, v in np.load(path, allow_pickle=False).items()}
    arr["node_set/0"] = np.array([0, 999])
    bad = tmp_path / "bad.npz"
    np.savez_compressed(bad, **arr)
    with pytest.raises(MeshImportError, match=r"node set 'xmin' names node 999 outside 0 \.\. 35"):
        fm.FlexibleBodyData.load(bad)


def test_events_name_the_node(data):
    bar = fm.FlexibleBody("bar", data, position=(0, 0, 0.03))  # 10 mm above the ground
    floor = fm.Contact("floor", "ground", "bar", kind="point-plane", nodes="zmin", restitution=0.5)
    sol = fm.simulate(fm.Model([bar], forces=[fm.Gravity((0, 0, -9.81))], contacts=[floor]), 0.05, 0.01)
    ev = [e for e in sol.events if e["impact"] == 1]
    assert {e["contact"] for e in ev} == {"floor"}
    assert {e["node"] for e in ev} <= set(data.node_set("zmin").tolist()) and len(ev) >= 2
    assert ev[0]["t"] == pytest.approx(np.sqrt(2 * 0.01 / 9.81), abs=1e-12)
    assert len(sol.meta["contact_nodes"]) == 18


def _first_crossing_reference(g0, v0, g1, v1, h, tol):
    """The per-contact loop the vectorized :func:`first_crossing` replaces (np.roots per contact)."""
    out = np.full(len(g0), np.inf)
    for k in range(len(g0)):
        c = hermite(g0[k], v0[k], g1[k], v1[k], h)
        dc = np.polyder(c)
        roots = np.roots(c) if abs(c[0]) > 0 else np.roots(c[1:])
        s_in = sorted(float(r.real) for r in roots if abs(r.imag) <= 1e-9 and 0 < r.real < 1 and np.polyval(dc, r.real) < 0)
        if s_in:
            cand = [1.0] + [float(r.real) for r in np.roots(dc) if abs(r.imag) <= 1e-12 and s_in[0] < r.real < 1.0]
            if min(np.polyval(c, s) for s in cand) < -tol:
                out[k] = s_in[0] * h
    return out


def test_vectorized_crossing_and_prediction_match_the_per_contact_forms():
    rng = np.random.default_rng(3)
    for _ in range(300):
        k = 40
        g0, v0 = rng.normal(size=k) * 1e-2, rng.normal(size=k)
        g1, v1 = rng.normal(size=k) * 1e-2, rng.normal(size=k)
        h, tol = float(rng.choice([1e-3, 1e-2, 1.0])), float(rng.choice([1e-9, 1e-4]))
        ref = _first_crossing_reference(g0, v0, g1, v1, h, tol)
        got = first_crossing(g0, v0, g1, v1, h, tol)
        assert np.array_equal(np.isinf(ref), np.isinf(got))
        assert np.allclose(got[np.isfinite(got)], ref[np.isfinite(ref)], rtol=0, atol=1e-12 * h)
        a = rng.choice([np.nan, 0.0, -9.81, 2.0], size=k)
        best = h  # free flight g + v t + a t^2 / 2: the first root going in
        for gg, vv, aa in zip(g0, v0, a):
            if np.isfinite(aa):
                r = np.roots([aa / 2, vv, gg]) if aa else (np.array([-gg / vv]) if vv else [])
                best = min([best] + [t.real for t in np.atleast_1d(r) if abs(t.imag) < 1e-300 and 0 < t.real < best
                                     and vv + aa * t.real < 0])
        assert predict(g0, v0, a, h) == pytest.approx(best, rel=1e-12, abs=1e-15)


def test_rigid_sphere_on_node_spheres(data):
    """sphere-sphere: a rigid ball dropped on one node of the top face (a sphere of radius r_b at each node
    of "zmax"): only the node under it takes part, the ball's momentum jump is that node's impulse along the
    line of centres, e = 1 keeps the kinetic energy."""
    top = data.node_set("zmax")
    n = int(top[np.argmin(np.abs(data.points[top, 0] - 0.5) + np.abs(data.points[top, 1] - 0.02))])
    ra, rb = 0.05, 0.001
    c = data.points[n] + np.array([0.0, 0.0, ra + rb])
    ball = fm.RigidBody("ball", mass=0.3, inertia=np.full(3, 3e-4), position=c, velocity=(0, 0, -2.0))
    bar = fm.FlexibleBody("bar", data)
    hit = fm.Contact("hit", "ball", "bar", kind="sphere-sphere", radius_a=ra, radius=rb, nodes="zmax", restitution=1.0)
    r = fm.impact(fm.Model([ball, bar], contacts=[hit]))
    assert list(r.node_impulse["hit"]) == [n]
    P = r.node_impulse["hit"][n]
    dv = r.velocity_after["ball"] - r.velocity_before["ball"]
    assert P > 0 and np.allclose(0.3 * dv, [0, 0, P], rtol=0, atol=1e-12 * P)  # the ball gets -P n_ab, n_ab = -e_z
    assert abs(r.kinetic_energy_after - r.kinetic_energy_before) <= 1e-12 * r.kinetic_energy_before
    assert r.modal_rate_after["bar"].any()  # the node's deflection modes are struck


def test_resume_across_node_impacts_is_bit_identical(data, tmp_path):
    """A checkpoint between the node impacts of a bar bouncing on its corners resumes bit-identically (the
    per-node resting state and accelerations are the event record's); the saved solution keeps the nodes."""
    corner = np.intersect1d(data.node_set("zmin"), np.union1d(data.node_set("xmin"), data.node_set("xmax")))
    bar = fm.FlexibleBody("bar", data, position=(0, 0, 0.025))
    floor = fm.Contact("floor", "ground", "bar", kind="point-plane", nodes=corner, restitution=0.6)
    model = fm.Model([bar], forces=[fm.Gravity((0, 0, -9.81))], contacts=[floor])
    full = fm.simulate(model, 0.08, 0.01)
    assert full.meta["impacts"] >= 2
    stop = 0.5 * (full.events[0]["t"] + full.events[-1]["t"])
    ck = tmp_path / "bar.ckpt"
    fm.simulate(model, 0.08, 0.01, checkpoint=ck, checkpoint_every=1e-9, on_step=lambda t, s: t >= stop)
    rest = fm.resume(ck)
    for name in ("t", "body_position", "body_velocity", "kinetic_energy"):
        assert np.array_equal(getattr(full, name), getattr(rest, name)), name
    for k, v in full.extra.items():
        assert np.array_equal(v, rest.extra[k]), k
    back = fm.Solution.load(full.save(tmp_path / "bar.npz"))
    assert [e["node"] for e in back.events] == [e["node"] for e in full.events]
    assert {e["node"] for e in full.events} <= set(corner.tolist())


def test_newton_lcp_with_dependent_contacts_and_unequal_targets():
    """Two contacts that see the same motion (a singular Delassus matrix, as the nodes of a face) with
    targets outside its range (``q = (-1, -0.5)``: one approaching, one resting): the only solution pushes
    the first (``P = (1, 0)``, ``y = (0, 0.5)``); the range part of ``q`` alone (NNLS on ``D = A^T A``) gave
    ``P1 + P2 = 0.75`` and left the first contact approaching."""
    from flexmb.dynamics.impact.solve import newton_lcp

    D = np.ones((2, 2))
    for q, P_exact in (([-1.0, -0.5], [1.0, 0.0]), ([-0.5, -1.0], [0.0, 1.0]), ([-2.0, 3.0], [2.0, 0.0])):
        P = newton_lcp(D, np.array(q))
        assert np.allclose(P, P_exact, rtol=0, atol=1e-12), (q, P)
    rng = np.random.default_rng(5)  # random dependent sets: complementarity to round-off
    for _ in range(200):
        k, r = int(rng.integers(2, 20)), int(rng.integers(1, 5))
        J = rng.normal(size=(k, r))
        J[:, 0] = np.abs(J[:, 0]) + 0.1  # all can separate together (a floor's rows)
        q = J @ rng.normal(size=r) - np.abs(rng.normal(size=k)) * rng.integers(0, 2, size=k)
        P = newton_lcp(J @ J.T, q)
        y = J @ (J.T @ P) + q
        scale = np.abs(q).max()
        assert P.min() >= 0 and y.min() >= -1e-10 * scale and np.abs(P * y).max() <= 1e-10 * scale * max(P.max(), 1e-300)
