"""FlexibleBodyData: one-call build, .npz round trip without the mesh file, VTU output."""
from __future__ import annotations

from dataclasses import fields

import meshio
import numpy as np
import pytest

from flexmb.errors import MeshImportError, ModelError
from flexmb.fe.mesh import Material
from flexmb.fe.reduction.body_data import FlexibleBodyData, build_flexible_body
from flexmb.fe.reduction.energy_factors import factors_match
from flexmb.fe.reduction import PRELOAD_NAMES, Interface
from flexmb.validation.cases.case_f1 import structured_box  # noqa: E402

STEEL = Material(210e9, 0.3, 7850.0, "steel")


@pytest.fixture(scope="module")
def mesh():
    return structured_box((1.0, 0.1, 0.05), (8, 2, 1), "hexahedron20", material=STEEL)


@pytest.fixture(scope="module")
def body(mesh):
    return build_flexible_body(
        mesh, interfaces=["root", Interface("tip", kind="average")], n_modes=4, damping=0.02, name="beam"
    )


def test_build_craig_bampton_body(body, mesh):
    nm = 6 + 4
    assert body.kind == "craig-bampton" and body.reference == "root" and body.n_modes == nm
    assert body.mode_shapes.shape == (mesh.n_nodes, 3, nm)
    assert body.geometric_stiffness.shape == (nm, nm, nm)
    assert body.preload_stiffness.shape == (len(PRELOAD_NAMES), nm, nm)
    assert body.quartic_stiffness.shape == (nm, nm, nm, nm)
    assert body.preload_stiffness_residual.shape == (len(PRELOAD_NAMES), nm, nm)
    assert body.preload_coordinates.shape == (len(PRELOAD_NAMES), nm)
    # no double counting: residual = full - sum_k a_k G[k] (the modal deflection's own stiffening)
    carried = np.einsum("ck,kij->cij", body.preload_coordinates, body.geometric_stiffness)
    assert np.allclose(body.preload_stiffness_residual, body.preload_stiffness - carried,
                       rtol=0, atol=1e-9 * np.abs(body.preload_stiffness).max())
    assert body.modal_stresses.shape == (nm, mesh.n_nodes, 6)
    assert body.mass == pytest.approx(STEEL.rho * 1.0 * 0.1 * 0.05, rel=1e-12)
    assert np.allclose(body.invariants.modal_mass, np.eye(nm), atol=1e-9)
    assert np.allclose(np.diag(body.damping), 2 * 0.02 * np.sqrt(body.omega2))
    assert np.allclose(body.frequencies, np.sqrt(body.omega2) / (2 * np.pi))
    tip = body.interface("tip")
    assert tip.kind == "average" and tip.modal_map.shape == (6, nm) and not tip.is_reference
    assert body.interface("root").is_reference
    eta = np.linspace(-1e-3, 1e-3, nm)
    assert body.displacement(eta).shape == (mesh.n_nodes, 3) and body.von_mises(eta).shape == (mesh.n_nodes,)


def test_save_load_round_trip_is_exact(body, tmp_path):
    path = body.save(tmp_path / "beam")
    assert path.suffix == ".npz"
    loaded = FlexibleBodyData.load(path)  # needs no mesh file: points and cells are inside
    for f in fields(FlexibleBodyData):
        a, b = getattr(body, f.name), getattr(loaded, f.name)
        if f.name == "interfaces":
            assert len(a) == len(b)
            for fa, fb in zip(a, b):
                assert (fa.name, fa.kind, fa.is_reference) == (fb.name, fb.kind, fb.is_reference)
                for key in ("nodes", "position", "weights", "modal_map"):
                    assert np.array_equal(getattr(fa, key), getattr(fb, key))
        elif f.name == "invariants":
            for g in fields(a):
                assert np.array_equal(getattr(a, g.name), getattr(b, g.name))
        elif f.name in ("cells", "node_sets"):
            assert a.keys() == b.keys() and all(np.array_equal(a[t], b[t]) for t in a)
        elif f.name == "energy_factors":
            assert a is not None and a.arrays().keys() == b.arrays().keys()
            assert all(np.array_equal(a.arrays()[k], b.arrays()[k]) for k in a.arrays())
        elif isinstance(a, np.ndarray):
            assert np.array_equal(a, b), f.name
        else:
            assert a == b, f.name
    with np.load(path, allow_pickle=False) as raw:  # plain arrays only
        assert all(raw[k].dtype != object for k in raw.files)


def test_load_reads_files_without_the_stiffening_arrays(body, tmp_path):
    """Files written before quartic_stiffness / preload_stiffness_residual existed still load."""
    path = body.save(tmp_path / "beam")
    with np.load(path, allow_pickle=False) as raw:
        arrays = {k: raw[k] for k in raw.files
                  if k not in ("quartic_stiffness", "preload_stiffness_residual", "preload_coordinates")
                  and not k.startswith("energy_factors/")}
    old = tmp_path / "old.npz"
    np.savez_compressed(old, **arrays)
    loaded = FlexibleBodyData.load(old)
    assert loaded.quartic_stiffness is None and loaded.preload_stiffness_residual is None
    assert loaded.preload_coordinates is None
    assert np.array_equal(loaded.preload_stiffness, body.preload_stiffness)
    # the strain-energy factors, absent then, are made from the stored G (no quartic term)
    f = loaded.energy_factors
    assert f is not None and f.ranks[1] == 0 and f.ranks[0] > 0
    q = 0.01 * np.arange(1, body.n_modes + 1)
    assert f.energy(q) == pytest.approx(0.5 * np.einsum("kij,k,i,j->", body.geometric_stiffness, q, q, q), rel=1e-9)


def test_load_factors_the_strain_energy_of_files_written_before_the_factors(body, tmp_path):
    """A file without the factors (written before they were stored) loads with the factors of its own
    G and H: those of the built data, which reproduce the dense energy within their truncation (10
    modes: 55 quartic terms, truncated at the default tolerance; the bound is checked at modal loads
    |z| = |omega^2 q| = 1 by factors_match, a stale or wrong factorization fails it)."""
    path = body.save(tmp_path / "beam")
    with np.load(path, allow_pickle=False) as raw:
        arrays = {k: raw[k] for k in raw.files if not k.startswith("energy_factors/")}
    old = tmp_path / "old.npz"
    np.savez_compressed(old, **arrays)
    f = FlexibleBodyData.load(old).energy_factors
    assert factors_match(f, body.geometric_stiffness, body.quartic_stiffness, body.omega2)
    assert not factors_match(f, body.geometric_stiffness, 1.01 * body.quartic_stiffness, body.omega2)
    q = 0.01 * np.arange(1, body.n_modes + 1)
    assert f.energy(q) == pytest.approx(body.energy_factors.energy(q), rel=1e-12)


def test_load_rejects_other_files(tmp_path):
    np.savez(tmp_path / "x.npz", a=np.zeros(3))
    with pytest.raises(MeshImportError, match="meta"):  # a format error, not a model error
        FlexibleBodyData.load(tmp_path / "x.npz")


def test_to_vtu_writes_modes_and_collection(body, tmp_path):
    pvd = body.to_vtu(tmp_path / "vtu")
    files = sorted((tmp_path / "vtu").glob("mode_*.vtu"))
    assert pvd.exists() and len(files) == body.n_modes
    assert pvd.read_text().count("<DataSet") == body.n_modes
    m = meshio.read(files[2])
    assert np.allclose(m.point_data["displacement"], body.mode_shapes[:, :, 2])
    assert "von_mises" in m.point_data


def test_free_free_body_with_attached_frames(mesh):
    body = build_flexible_body(mesh, interfaces=["root", "tip"], n_modes=3, method="free-free",
                               damping={"rayleigh": (0.1, 1e-5)}, geometric=False, preloads=False, stresses=False)
    assert body.kind == "free-free" and body.reference is None and body.n_modes == 3
    assert body.geometric_stiffness is None and body.preload_stiffness is None and body.modal_stresses is None
    assert body.quartic_stiffness is None and body.preload_stiffness_residual is None
    assert np.allclose(body.invariants.modal_first_moment, 0.0, atol=1e-9)  # mean axes
    assert np.allclose(np.diag(body.damping), 0.1 + 1e-5 * body.omega2)
    assert body.interface("tip").modal_map.shape == (6, 3)
    with pytest.raises(ModelError):
        body.stress(np.zeros(3))
