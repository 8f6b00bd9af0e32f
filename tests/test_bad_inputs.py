"""The bad-input corpus: every class of bad input gives a flexmb error naming the input, the value
and the fix, never a numpy/zipfile traceback and never silent NaN.

Classes and counts (one hypothesis run per parameter class; ``max_examples`` below):

=====================================  =======  ================================================
class                                  count    inputs
=====================================  =======  ================================================
model parameters (numbers)             27 x 25  mass, stiffness, damping, angle0, displacement0,
                                                free_length, assembly_tol, drive constants and
                                                rates, options, h, t_end ... (<= 0, NaN, inf,
                                                strings, None, lists)
model parameters (vectors)             8 x 25   position, velocity, point, axis, g, force, com,
                                                angular_velocity (wrong length, NaN, strings)
model parameters (types, choices)      15       Model(bob), non-elements, body objects for names,
                                                frames, point_frame, drive + spring
simulate's run arguments               18 + 2   rtol, atol, t_eval, h, t_end as strings or out of
                                                range; on_step not callable or returning an array
                                                or a string; numpy truth values accepted
corrupted solution files               166      truncated at 40 points, 64 bit flips (32
                                                compressed, 32 not), each of 27 entries missing,
                                                NaN injected in each of 14 node arrays (with and
                                                without checksums: 28), random bytes, empty, a
                                                zip of text, a .npy, a pickle, an absent file
=====================================  =======  ================================================

About 1000 generated inputs in all (27 x 25 + 8 x 25 + 15 + 20 + 166); the module runs in about 10 s.
"""
from __future__ import annotations

import io
import math
import re
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flexmb as fm
from flexmb.errors import ModelError, SolutionFileError

EXAMPLES = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
#: words of a message that tells the user what to do
FIX = re.compile(r"\b(give|use|must|remove|write|restore|re-run|fix|check)\b")


def body(**kw):
    args = dict(mass=1.0, inertia=np.full(3, 1e-3), position=(-1.0, 0.0, 0.0))
    args.update(kw)
    return fm.RigidBody("bob", **args)


def pin(cls=fm.Revolute, **kw):
    return cls("pin", "ground", "bob", point=(0, 0, 0), axis=(0, 0, 1), **kw)


def spring(**kw):
    return fm.SpringDamper("spr", "ground", "bob", point_a=(0, 1, 0), **kw)


def model(**kw):
    return fm.Model([body()], [pin()], **kw)


def run(**kw):
    args = dict(t_end=0.02, h=0.01)
    args.update(kw)
    return fm.simulate(fm.Model([body()], [pin()]), **args)


def options(**kw):
    return run(options=fm.SimulationOptions(**kw))


def newton(**kw):
    return run(options=fm.SimulationOptions(newton=fm.NewtonOptions(**kw)))


# --------------------------------------------------------------------------------------------------
# numbers: (builder, parameter name, owner in the message, strategy of bad values)

not_a_number = st.one_of(st.text(max_size=6), st.none(), st.lists(st.floats(), min_size=2, max_size=3))
non_finite = st.sampled_from([math.nan, math.inf, -math.inf])
negative = st.floats(max_value=-1e-300, allow_nan=False, allow_infinity=False)
non_positive = st.floats(max_value=0.0, allow_nan=False, allow_infinity=False)
any_bad_nonneg = st.one_of(negative, non_finite, not_a_number)
any_bad_pos = st.one_of(non_positive, non_finite, not_a_number)
any_bad_real = st.one_of(non_finite, not_a_number)
bad_rate = st.one_of(non_finite, st.text(max_size=6), st.lists(st.floats(), min_size=2, max_size=3))  # None: no drive

NUMBERS = [
    (lambda v: body(mass=v), "mass", "RigidBody 'bob'", any_bad_pos),
    (lambda v: pin(stiffness=v), "stiffness", "Revolute 'pin'", any_bad_nonneg),
    (lambda v: pin(damping=v), "damping", "Revolute 'pin'", any_bad_nonneg),
    (lambda v: pin(angle0=v), "angle0", "Revolute 'pin'", any_bad_real),
    (lambda v: pin(angle=v), "angle", "Revolute 'pin'", st.one_of(non_finite, st.text(max_size=6), st.lists(st.floats(), min_size=2, max_size=3))),
    (lambda v: pin(angular_velocity=v), "angular_velocity", "Revolute 'pin'", bad_rate),
    (lambda v: pin(fm.Prismatic, stiffness=v), "stiffness", "Prismatic 'pin'", any_bad_nonneg),
    (lambda v: pin(fm.Prismatic, damping=v), "damping", "Prismatic 'pin'", any_bad_nonneg),
    (lambda v: pin(fm.Prismatic, displacement0=v), "displacement0", "Prismatic 'pin'", any_bad_real),
    (lambda v: pin(fm.Prismatic, velocity=v), "velocity", "Prismatic 'pin'", bad_rate),
    (lambda v: pin(fm.Prismatic, displacement=v), "displacement", "Prismatic 'pin'", st.one_of(non_finite, st.text(max_size=6))),
    (lambda v: spring(stiffness=v), "stiffness", "SpringDamper 'spr'", any_bad_nonneg),
    (lambda v: spring(damping=v), "damping", "SpringDamper 'spr'", any_bad_nonneg),
    (lambda v: spring(free_length=v), "free_length", "SpringDamper 'spr'", st.one_of(negative, non_finite, st.text(max_size=6))),
    (lambda v: model(assembly_tol=v), "assembly_tol", "Model", any_bad_pos),
    (lambda v: run(h=v), "h", "simulate", any_bad_pos),
    (lambda v: run(t_end=v), "t_end", "simulate", any_bad_real),
    (lambda v: run(t0=v), "t0", "simulate", any_bad_real),
    (lambda v: run(p=v), "p", "simulate", st.one_of(st.integers(max_value=0), st.integers(min_value=4), non_finite, st.text(max_size=4))),
    (lambda v: options(max_halvings=v), "max_halvings", "SimulationOptions", st.one_of(st.integers(max_value=-1), non_finite, st.text(max_size=4), st.floats(0.1, 0.9))),
    (lambda v: newton(tol=v), "tol", "NewtonOptions", any_bad_pos),
    (lambda v: newton(max_iter=v), "max_iter", "NewtonOptions", st.one_of(st.integers(max_value=0), non_finite, st.text(max_size=4))),
    (lambda v: newton(divergence_rate=v), "divergence_rate", "NewtonOptions", any_bad_pos),
    (lambda v: fm.RigidBody("bob", mass=1.0, inertia=v), "inertia", "RigidBody 'bob'",
     st.one_of(st.text(max_size=6), st.lists(st.floats(max_value=0.0, allow_nan=False), min_size=3, max_size=3),
               st.lists(non_finite, min_size=3, max_size=3))),
    (lambda v: fm.Revolute("pin", "ground", "bob", point=(0, 0, 0), axis=v), "axis", "Revolute 'pin'",
     st.one_of(st.just((0.0, 0.0, 0.0)), st.lists(non_finite, min_size=3, max_size=3), st.text(max_size=4))),
    (lambda v: fm.PointForce("bob", v), "force", "PointForce on 'bob'",
     st.one_of(st.lists(st.floats(allow_nan=False), min_size=1, max_size=2), st.lists(non_finite, min_size=3, max_size=3), st.text(max_size=4))),
    (lambda v: fm.PointTorque("bob", v), "torque", "PointTorque on 'bob'",
     st.one_of(st.lists(st.floats(allow_nan=False), min_size=4, max_size=5), st.lists(non_finite, min_size=3, max_size=3))),
]


def check_message(msg: str, owner: str, name: str, value=None) -> None:
    assert owner in msg, msg
    assert name in msg, msg
    assert FIX.search(msg), f"no fix in: {msg}"
    if isinstance(value, float) and not isinstance(value, bool):
        assert repr(value) in msg or f"{value:g}" in msg or str(value) in msg, f"value {value!r} not in: {msg}"


@pytest.mark.parametrize("build, name, owner, bad", NUMBERS, ids=[f"{o}.{n}" for _, n, o, _ in NUMBERS])
def test_bad_numbers(build, name, owner, bad):
    @EXAMPLES
    @given(bad)
    def check(value):
        with pytest.raises(ModelError) as info:
            build(value)
        check_message(str(info.value), owner, name, value)

    check()


VECTORS = [
    (lambda v: body(position=v), "position"), (lambda v: body(velocity=v), "velocity"),
    (lambda v: body(angular_velocity=v), "angular_velocity"), (lambda v: body(com=v), "com"),
    (lambda v: fm.Gravity(v), "g"), (lambda v: fm.PointForce("bob", (1, 0, 0), point=v), "point"),
    (lambda v: spring(point_b=v), "point_b"), (lambda v: fm.Spherical("pin", "ground", "bob", point=v), "point"),
]
bad_vector = st.one_of(
    st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=0, max_size=2),
    st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=4, max_size=6),
    st.lists(st.floats(), min_size=3, max_size=3).filter(lambda v: not all(map(math.isfinite, v))),
    st.text(max_size=5),
)


@pytest.mark.parametrize("build, name", VECTORS, ids=[n for _, n in VECTORS])
def test_bad_vectors(build, name):
    @EXAMPLES
    @given(bad_vector)
    def check(value):
        with pytest.raises(ModelError) as info:
            build(value)
        msg = str(info.value)
        assert name in msg and (FIX.search(msg) or "components" in msg or "NaN or inf" in msg), msg

    check()


@pytest.mark.parametrize("build, match", [
    (lambda: fm.Model(body()), r"Model: bodies=RigidBody\('bob'\) is not a list of RigidBody; write e.g. Model\(\[bob\]"),
    (lambda: fm.Model([body(), "bar"]), r"bodies\[1\]='bar' \(str\) is not a body; give RigidBody"),
    (lambda: fm.Model([body()], [fm.Gravity()]), r"joints\[0\]=.*is not a joint; give Revolute"),
    (lambda: fm.Model([body()], [], [pin()]), r"forces\[0\]=Revolute\('pin'\) .* is not a force element; use Gravity"),
    (lambda: fm.Model([body()], units=3), r"units=3 must be a label string such as 'SI'"),
    (lambda: fm.Revolute("pin", "ground", body(), point=(0, 0, 0), axis=(0, 0, 1)),
     r"body_b=RigidBody\('bob'\) must be a body name .*give its name 'bob'"),
    (lambda: fm.Spherical("pin", "ground", "bob", frame_b=(0, 0, 0)), r"frame_b=\(0, 0, 0\) is not a Frame; give Frame"),
    (lambda: fm.PointForce("bob", (1, 0, 0), frame="world"), r"frame='world'; use 'global' .* or 'body'"),
    (lambda: fm.PointForce("bob", (1, 0, 0), point_frame="global"), r"point_frame='global'; use 'body' .* or 'inertial'"),
    (lambda: spring(point_frame="world"), r"SpringDamper 'spr': point_frame='world'; use 'body'"),
    (lambda: pin(fm.Prismatic, displacement=lambda t: 0.1 * t, stiffness=10.0),
     r"Prismatic 'pin': a driven prismatic joint cannot also have stiffness/damping .* remove the drive or the spring"),
    (lambda: fm.Model([body()], [], [fm.PointForce("ground", (1, 0, 0))]), r"PointForce: body='ground' is not a body"),
    (lambda: fm.simulate("model", 1.0, 0.1), r"simulate: model='model' \(str\) is not a flexmb.Model; build one"),
    (lambda: options(linear_solver="mumps"), r"SimulationOptions: linear_solver='mumps' is unknown; use one of \["),
    (lambda: options(redundant="drop"), r"SimulationOptions: redundant='drop'; use 'resolve' or 'error'"),
])
def test_bad_types_and_choices(build, match):
    with pytest.raises(ModelError, match=match):
        build()


def test_mass_with_unit_string_names_the_input_not_numpy():
    with pytest.raises(ModelError, match=r"RigidBody 'bob': mass='1 kg' is a string; give the mass as a number \[kg\]"):
        body(mass="1 kg")
    with pytest.raises(ModelError, match=r"simulate: t_end='1' is not a number; give t_end as a plain number \[s\]"):
        run(t_end="1")


# --------------------------------------------------------------------------------------------------
# corrupted solution files


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    sol = fm.simulate(fm.Model([body()], [pin()], [fm.Gravity((0, -9.81, 0))]), t_end=0.05, h=0.01)
    d = tmp_path_factory.mktemp("sol")
    return sol, sol.save(d / "c.npz"), sol.save(d / "u.npz", compress=False)


def assert_same(a, b):
    for name in fm.Solution._ARRAYS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def load_or_refuse(path, original):
    """A damaged file is refused with SolutionFileError or (damage outside the data) read in full."""
    try:
        back = fm.Solution.load(path)
    except SolutionFileError as exc:
        msg = str(exc)
        assert str(path) in msg and FIX.search(msg) and "allow_pickle" not in msg, msg
        return False
    assert_same(back, original)
    return True


def test_truncated_files_are_refused(saved, tmp_path):
    sol, path, _ = saved
    data = path.read_bytes()
    for k, cut in enumerate(np.linspace(0, len(data) - 1, 40).astype(int)):
        p = tmp_path / f"cut{k}.npz"
        p.write_bytes(data[:cut])
        assert not load_or_refuse(p, sol), f"a file cut at {cut} of {len(data)} bytes was read"


@pytest.mark.parametrize("which", [1, 2])
def test_bit_flips_are_refused_or_harmless(saved, tmp_path, which):
    sol, *paths = saved
    data = bytearray(paths[which - 1].read_bytes())
    rng = np.random.default_rng(which)
    refused = 0
    for k, pos in enumerate(rng.choice(len(data), 32, replace=False)):
        flipped = bytearray(data)
        flipped[pos] ^= 1 << int(rng.integers(8))
        p = tmp_path / f"flip{k}.npz"
        p.write_bytes(bytes(flipped))
        refused += not load_or_refuse(p, sol)
    assert refused >= 16  # most bytes of the file are data; the rest (zip metadata) is harmless


def rewrite(path, out, change):
    """Copy the .npz at ``path`` to ``out`` with ``change(dict of arrays)`` applied."""
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files}
    change(arrays)
    np.savez(out, **arrays)
    return out


def test_missing_entries_are_named(saved, tmp_path):
    sol, path, _ = saved
    with np.load(path) as f:
        keys = [k for k in f.files if k != "__flexmb_solution__"]
    for k in keys:
        p = rewrite(path, tmp_path / "m.npz", lambda a: a.pop(k))
        with pytest.raises(SolutionFileError, match=rf"entries \[{re.escape(repr(k))}\] are missing; .* re-run"):
            fm.Solution.load(p)
    p = rewrite(path, tmp_path / "h.npz", lambda a: a.pop("__flexmb_solution__"))
    with pytest.raises(SolutionFileError, match="is not a flexmb solution file .* write it with Solution.save"):
        fm.Solution.load(p)


@pytest.mark.parametrize("name", fm.Solution._ARRAYS)
def test_injected_nan_is_detected(saved, tmp_path, name):
    sol, path, _ = saved
    if getattr(sol, name).size == 0:
        pytest.skip("empty array")

    def inject(a):
        v = a[name].copy()
        v.reshape(-1)[v.size // 2] = np.nan
        a[name] = v

    p = rewrite(path, tmp_path / "nan.npz", inject)
    with pytest.raises(SolutionFileError, match=rf"entry '{name}' does not match the checksum"):
        fm.Solution.load(p)

    def inject_and_drop_checksums(a):  # a file without checksums (or forged ones): NaN still found
        inject(a)
        header = __import__("json").loads(str(a["__flexmb_solution__"][()]))
        header.pop("sha256")
        a["__flexmb_solution__"] = np.array(__import__("json").dumps(header))

    p = rewrite(path, tmp_path / "nan2.npz", inject_and_drop_checksums)
    with pytest.raises(SolutionFileError, match=rf"{name} holds non-finite values \(first at index"):
        fm.Solution.load(p)


def test_random_bytes_empty_and_npy_are_refused(tmp_path):
    rng = np.random.default_rng(0)
    cases = {"random.npz": rng.bytes(5000), "empty.npz": b"", "zip_of_text.npz": None, "array.npz": None}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("readme.txt", "hello")
    cases["zip_of_text.npz"] = buf.getvalue()
    buf = io.BytesIO()
    np.save(buf, np.arange(3.0))
    cases["array.npz"] = buf.getvalue()
    cases["protocol4.npz"] = b"\x80\x04\x95" + rng.bytes(100)
    for name, data in cases.items():
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises(SolutionFileError) as info:
            fm.Solution.load(p)
        assert "pickle" not in str(info.value).replace(str(p), "").lower()
        assert str(p) in str(info.value)
    with pytest.raises(FileNotFoundError, match="no solution file"):
        fm.Solution.load(tmp_path / "absent.npz")


# --------------------------------------------------------------------------------------------------
# simulate's run arguments (issue 18 section 2): strings and other bad values for rtol, atol, t_eval,
# h, t_end; on_step not callable (found only after the first element before) or returning an array


@pytest.mark.parametrize("kw, match", [
    (dict(rtol="1e-6"), r"simulate: rtol='1e-6' is not a number; give rtol as a plain number"),
    (dict(rtol=1e-6, atol="1e-8"), r"simulate: atol='1e-8' is not a number; give atol as a plain number"),
    (dict(rtol=-1.0), r"simulate: rtol=-1.0 must be >= 0"),
    (dict(rtol=0.0), r"simulate: rtol=0 needs an absolute tolerance; give atol > 0"),  # names rtol and atol
    (dict(atol=0.0), r"simulate: atol=0.0 must be > 0"),
    (dict(atol=[1e-6, 1e-7]), r"simulate: atol=\[1e-06, 1e-07\] \(list\) is not a number"),
    (dict(t_eval="0, 0.01"), r"simulate: t_eval='0, 0.01' is a string; give the output times as a list"),
    (dict(t_eval=["0", "x"]), r"simulate: t_eval=\['0', 'x'\] is not a list of numbers; give the output times"),
    (dict(t_eval=[0.01, 0.005]), r"simulate: t_eval must be strictly increasing; t_eval\[0\] = 0.01 >= t_eval\[1\] = 0.005; give sorted"),
    (dict(t_eval=[0.0, float("nan")]), r"simulate: t_eval=\[0.0, nan\] has non-finite times; give finite times"),
    (dict(t_eval=[]), r"simulate: t_eval is empty; give at least one output time"),
    (dict(t_eval=[0.0, 5.0]), r"simulate: t_eval spans \[0, 5\] s, outside the run \[0, 0.02\] s"),
    (dict(h="0.01"), r"simulate: h='0.01' is not a number; give h as a plain number \[s\]"),
    (dict(t_end="1 s"), r"simulate: t_end='1 s' is not a number; give t_end as a plain number \[s\]"),
    (dict(on_step="stop"), r"simulate: on_step='stop' \(str\) is not callable; give a function on_step\(t, state\)"),
    (dict(on_step=1.0), r"simulate: on_step=1.0 \(float\) is not callable"),
    (dict(on_step=lambda t, s: s.body_position), r"simulate: on_step returned array\(.*\(ndarray\) at t = 0.01 s; give a function that returns True"),
    (dict(on_step=lambda t, s: "yes"), r"simulate: on_step returned 'yes' \(str\) at t = 0.01 s; give a function"),
])
def test_bad_run_arguments_name_the_argument(kw, match):
    calls = []
    if "on_step" in kw and callable(kw["on_step"]):
        f = kw["on_step"]
        kw = dict(kw, on_step=lambda t, s: calls.append(t) or f(t, s))
    with pytest.raises(ModelError, match=match) as exc:
        run(**kw)
    check_message(str(exc.value), "simulate", list(kw)[-1])
    assert len(calls) <= 1  # a bad callable is refused before the run, a bad return at the first node


def test_on_step_may_return_numpy_truth_values():
    sol = run(t_end=0.05, on_step=lambda t, s: np.bool_(t >= 0.02 - 1e-12))
    assert sol.meta["stopped_by"] == "on_step" and sol.t[-1] == pytest.approx(0.02)
    assert run(on_step=lambda t, s: np.float64(0.0)).meta["complete"]
