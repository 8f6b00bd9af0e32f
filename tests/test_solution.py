"""Solution: construction and shape checks, read-only views, exact save/load, CSV tables, plots."""
from __future__ import annotations

import csv

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from flexmb.results.solution import PLOT_QUANTITIES, Solution

NT, NB, NJ, NE = 9, 2, 2, 8


def make_arrays(seed: int = 0) -> dict:
    """Synthetic histories: two bodies spinning about z (so the quaternion sign must stay continuous)."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 2.0, NT)
    angle = 4.0 * t[:, None] * np.array([1.0, -1.5])  # (nt, nb), beyond 2π
    rot = Rotation.from_rotvec(np.stack([np.zeros_like(angle), np.zeros_like(angle), angle], -1).reshape(-1, 3))
    h = np.diff(t)
    return dict(
        t=t,
        body_names=("crank", "rod"),
        body_position=rng.normal(size=(NT, NB, 3)),
        body_rotation=rot.as_matrix().reshape(NT, NB, 3, 3),
        body_velocity=rng.normal(size=(NT, NB, 3)),
        body_angular_velocity=rng.normal(size=(NT, NB, 3)),
        joint_names=("hinge", "ball"),
        joint_types=("revolute", "spherical"),
        joint_rel_position=rng.normal(size=(NT, NJ, 3)),
        joint_rel_rotation=rng.normal(size=(NT, NJ, 3)),
        joint_rel_velocity=rng.normal(size=(NT, NJ, 6)),
        t_internal=t[:-1] + h / 2,
        joint_force=rng.normal(size=(NT, NJ, 3)),
        joint_moment=rng.normal(size=(NT, NJ, 3)),
        joint_force_internal=rng.normal(size=(NE, NJ, 3)),
        joint_moment_internal=rng.normal(size=(NE, NJ, 3)),
        joint_multiplier=rng.normal(size=(NT, NJ, 6)),
        kinetic_energy=rng.random(NT),
        potential_energy=-rng.random(NT),
        stats=dict(
            t_start=t[:-1], h=h, iterations=rng.integers(2, 6, NE), rate=rng.random(NE) * 0.1,
            factorizations=np.ones(NE, dtype=np.int64), residual=rng.random(NE) * 1e-11,
            retries=np.zeros(NE, dtype=np.int64),
        ),
        extra={"modal/rod": rng.normal(size=(NT, 3))},
        meta={"time_element": "lagrange1", "h": np.float64(0.25), "options": {"rtol": 1e-10}, "version": "0.1.0"},
    )


@pytest.fixture
def sol() -> Solution:
    return Solution(**make_arrays())


def test_attributes_shapes_and_read_only(sol):
    assert (sol.nt, sol.nb, sol.nj, sol.ni, sol.ne) == (NT, NB, NJ, NE, NE)
    assert sol.body_rotation.shape == (NT, NB, 3, 3)
    assert sol.joint_rel_velocity.shape == (NT, NJ, 6)
    assert sol.joint_force.shape == (NT, NJ, 3) and sol.joint_force_internal.shape == (NE, NJ, 3)
    np.testing.assert_array_equal(sol.total_energy, sol.kinetic_energy + sol.potential_energy)
    for a in (sol.t, sol.body_position, sol.joint_force, sol.stats["h"], sol.extra["modal/rod"], sol.quaternions):
        with pytest.raises(ValueError):
            a[...] = 0.0
    assert sol.meta["h"] == 0.25 and type(sol.meta["h"]) is float
    assert "Solution(nt=9" in repr(sol) and "crank" in repr(sol)


def test_arrays_are_copied():
    arrays = make_arrays()
    sol = Solution(**arrays)
    arrays["body_position"][0, 0, 0] = 123.0
    assert sol.body_position[0, 0, 0] != 123.0


@pytest.mark.parametrize(
    "key, bad, expected",
    [
        ("body_position", np.zeros((NT, NB, 2)), "(nt, nb, 3)"),
        ("body_rotation", np.zeros((NT, NB, 9)), "(nt, nb, 3, 3)"),
        ("joint_force", np.zeros((NE, NJ, 3)), "(nt, nj, 3)"),
        ("joint_force_internal", np.zeros((NT, NJ, 3)), "(ni, nj, 3)"),
        ("joint_rel_velocity", np.zeros((NT, NJ, 3)), "(nt, nj, 6)"),
        ("kinetic_energy", np.zeros(NT + 1), "(nt,)"),
    ],
)
def test_shape_errors_name_attribute_and_shapes(key, bad, expected):
    arrays = make_arrays()
    arrays[key] = bad
    with pytest.raises(ValueError) as info:
        Solution(**arrays)
    msg = str(info.value)
    assert key in msg and expected in msg and str(bad.shape) in msg


def test_other_input_errors():
    arrays = make_arrays()
    with pytest.raises(ValueError, match="strictly increasing"):
        Solution(**{**arrays, "t": arrays["t"][::-1].copy()})
    with pytest.raises(ValueError, match="unique"):
        Solution(**{**arrays, "body_names": ("a", "a")})
    with pytest.raises(ValueError, match="joint_types"):
        Solution(**{**arrays, "joint_types": ("revolute",)})
    with pytest.raises(ValueError, match=r"stats\['h'\]"):
        Solution(**{**arrays, "stats": {"t_start": np.zeros(3), "h": np.zeros(4)}})
    with pytest.raises(ValueError, match="meta"):
        Solution(**{**arrays, "meta": {"f": object()}})
    missing = dict(arrays)
    del missing["joint_force"]
    with pytest.raises(ValueError, match="joint_force.*required"):
        Solution(**missing)


def test_model_without_joints():
    arrays = make_arrays()
    for k in ("joint_names", "joint_types", "joint_rel_position", "joint_rel_rotation", "joint_rel_velocity",
              "joint_force", "joint_moment", "joint_force_internal", "joint_moment_internal", "joint_multiplier"):
        del arrays[k]
    sol = Solution(**arrays)
    assert sol.nj == 0 and sol.joint_force.shape == (NT, 0, 3) and sol.joint_force_internal.shape == (NE, 0, 3)


def test_views(sol):
    b = sol.body("rod")
    np.testing.assert_array_equal(b.position, sol.body_position[:, 1])
    np.testing.assert_array_equal(b.rotation, sol.body_rotation[:, 1])
    assert b.quaternion.shape == (NT, 4)
    j = sol.joint("ball")
    assert j.type == "spherical"
    np.testing.assert_array_equal(j.force, sol.joint_force[:, 1])
    np.testing.assert_array_equal(j.moment_internal, sol.joint_moment_internal[:, 1])
    assert j.force.shape == (NT, 3) and j.force_internal.shape == (NE, 3) and j.order == 2
    np.testing.assert_array_equal(j.multiplier, sol.joint_multiplier[:, 1])
    with pytest.raises(ValueError):
        b.position[0, 0] = 1.0
    with pytest.raises(KeyError, match=r"unknown joint 'nope'.*\['hinge', 'ball'\]"):
        sol.joint("nope")
    with pytest.raises(KeyError, match="crank"):
        sol.body("nope")


def test_quaternions_match_rotation_matrices_and_are_continuous(sol):
    q = sol.quaternions
    assert q.shape == (NT, NB, 4)
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, atol=1e-14)
    R = Rotation.from_quat(q.reshape(-1, 4), scalar_first=True).as_matrix().reshape(NT, NB, 3, 3)
    np.testing.assert_allclose(R, sol.body_rotation, atol=1e-13)
    assert np.all(q[0, :, 0] >= 0)
    assert np.all(np.einsum("tbi,tbi->tb", q[1:], q[:-1]) > 0)  # no sign jumps while spinning past 2π


def test_save_load_round_trip_is_bitwise(sol, tmp_path):
    path = sol.save(tmp_path / "run")
    assert path.name == "run.npz"
    back = Solution.load(path)
    for name in Solution._ARRAYS:
        a, b = getattr(sol, name), getattr(back, name)
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), name
    assert back.body_names == sol.body_names and back.joint_types == sol.joint_types
    assert list(back.stats) == list(sol.stats) and list(back.extra) == list(sol.extra)
    for k in sol.stats:
        assert back.stats[k].dtype == sol.stats[k].dtype and back.stats[k].tobytes() == sol.stats[k].tobytes()
    assert back.extra["modal/rod"].tobytes() == sol.extra["modal/rod"].tobytes()
    assert back.meta == sol.meta
    # no pickle needed to read it
    with np.load(path, allow_pickle=False) as f:
        assert "body_names" in f.files


def test_load_rejects_foreign_npz(tmp_path):
    np.savez(tmp_path / "other.npz", a=np.zeros(3))
    with pytest.raises(ValueError, match="not a flexmb solution"):
        Solution.load(tmp_path / "other.npz")


def read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.reader(fh))


def test_csv_tables(sol, tmp_path):
    paths = sol.to_csv(tmp_path / "csv")
    assert set(paths) == {"bodies", "joints", "reactions", "reactions_internal", "energy", "newton"}
    rows = read_csv(paths["bodies"])
    assert rows[0] == ["t [s]", "body", "x [m]", "y [m]", "z [m]", "vx [m/s]", "vy [m/s]", "vz [m/s]",
                       "wx [rad/s]", "wy [rad/s]", "wz [rad/s]", "qw", "qx", "qy", "qz"]
    assert len(rows) == 1 + NT * NB
    k, i = 3, 1  # row of time node 3, body "rod"
    row = rows[1 + k * NB + i]
    assert float(row[0]) == sol.t[k] and row[1] == "rod"
    np.testing.assert_array_equal(np.array(row[2:5], float), sol.body_position[k, i])  # exact text
    np.testing.assert_array_equal(np.array(row[11:15], float), sol.quaternions[k, i])
    rows = read_csv(paths["joints"])
    assert rows[0][:3] == ["t [s]", "joint", "x [m]"] and rows[0][5] == "rx [rad]" and len(rows[0]) == 14 and len(rows) == 1 + NT * NJ
    np.testing.assert_array_equal(np.array(rows[2][8:14], float), sol.joint_rel_velocity[0, 1])
    rows = read_csv(paths["reactions"])
    assert rows[0] == ["t [s]", "joint", "fx [N]", "fy [N]", "fz [N]", "mx [N m]", "my [N m]", "mz [N m]"] and len(rows) == 1 + NT * NJ
    assert float(rows[1][0]) == sol.t[0]
    np.testing.assert_array_equal(np.array(rows[1][5:8], float), sol.joint_moment[0, 0])
    rows = read_csv(paths["reactions_internal"])
    assert rows[0] == ["t_internal [s]", "joint", "fx [N]", "fy [N]", "fz [N]", "mx [N m]", "my [N m]", "mz [N m]"] and len(rows) == 1 + NE * NJ
    assert float(rows[1][0]) == sol.t_internal[0]
    np.testing.assert_array_equal(np.array(rows[1][5:8], float), sol.joint_moment_internal[0, 0])
    rows = read_csv(paths["energy"])
    assert rows[0] == ["t [s]", "kinetic [J]", "potential [J]", "total [J]"] and len(rows) == 1 + NT
    rows = read_csv(paths["newton"])
    assert rows[0] == ["element", "t_start [s]", "h [s]", "iterations", "rate", "factorizations", "residual", "retries"]
    assert len(rows) == 1 + NE and int(rows[-1][3]) == sol.stats["iterations"][-1]


@pytest.mark.parametrize("quantity", PLOT_QUANTITIES)
def test_plot_to_png(sol, tmp_path, quantity):
    import matplotlib

    matplotlib.use("Agg")
    path = tmp_path / "plots" / f"{quantity}.png"
    ax = sol.plot(quantity, path=path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert ax.get_xlabel() == "t [s]"


def test_plot_selection_and_errors(sol, tmp_path):
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    assert sol.plot("rel_rotation", joints=["hinge"], components="z", ax=ax) is ax
    assert [ln.get_label() for ln in ax.get_lines()] == ["hinge z"]
    with pytest.raises(ValueError, match="unknown plot quantity"):
        sol.plot("speed", ax=ax)
    with pytest.raises(ValueError, match="components"):
        sol.plot("position", components="xw", ax=ax)
    with pytest.raises(KeyError, match="valid body names"):
        sol.plot("position", bodies=["nope"], ax=ax)


# ------------------------------------------------------------------ body-fixed points, units, no joints
def _swinging(units="SI", joints=True):
    import flexmb as fm

    # reference point at the pin end of a bar whose centre of mass is 0.5 m along body x
    bar = fm.RigidBody("bar", mass=2.0, inertia=(1e-4, 0.2, 0.2), position=(0.0, 0.0, 0.0), com=(0.5, 0, 0),
                       angular_velocity=(0, 0, 1.5))
    pin = fm.Revolute("pin", "ground", "bar", point=(0, 0, 0), axis=(0, 0, 1))
    return fm.simulate(fm.Model([bar], [pin] if joints else [], [fm.Gravity((0, -9.81, 0))], units=units), 0.3, 0.01)


def test_point_gives_the_motion_of_body_fixed_points():
    sol = _swinging()
    bar = sol.body("bar")
    tip = bar.point((1.0, 0.0, 0.0))
    assert tip.position.shape == (sol.nt, 3) and tip.body == "bar"
    # the tip stays 1 m from the pin and moves perpendicular to the bar at |omega| * 1 m
    np.testing.assert_allclose(np.linalg.norm(tip.position, axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.einsum("ti,ti->t", tip.position, tip.velocity), 0.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(tip.velocity, axis=1), np.abs(bar.angular_velocity[:, 2]), rtol=1e-12)
    both = bar.point([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    assert both.position.shape == (sol.nt, 2, 3)
    np.testing.assert_allclose(both.position[:, 0], bar.position, atol=0)
    np.testing.assert_allclose(both.velocity[:, 1], tip.velocity, atol=1e-15)
    assert not hasattr(tip, "acceleration")  # documented: node values carry no acceleration
    import flexmb as fm

    with pytest.raises(fm.ModelError, match=r"body 'bar': point r=.* must be a finite body-frame point of shape \(3,\)"):
        bar.point((1.0, np.nan))


def test_csv_without_joints_and_units_in_headers(tmp_path):
    sol = _swinging(units="ft-slug-s", joints=False)
    paths = sol.to_csv(tmp_path)
    assert read_csv(paths["joints"]) == [["t [s]", "joint", "x [ft]", "y [ft]", "z [ft]", "rx [rad]", "ry [rad]",
                                          "rz [rad]", "vx [ft/s]", "vy [ft/s]", "vz [ft/s]", "wx [rad/s]",
                                          "wy [rad/s]", "wz [rad/s]"]]
    assert read_csv(paths["reactions"])[0][2:] == ["fx [lbf]", "fy [lbf]", "fz [lbf]", "mx [lbf ft]", "my [lbf ft]", "mz [lbf ft]"]
    rows = read_csv(paths["bodies"])
    assert rows[0][2] == "x [ft]" and rows[0][5] == "vx [ft/s]" and len(rows) == 1 + sol.nt
    assert read_csv(paths["energy"])[0] == ["t [s]", "kinetic [ft lbf]", "potential [ft lbf]", "total [ft lbf]"]


@pytest.mark.parametrize("units, force, energy", [("SI", "N", "J"), ("ft-slug-s", "lbf", "ft lbf"),
                                                  ("mm-t-s", "N", "mJ"), ("furlong", "force, furlong", "energy, furlong")])
def test_plot_axes_carry_the_unit_symbols(units, force, energy):
    from matplotlib.figure import Figure

    sol = _swinging(units=units)
    ax = sol.plot("joint_force", ax=Figure().subplots())
    assert ax.get_ylabel() == f"joint force [{force}]"
    ax = sol.plot("energy", ax=Figure().subplots())
    assert ax.get_ylabel() == f"energy [{energy}]" and ax.get_title().endswith(f" {energy}")
