"""The bad-input corpus of the FE side and the flexible-body model: options that contradict each
other, wrong types and values of every public argument of build_flexible_body and FlexibleBody,
and damaged FlexibleBodyData files. Each gives a flexmb error naming the input, the value and the
fix (never a numpy/scipy traceback, never an option dropped without a word)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import flexmb as fm
from flexmb.errors import ModelError
from flexmb.fe.mesh import Material, structured_box
from flexmb.fe.reduction.body_data import build_flexible_body

STEEL = Material(210e9, 0.3, 7850.0, "steel")
#: words of a message that tells the user what to do
FIX = re.compile(r"\b(give|use|must|pass|drop|remove|read|write|rebuild|re-run|fix|check)\b", re.IGNORECASE)


@pytest.fixture(scope="module")
def bar():
    return structured_box((1.0, 0.1, 0.1), (4, 1, 1), "hexahedron", material=STEEL)


@pytest.fixture(scope="module")
def bar_data(bar):
    return build_flexible_body(bar, interfaces=["xmin", "xmax"], n_modes=2, preloads=False, stresses=False)


# --------------------------------------------------------------------------------------------------
# conflicting options: an option that cannot take effect is an error

CONFLICTS = [
    (dict(geometric=False, quartic="relaxed"), ("quartic='relaxed'", "geometric=False", "quartic=False")),
    (dict(geometric=False, quartic=True), ("quartic=True", "geometric=True")),
    (dict(geometric=False, quartic="raw"), ("quartic='raw'", "geometric=False")),
    (dict(interfaces=["xmin", "xmax"], method="free-free", reference="xmax"), ("reference='xmax'", "method='free-free'", "mean-axis")),
    (dict(reference="xmin"), ("reference='xmin'", "no `interfaces`")),
    (dict(interfaces=["xmin"], method="free-free", static_modes="xmax"), ("static_modes", "Craig-Bampton")),
    (dict(static_modes="xmax"), ("static_modes",)),
    (dict(interface_kind="average"), ("interface_kind='average'", "without `interfaces`")),
    (dict(method="craig-bampton"), ("method='craig-bampton'", "interfaces")),
]


@pytest.mark.parametrize("kwargs, parts", CONFLICTS, ids=[",".join(k) for k, _ in CONFLICTS])
def test_conflicting_build_options_are_errors(bar, kwargs, parts):
    with pytest.raises(ModelError) as info:
        build_flexible_body(bar, n_modes=2, preloads=False, stresses=False, **kwargs)
    msg = str(info.value)
    assert "build_flexible_body" in msg and FIX.search(msg), msg
    for part in parts:
        assert part in msg, msg


def test_geometric_false_alone_skips_the_quartic_term(bar):
    data = build_flexible_body(bar, n_modes=2, geometric=False, preloads=False, stresses=False)
    assert data.settings["quartic"] is None and data.geometric_stiffness is None and data.quartic_stiffness is None
    assert build_flexible_body(bar, n_modes=2, preloads=False, stresses=False).settings["quartic"] == "relaxed"


def test_damping_of_a_body_without_modes_is_an_error(bar_data):
    with pytest.raises(ModelError, match=r"FlexibleBody 'b': damping=0.02 for a body without modes.*drop damping"):
        fm.FlexibleBody("b", bar_data, modes=[], damping=0.02)
    assert fm.FlexibleBody("b", bar_data, modes=[]).n_modes == 0
    assert fm.FlexibleBody("b", bar_data, modes=[], damping=0.0).n_modes == 0  # zero damping asks for nothing


# --------------------------------------------------------------------------------------------------
# wrong types and values of every public argument (hypothesis where a class of values fits)

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EXAMPLES = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
text = st.text(max_size=5)
not_numbers = st.one_of(text, st.lists(text, min_size=1, max_size=3), st.just({"ratio": 0.1}), st.none())


def check_message(msg: str, *parts: str) -> None:
    for part in parts:
        assert part in msg, msg
    assert FIX.search(msg), f"no fix in: {msg}"


@pytest.mark.parametrize("key", ["q0", "qd0", "damping"])
def test_flexible_body_numbers_that_are_not_numbers(bar_data, key):
    @EXAMPLES
    @given(not_numbers.filter(lambda v: v is not None))
    def check(value):
        with pytest.raises(ModelError) as info:
            fm.FlexibleBody("b", bar_data, **{key: value})
        check_message(str(info.value), "FlexibleBody 'b'", f"{key}=", "give")

    check()


def test_flexible_body_modes_that_are_not_indices(bar_data):
    nm = bar_data.n_modes
    bad = st.one_of(text, st.lists(text, min_size=1, max_size=2), st.floats().filter(lambda v: v != int(v) if np.isfinite(v) else True),
                    st.lists(st.integers(min_value=nm, max_value=10 * nm), min_size=1, max_size=2),
                    st.lists(st.integers(max_value=-1), min_size=1, max_size=2), st.just([0, 0]), st.booleans())

    @EXAMPLES
    @given(bad)
    def check(value):
        with pytest.raises(ModelError) as info:
            fm.FlexibleBody("b", bar_data, modes=value)
        check_message(str(info.value), "FlexibleBody 'b'", "modes=", f"0 .. {nm - 1}")

    check()
    assert fm.FlexibleBody("b", bar_data, modes=np.array([0.0, 2.0])).n_modes == 2  # whole floats are indices


def test_build_n_modes_must_be_an_integer(bar):
    bad = st.one_of(st.floats().filter(lambda v: not (np.isfinite(v) and v == int(v))), text, st.none(), st.booleans(),
                    st.integers(max_value=0), st.lists(st.integers(1, 3), min_size=1, max_size=2))

    @EXAMPLES
    @given(bad)
    def check(value):
        with pytest.raises(ModelError) as info:
            build_flexible_body(bar, n_modes=value, preloads=False, stresses=False)  # free-free: >= 1
        check_message(str(info.value), "build_flexible_body", "n_modes=", "integer >= 1")

    check()
    with pytest.raises(ModelError, match=r"n_modes=-1 is too small; give an integer >= 0.*Craig-Bampton"):
        build_flexible_body(bar, interfaces=["xmin"], n_modes=-1, preloads=False, stresses=False)
    cb = build_flexible_body(bar, interfaces=["xmin", "xmax"], n_modes=0, geometric=False, preloads=False, stresses=False)
    assert cb.n_modes == 6  # Craig-Bampton with no fixed-interface mode: the six static modes of xmax


BUILD_BAD = [
    (dict(mesh="meshes/beam_hex8.msh"), ("mesh='meshes/beam_hex8.msh' is a path", "flexmb.read_mesh(")),
    (dict(mesh=None), ("mesh=None", "FEMesh")),
    (dict(materials="steel"), ("materials='steel'", "Material(E, nu, rho)")),
    (dict(materials={"*": "steel"}), ("materials=", "Material(E, nu, rho)")),
    (dict(interfaces=[3]), ("interfaces=[3]", "node-set names")),
    (dict(interfaces=["nope"]), ("['nope']", "known sets", "xmin")),
    (dict(interface_kind="soft", interfaces=["xmin"]), ("interface_kind='soft'", "'rigid'")),
    (dict(method="cb"), ("method='cb'", "'craig-bampton'")),
    (dict(reference=3, interfaces=["xmin"]), ("reference=3",)),
    (dict(damping="x"), ("damping='x'", "ratio")),
    (dict(damping=-0.1), ("damping=-0.1", "ratio >= 0")),
    (dict(damping={"zeta": 0.1}), ("damping keys ['zeta']",)),
    (dict(geometric="no"), ("geometric='no'", "True or False")),
    (dict(allow_unassembled=1), ("allow_unassembled=1", "True or False")),
    (dict(name=3), ("name=3", "string")),
    (dict(backend="umfpack"), ("backend='umfpack'", "'cholmod'")),
    (dict(basis_transform=3), ("basis_transform=3", "callable")),
    (dict(quartic="relax"), ("`quartic` = 'relax'", "'raw'")),
]


@pytest.mark.parametrize("kwargs, parts", BUILD_BAD, ids=[",".join(k) + str(i) for i, (k, _) in enumerate(BUILD_BAD)])
def test_build_arguments_are_checked_before_any_assembly(bar, kwargs, parts):
    args = dict(mesh=bar, n_modes=2, preloads=False, stresses=False)
    args.update(kwargs)
    with pytest.raises(ModelError) as info:
        build_flexible_body(args.pop("mesh"), **args)
    check_message(str(info.value), "build_flexible_body", *parts)


def test_mesh_arguments_are_checked(tmp_path):
    from flexmb.fe.mesh import check_mesh, read_mesh

    mesh_file = "meshes/beam_hex8.msh"
    cases = [
        (lambda: read_mesh(3), ("read_mesh: path=3", "path")),
        (lambda: read_mesh(mesh_file, materials="steel"), ("read_mesh: materials='steel'", "Material(E, nu, rho)")),
        (lambda: read_mesh(mesh_file, units=3), ("units=3", "'SI'")),
        (lambda: read_mesh(mesh_file, drop_unused_nodes="yes"), ("drop_unused_nodes='yes'", "True or False")),
        (lambda: Material(210e9, 0.3, 7850.0, name=3), ("name=3", "string")),
        (lambda: Material("210e9", 0.3, 7850.0), ("`E` = '210e9'", "give a plain number")),
        (lambda: structured_box().with_materials("steel"), ("materials='steel'", "Material(E, nu, rho)")),
        (lambda: structured_box().translated("a"), ("translated: d='a'", "three finite numbers")),
        (lambda: structured_box().nodes_on_plane((0, 0, 0), (0, 0, 0)), ("normal=(0, 0, 0)", "normal vector")),
        (lambda: structured_box().nodes_within((0, 0, 0), "r"), ("radius='r'", "length")),
        (lambda: structured_box().nodes_in_box((0, 0), (1, 1, 1)), ("lo=(0, 0)", "three finite numbers")),
        (lambda: structured_box().with_node_set("s", [0.5]), ("idx=[0.5]", "integer node indices")),
        (lambda: fm.FEMesh(points="abc", cells={}), ("`points` must be numbers",)),
        (lambda: check_mesh(mesh_file),
         ("check_mesh: mesh='meshes/beam_hex8.msh'", "flexmb.read_mesh(")),
        (lambda: fm.FEMesh(points=np.zeros((3, 3)), cells=[1]), ("`cells` must be a dict",)),
    ]
    for call, parts in cases:
        with pytest.raises(ModelError) as info:
            call()
        check_message(str(info.value), *parts)

    bad3 = st.one_of(text, st.lists(st.floats(), min_size=1, max_size=4).filter(lambda v: len(v) != 3),
                     st.lists(st.floats(max_value=0.0), min_size=3, max_size=3))

    @EXAMPLES
    @given(bad3)
    def lengths(value):
        with pytest.raises(ModelError, match=r"structured_box: lengths=.* must be three lengths > 0"):
            structured_box(value)

    @EXAMPLES
    @given(st.one_of(text, st.lists(st.floats(0.1, 0.9), min_size=3, max_size=3), st.lists(st.integers(max_value=0), min_size=3, max_size=3)))
    def divisions(value):
        with pytest.raises(ModelError, match=r"structured_box: divisions=.* must be three integers >= 1"):
            structured_box((1, 1, 1), value)

    lengths()
    divisions()


def test_data_methods_check_their_arguments(bar_data, tmp_path):
    for value in ("a", [1.0, 2.0], np.full(bar_data.n_modes, np.nan)):
        with pytest.raises(ModelError, match=rf"displacement\(eta=.*give {bar_data.n_modes} finite modal coordinates"):
            bar_data.displacement(value)
    with pytest.raises(ModelError, match="save: path=3 is not a file path"):
        bar_data.save(3)
    with pytest.raises(ModelError, match="load: path=None is not a file path"):
        fm.FlexibleBodyData.load(None)


# --------------------------------------------------------------------------------------------------
# damaged FlexibleBodyData files: checked when loaded, naming the file, the field, the value and the fix


def damaged(bar_data, tmp_path, name, edit):
    path = bar_data.save(tmp_path / "good.npz")
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    edit(arrays)
    out = tmp_path / f"{name}.npz"
    np.savez(out, **arrays)
    return out


def _set(key, fn):
    def edit(a):
        a[key] = fn(a[key])
    return edit


def _neg(w):
    w = w.copy()
    w[1] = -w[1]
    return w


def _nan(w):
    w = w.copy()
    w[0] = np.nan
    return w


DAMAGE = [
    ("fewer_modes", _set("mode_shapes", lambda s: s[:, :, :-1]), ("`mode_shapes` has shape", "expected")),
    ("fewer_nodes", _set("mode_shapes", lambda s: s[:-3]), ("`mode_shapes` has shape", "nodes")),
    ("omega2_nan", _set("omega2", _nan), ("`omega2` holds a non-finite value", "nan")),
    ("omega2_negative", _set("omega2", _neg), ("`omega2[1]` = -", "negative")),
    ("frequencies", _set("frequencies", lambda f: 2 * f), ("`frequencies[", "sqrt(omega2)")),
    ("modal_map", _set("interface/1/modal_map", lambda m: m[:, :2]), ("interface 'xmax': `modal_map` has shape (6, 2)",)),
    ("geometric_nan", _set("geometric_stiffness", _nan), ("`geometric_stiffness` holds a non-finite value",)),
    ("damping_shape", _set("damping", lambda d: d[:2]), ("`damping` has shape",)),
    ("interface_nodes", _set("interface/0/nodes", lambda n: n + 10_000), ("interface 'xmin': `nodes` name node",)),
    ("invariant", _set("invariants/modal_mass", lambda m: m[:1]), ("`invariants.modal_mass` has shape",)),
    ("mass", _set("invariants/mass", lambda m: -m), ("`invariants.mass` = -",)),
]


@pytest.mark.parametrize("name, edit, parts", DAMAGE, ids=[d[0] for d in DAMAGE])
def test_damaged_data_files_are_refused_when_loaded(bar_data, tmp_path, name, edit, parts):
    path = damaged(bar_data, tmp_path, name, edit)
    with pytest.raises(fm.MeshImportError) as info:
        fm.FlexibleBodyData.load(path)
    check_message(str(info.value), str(path), *parts, "rebuild it")
    with pytest.raises(fm.MeshImportError):
        fm.FlexibleBody("b", path)  # the same check through the model element


def test_files_that_are_no_data_files_are_refused_without_numpy_advice(bar_data, tmp_path):
    rng = np.random.default_rng(0)
    files = {"random.npz": rng.bytes(2000), "empty.npz": b"", "array.npz": None, "text.npz": b"hello\n"}
    for name, content in files.items():
        path = tmp_path / name
        if content is None:
            with open(path, "wb") as fh:
                np.save(fh, np.zeros(3))
        else:
            path.write_bytes(content)
        with pytest.raises(fm.MeshImportError) as info:
            fm.FlexibleBodyData.load(path)
        msg = str(info.value)
        assert "allow_pickle" not in msg and str(path) in msg and "FlexibleBodyData.save()" in msg, msg
    assert ".npy" in str(pytest.raises(fm.MeshImportError, fm.FlexibleBodyData.load, tmp_path / "array.npz").value)


def test_damaged_data_built_in_memory_is_refused_by_the_model(bar_data):
    from dataclasses import replace

    bad = replace(bar_data, mode_shapes=bar_data.mode_shapes[:, :, :-1])
    with pytest.raises(ModelError, match=r"FlexibleBody 'b': data .*`mode_shapes` has shape .*build the data"):
        fm.FlexibleBody("b", bad)
