"""Solution.to_paraview (issue 7 section 5): the .vtu files read back with meshio hold the deformed
mesh of the modal reconstruction, the displacement and the von Mises stress of the linear modal
stress (checked against principal stresses computed here); the .pvd lists every file with its time;
rigid bodies are written as triads of their axes, also from a loaded solution."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from functools import lru_cache

import numpy as np
import pytest

import flexmb as fm
from flexmb.errors import ModelError
from flexmb.fe.reduction.body_data import build_flexible_body
from flexmb.fe.mesh.structured import structured_box

meshio = pytest.importorskip("meshio")


@lru_cache(maxsize=None)
def run():
    """A flexible hex20 bar (Craig-Bampton, xmin reference) on a hinge with a rigid bob at its tip, under gravity."""
    mesh = structured_box((1.0, 0.02, 0.02), (6, 1, 1), "hexahedron20", origin=(0, -0.01, -0.01),
                          material=fm.Material(E=7e9, nu=0.3, rho=2700.0))
    # stiffening "none" reads no quartic term: built without it (the run and the stresses are array_equal)
    data = build_flexible_body(mesh, interfaces=["xmin", "xmax"], n_modes=3, quartic=False)
    bar = fm.FlexibleBody("bar", data, stiffening="none")
    bob = fm.RigidBody("bob", 0.1, np.full(3, 1e-5), position=(1.0, 0, 0))
    joints = [fm.Revolute("pin", "ground", ("bar", "xmin"), axis=(0, 0, 1)),
              fm.Spherical("tip", ("bar", "xmax"), "bob", point=(1.0, 0, 0))]
    model = fm.Model([bar, bob], joints, [fm.Gravity((0, -9.81, 0))])
    return data, model, fm.simulate(model, 0.1, 0.005, p=2)


def read_pvd(path):
    """[(time, part, file)] of a .pvd collection."""
    root = ET.parse(path).getroot()
    assert root.tag == "VTKFile" and root.get("type") == "Collection"
    return [(float(d.get("timestep")), int(d.get("part")), d.get("file")) for d in root.iter("DataSet")]


def von_mises_by_principal_stresses(voigt):
    """sqrt(((s1 - s2)^2 + (s2 - s3)^2 + (s3 - s1)^2) / 2) from the eigenvalues of the stress tensor."""
    xx, yy, zz, yz, xz, xy = np.moveaxis(voigt, -1, 0)
    T = np.stack([np.stack([xx, xy, xz], -1), np.stack([xy, yy, yz], -1), np.stack([xz, yz, zz], -1)], -2)
    s = np.linalg.eigvalsh(T)
    return np.sqrt(0.5 * ((s[..., 0] - s[..., 1]) ** 2 + (s[..., 1] - s[..., 2]) ** 2 + (s[..., 2] - s[..., 0]) ** 2))


def test_deformed_meshes_displacement_and_von_mises(tmp_path):
    data, model, sol = run()
    scale = 10.0
    pvd = sol.to_paraview(tmp_path / "pv", model=model, scale=scale)
    assert pvd == tmp_path / "pv" / "solution.pvd"
    entries = read_pvd(pvd)
    # every output time, once per part (0: the bar, 1: the rigid bodies), in time order
    assert [(t, p) for t, p, _ in entries] == [(t, p) for t in sol.t.tolist() for p in (0, 1)]
    assert all((pvd.parent / f).is_file() for _, _, f in entries)
    body = sol.body("bar")
    for i in (0, sol.nt // 2, sol.nt - 1):
        m = meshio.read(pvd.parent / f"bar_{i:05d}.vtu")
        assert m.points.shape == (data.n_nodes, 3)
        np.testing.assert_array_equal(m.cells_dict["hexahedron20"], data.cells["hexahedron20"])
        q, R, x = body.modal[i], body.rotation[i], body.position[i]
        u = np.einsum("ndk,k->nd", data.mode_shapes, q)  # modal reconstruction, body frame
        np.testing.assert_allclose(m.point_data["displacement_body"], u, rtol=0, atol=1e-15)
        np.testing.assert_allclose(m.point_data["displacement"], u @ R.T, rtol=0, atol=1e-15)
        np.testing.assert_allclose(m.points, x + (data.points + scale * u) @ R.T, rtol=0, atol=1e-14)
        sigma = np.einsum("k,knv->nv", q, data.modal_stresses)  # the linear modal stress
        vm = von_mises_by_principal_stresses(sigma)
        np.testing.assert_allclose(m.point_data["von_mises"], vm, rtol=1e-9, atol=1e-9 * vm.max())
    assert np.abs(body.modal[-1]).max() > 0 and vm.max() > 1e4  # a non-trivial stress state [Pa]


def test_every_kth_output_ends_at_the_last_time_and_body_subsets(tmp_path):
    data, model, sol = run()
    sol.attach(model)
    pvd = sol.to_paraview(tmp_path, bodies=["bar"], every=3, frame="body", stem="bar")
    entries = read_pvd(pvd)
    kept = list(range(0, sol.nt, 3)) + ([sol.nt - 1] if (sol.nt - 1) % 3 else [])
    assert [t for t, _, _ in entries] == sol.t[kept].tolist()
    assert {p for _, p, _ in entries} == {0} and not list(tmp_path.glob("rigid_*.vtu"))
    m = meshio.read(tmp_path / entries[-1][2])  # frame="body": the mesh in the floating frame
    u = data.mode_shapes @ sol.body("bar").modal[-1]
    np.testing.assert_allclose(m.points, data.points + u, rtol=0, atol=1e-15)
    for bad, match in [(dict(every=0), "every=0"), (dict(bodies=["rod"]), "unknown"),
                       (dict(frame="global"), "frame='global'"), (dict(scale=float("nan")), "scale")]:
        with pytest.raises(ModelError, match=match):
            sol.to_paraview(tmp_path / "bad", **bad)


def test_rigid_bodies_are_written_as_triads_also_after_load(tmp_path):
    """A rigid-only model (the A01 pendulum) needs no model after Solution.load: its frame is a
    triad from the reference point along the body axes, of length `triad`."""
    bob = fm.RigidBody("bob", mass=1.0, inertia=np.full(3, 1e-3), position=(-1.0, 0.0, 0.0))
    model = fm.Model([bob], [fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1))],
                     [fm.Gravity((0, -9.81, 0))])
    sol = fm.Solution.load(fm.simulate(model, 0.5, 0.05, p=2).save(tmp_path / "p.npz"))
    pvd = sol.to_paraview(tmp_path / "pv", triad=0.25)
    entries = read_pvd(pvd)
    assert [t for t, _, _ in entries] == sol.t.tolist()
    i = sol.nt - 1
    m = meshio.read(pvd.parent / f"rigid_{i:05d}.vtu")
    x, R = sol.body_position[i, 0], sol.body_rotation[i, 0]
    np.testing.assert_allclose(m.points, np.vstack([x, x + 0.25 * R.T]), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(m.cells_dict["line"], [[0, 1], [0, 2], [0, 3]])
    np.testing.assert_array_equal(m.cell_data["axis"][0], [0, 1, 2])
    np.testing.assert_allclose(m.point_data["velocity"], np.tile(sol.body_velocity[i, 0], (4, 1)), rtol=0, atol=0)


def test_flexible_bodies_after_load_need_the_model(tmp_path):
    data, model, sol = run()
    loaded = fm.Solution.load(sol.save(tmp_path / "run.npz"))
    with pytest.raises(ModelError, match=r"to_paraview: the solution does not know the FlexibleBodyData of body "
                                         r"'bar'.*sol\.attach\(model\)"):
        loaded.to_paraview(tmp_path / "pv")
    assert not (tmp_path / "pv").exists()  # nothing written before the check
    assert loaded.to_paraview(tmp_path / "pv", model=model, every=100).is_file()
