"""The bad-input corpus of parameter studies: every bad argument of ``sweep``, ``grid``,
``linear_range``, ``log_range``, ``load_results`` and ``flexmb sweep`` raises a flexmb error (or
exits with status 2) that names the argument, the value and the fix, before any run; never a
TypeError from deep inside, a run that fails for every parameter set, or a silent reinterpretation
(``workers=0`` meaning one per core, ``retries=1.5`` rounded, a grid named like a result column).

A corpus of 106 library inputs, 17 bad options and 5 bad study files of the command line, and
hypothesis runs (40 examples each) over arbitrary values of each sweep argument, of the range ends
and counts and of --grid names: every value is either accepted or refused by a flexmb error naming
the argument. Nothing here starts a cluster: accepted sweeps run one serial run whose build fails
at once. About 15 s."""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, HealthCheck, given, settings
from hypothesis import strategies as st

from sweep_study import needs, pandas  # noqa: E402

pytestmark = needs("pandas", "pyarrow")

import flexmb as fm  # noqa: E402
from flexmb.errors import FlexmbError  # noqa: E402
from flexmb.studies.parameters import RESERVED, parse_grid_option  # noqa: E402
from flexmb.studies.store import FINGERPRINT  # noqa: E402
from flexmb.studies.task import RUN_COLUMNS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
STUDY = ROOT / "examples" / "sweep_pendulum.py"
EXAMPLES = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
#: words of a message that tells the user what to do
FIX = re.compile(r"\b(give|use|rename|drop|pass|write|separate|remove)\b")


def build_fails(length):
    raise RuntimeError("not built")


def outputs_none(sol, length):
    return {}


def sweep(**kw):
    args = dict(build=build_fails, parameters={"length": [1.0]}, outputs=outputs_none, scheduler=None, progress=False)
    args.update(kw)
    return fm.sweep(args.pop("build"), args.pop("parameters"), args.pop("outputs"), **args)


def cli(*argv):
    from flexmb.cli import main

    return main(["sweep", *map(str, argv)])


def model():
    return fm.Model([fm.RigidBody("bob", mass=1.0, inertia=np.ones(3), position=(1, 0, 0))], [])


#: (call, words the message must hold: the argument and the value)
CORPUS = [
    # grid, parameter sets
    (lambda: fm.grid(), ["grid()", "no parameters"]),
    (lambda: fm.grid(L=[]), ["L=[]", "no values"]),
    (lambda: fm.grid(L={1.0, 2.0}), ["L={1.0, 2.0}", "set"]),
    (lambda: fm.grid(L=(x for x in [1.0])), ["L=<generator", "iterator"]),
    (lambda: fm.grid(L=iter([1.0])), ["L=<list_iterator", "iterator"]),
    (lambda: fm.grid(L=[object()]), ["parameter L=<object", "shared="]),
    (lambda: fm.grid(L=[{"a": 1}]), ["parameter L={'a': 1}", "dict"]),
    (lambda: fm.grid(L=[1.0, 1]), ["repeats"]),
    (lambda: fm.grid(a=range(1000), b=range(1000), c=range(2)), ["1000 x 1000 x 2", "2000000"]),
    (lambda: fm.grid(**{"class": [1]}), ["'class'", "keyword"]),
    (lambda: fm.grid(**{"1x": [1]}), ["'1x'", "not a valid name", "identifier"]),
    (lambda: fm.grid(**{"bad name": [1]}), ["'bad name'", "not a valid name"]),
    *[(lambda c=c: fm.grid(**{c: [1.0]}), [repr(c), "result column"]) for c in RESERVED],
    (lambda: fm.studies.parameter_sets({}), ["parameters={}", "no parameter"]),
    (lambda: fm.studies.parameter_sets([{}]), ["parameters[0] = {}", "no parameter"]),
    (lambda: fm.studies.parameter_sets([]), ["parameters=[]", "no parameter set"]),
    (lambda: fm.studies.parameter_sets([1.0]), ["parameters[0] = 1.0", "not a dict"]),
    (lambda: fm.studies.parameter_sets("length=1"), ["parameters='length=1'", "dict of lists"]),
    (lambda: fm.studies.parameter_sets({"length", "m"}), ["parameters=", "set"]),
    (lambda: fm.studies.parameter_sets(pandas().DataFrame({"length": []})), ["no parameter set"]),
    (lambda: fm.studies.parameter_sets(pandas().DataFrame({"status": [1.0]})), ["'status'", "result column"]),
    (lambda: fm.studies.parameter_sets([{1: 2.0}]), ["parameter name 1", "not a string"]),
    # ranges
    (lambda: fm.linear_range(1, 2, 1), ["linear_range(1, 2, 1)", "n=1", "stop=2.0"]),
    (lambda: fm.linear_range(1, 2, 0), ["n=0", "integer >= 1"]),
    (lambda: fm.linear_range(1, 2, 3.0), ["n=3.0", "integer"]),
    (lambda: fm.linear_range(1, 2, "3"), ["n='3'", "integer"]),
    (lambda: fm.linear_range(1, 2, True), ["n=True", "integer"]),
    (lambda: fm.linear_range(1, 2, 10 ** 9), ["n=1000000000", "more than"]),
    (lambda: fm.linear_range("1", 2, 3), ["start='1'", "not a number"]),
    (lambda: fm.linear_range(True, 2, 3), ["start=True", "not a number"]),
    (lambda: fm.linear_range(1, math.inf, 3), ["stop=inf", "not finite"]),
    (lambda: fm.linear_range(math.nan, 1, 3), ["start=nan", "not finite"]),
    (lambda: fm.log_range(0, 1, 3), ["log_range(0, 1, 3)", "start=0.0", "> 0"]),
    (lambda: fm.log_range(1, -2, 3), ["stop=-2.0", "> 0"]),
    (lambda: fm.log_range(1, None, 3), ["stop=None", "not a number"]),
    (lambda: fm.log_range(1, 10, 1), ["n=1", "stop=10.0"]),
    # load_results
    (lambda: fm.load_results(None), ["load_results(None)", "path"]),
    (lambda: fm.load_results(3), ["load_results(3)", "path"]),
    (lambda: fm.load_results("missing.parquet"), ["missing.parquet", "no such directory"]),
    (lambda: fm.load_results("file.txt"), ["file.txt", "is a file"]),
    (lambda: fm.load_results("empty"), ["empty", "no results yet"]),
    (lambda: fm.load_results("other"), ["other", "not a sweep results store"]),
    # sweep
    (lambda: sweep(build=None), ["build=None", "not callable"]),
    (lambda: sweep(build=model()), ["build is a Model", "function"]),
    (lambda: sweep(outputs=["x_end"]), ["outputs=['x_end']", "{'x_end': ...}"]),
    (lambda: sweep(outputs="x_end"), ["outputs='x_end'", "function"]),
    (lambda: sweep(outputs=3), ["outputs=3", "not callable"]),
    (lambda: sweep(parameters={"status": [1.0]}), ["'status'", "result column"]),
    (lambda: sweep(parameters={"fingerprint": [1.0]}), ["'fingerprint'", "result column"]),
    (lambda: sweep(retries=-1), ["retries=-1", ">= 0"]),
    (lambda: sweep(retries=1.5), ["retries=1.5", "integer"]),
    (lambda: sweep(retries="two"), ["retries='two'", "integer"]),
    (lambda: sweep(scheduler="local", workers=0), ["workers=0", ">= 1"]),
    (lambda: sweep(scheduler="local", workers=1.5), ["workers=1.5", "integer"]),
    (lambda: sweep(scheduler="local", workers=True), ["workers=True", "integer"]),
    (lambda: sweep(workers=2), ["workers=2", "scheduler=None", "serial"]),
    (lambda: sweep(scheduler="lokal"), ["scheduler='lokal'", "'local'"]),
    (lambda: sweep(scheduler=3), ["scheduler=3"]),
    (lambda: sweep(store="file.txt"), ["file.txt", "is a file"]),
    (lambda: sweep(store="other"), ["other", "not a sweep results store"]),
    (lambda: sweep(store=3), ["store=3", "not a path"]),
    (lambda: sweep(store=""), ["store=''", "empty path"]),
    (lambda: sweep(store="a\x00b"), ["store='a\\x00b'", "NUL"]),
    (lambda: sweep(store="s.parquet", store_every=-1), ["store_every=-1", ">= 0"]),
    (lambda: sweep(store="s.parquet", store_every="5"), ["store_every='5'", "number"]),
    (lambda: sweep(store="s.parquet", store_every=math.nan), ["store_every=nan", "number"]),
    (lambda: sweep(simulate_kwargs=[1]), ["simulate_kwargs=[1]", "not a dict"]),
    (lambda: sweep(simulate_kwargs={"tend": 1.0}), ["simulate_kwargs['tend']", "'t_end'"]),
    (lambda: sweep(simulate_kwargs={"model": 1}), ["simulate_kwargs['model']", "build"]),
    (lambda: sweep(simulate_kwargs={1: 2}), ["simulate_kwargs has the key 1", "strings"]),
    (lambda: sweep(shared=[1]), ["shared=[1]", "not a dict"]),
    (lambda: sweep(shared={1: 2}), ["shared has the key 1"]),
    (lambda: sweep(shared={"lambda": 2}), ["shared input 'lambda'", "keyword"]),
    (lambda: sweep(shared={"length": 2.0}), ["['length']", "either swept or shared"]),
    (lambda: sweep(rerun_failed="yes"), ["rerun_failed='yes'", "True or False"]),
    (lambda: sweep(progress="no"), ["progress='no'", "True or False"]),
    (lambda: sweep(cluster_kwargs=1), ["cluster_kwargs=1", "not a dict"]),
    (lambda: sweep(cluster_kwargs={"memory_limit": "1GB"}), ["cluster_kwargs={'memory_limit': '1GB'}", "'local'"]),
    (lambda: sweep(if_changed="always"), ["if_changed='always'", "'recompute'"]),
    # the --grid syntax of flexmb sweep
    (lambda: parse_grid_option("1x=1,2"), ["'1x=1,2'", "'1x' is not a valid name", "letters, digits"]),
    (lambda: parse_grid_option("status=1,2"), ["'status=1,2'", "result column"]),
    (lambda: parse_grid_option("for=1,2"), ["'for'", "keyword"]),
    (lambda: parse_grid_option("length"), ["'length'", "no the '='"]),
    (lambda: parse_grid_option("=1,2"), ["'=1,2'", "a name before"]),
    (lambda: parse_grid_option("length="), ["'length='", "values after"]),
    (lambda: parse_grid_option("length=1,,2"), ["'length=1,,2'", "value 2 is empty"]),
    (lambda: parse_grid_option("length=1:2"), ["'length=1:2'", "START:STOP:N"]),
    (lambda: parse_grid_option("length=a:b:3"), ["'length=a:b:3'", "numbers"]),
    (lambda: parse_grid_option("length=1:2:0"), ["'length=1:2:0'", "n=0"]),
    (lambda: parse_grid_option("length=0:2:3:log"), ["'length=0:2:3:log'", "> 0"]),
    (lambda: parse_grid_option("length=1:2:3:cubic"), ["'length=1:2:3:cubic'", "START:STOP:N:log"]),
]


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """A working directory with a plain file, an empty directory and a directory that is no store."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "empty").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "data.csv").write_text("x")
    return tmp_path


@pytest.mark.parametrize("call, words", CORPUS, ids=[f"{i}" for i in range(len(CORPUS))])
def test_bad_input_is_named_with_its_value_and_fix(in_tmp, call, words):
    with pytest.raises(FlexmbError) as info:
        call()
    message = str(info.value)
    for w in words:
        assert w in message, (w, message)
    assert FIX.search(message), message
    assert not (in_tmp / "s.parquet").exists()  # refused before anything was stored


def test_reserved_names_are_the_result_columns():
    assert RESERVED == (*RUN_COLUMNS, FINGERPRINT)


CLI_CORPUS = [
    (["--grid", "1x=1,2"], ["--grid '1x=1,2'", "'1x' is not a valid name"]),
    (["--grid", "status=1,2"], ["'status'", "result column"]),
    (["--grid", "length=1,,2"], ["value 2 is empty"]),
    (["--grid", "length=1", "--grid", "length=2"], ["'length' is given twice"]),
    (["--grid", "length=1", "--table", "t.csv"], ["either --grid", "not both"]),
    (["--table", "file.txt"], ["--table file.txt", ".csv or .parquet"]),
    (["--table", "missing.csv"], ["--table missing.csv", "not found"]),
    (["--table", "empty.csv"], ["--table empty.csv", "no rows"]),
    (["--table", "broken.parquet"], ["--table broken.parquet", "cannot be read"]),
    (["--workers", "0"], ["--workers 0", "1 or more"]),
    (["--workers", "2", "--scheduler", "sync"], ["--workers 2 with --scheduler sync"]),
    (["--retries", "-1"], ["--retries -1", "0 or more"]),
    (["--scheduler", "lokal"], ["--scheduler lokal", "local"]),
    (["--plot", "."], ["--plot .", ".png"]),
    (["--plot", "out.txt"], ["--plot out.txt", ".png"]),
    (["--out", "file.txt"], ["file.txt", "is a file"]),
    (["--if-changed", "sometimes"], None),  # argparse: exit status 2 and the choices
]


@pytest.mark.parametrize("argv, words", CLI_CORPUS, ids=[" ".join(a) for a, _ in CLI_CORPUS])
def test_cli_bad_option_exits_2_naming_it(in_tmp, capsys, argv, words):
    (in_tmp / "empty.csv").write_text("length\n")
    (in_tmp / "broken.parquet").write_bytes(b"not parquet")
    if words is None:
        with pytest.raises(SystemExit) as info:
            cli(STUDY, *argv)
        assert info.value.code == 2 and "invalid choice: 'sometimes'" in capsys.readouterr().err
        return
    args = [*argv] + ([] if "--scheduler" in argv else ["--scheduler", "sync"]) \
        + ([] if "--out" in argv else ["--out", "r.parquet"])
    assert cli(STUDY, *args) == 2
    err = capsys.readouterr().err
    for w in words:
        assert w in err, (w, err)
    assert not (in_tmp / "r.parquet").exists()


@pytest.mark.parametrize("study, words", [("missing.py", "not found"), (".", "is a directory"),
                                          ("file.txt", "not a Python file"), ("nobuild.py", "no function 'build'"),
                                          ("raises.py", "raised ZeroDivisionError")])
def test_cli_bad_study_file_exits_2(in_tmp, capsys, study, words):
    (in_tmp / "nobuild.py").write_text("def outputs(sol): return {}\n")
    (in_tmp / "raises.py").write_text("1 / 0\n")
    assert cli(study, "--grid", "length=1", "--scheduler", "sync") == 2
    assert words in capsys.readouterr().err


# --- any value of any argument: accepted, or refused naming the argument ---------------------------

ANY = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=True, allow_infinity=True),
                st.text(max_size=8), st.lists(st.integers(), max_size=2),
                st.dictionaries(st.text(max_size=4), st.integers(), max_size=2), st.just(object()))


@EXAMPLES
@given(name=st.sampled_from(["outputs", "simulate_kwargs", "shared", "store", "workers", "retries", "rerun_failed",
                             "progress", "store_every", "cluster_kwargs", "if_changed"]), value=ANY)
def test_any_value_of_a_sweep_argument_is_accepted_or_named(in_tmp, name, value):
    kw = {name: value}
    if name == "store_every":
        kw["store"] = "s.parquet"
    try:
        df = sweep(**kw)
    except FlexmbError as exc:
        assert name in str(exc) or name == "store", (name, value, str(exc))
        assert FIX.search(str(exc)), str(exc)
        return
    assert df["status"].tolist() == ["failed"] and df["message"].iloc[0] == "not built"


@EXAMPLES
@given(start=ANY, stop=ANY, n=st.one_of(ANY, st.integers(1, 30)), log=st.booleans())
def test_any_range_is_exact_or_named(start, stop, n, log):
    f = fm.log_range if log else fm.linear_range
    try:
        values = f(start, stop, n)
    except FlexmbError as exc:
        assert re.search(r"\b(start|stop|n)=", str(exc)) and FIX.search(str(exc)), str(exc)
        return
    assert len(values) == n and values[0] == start and values[-1] == stop
    assert all(type(v) is float for v in values)


@EXAMPLES
@given(name=st.text(max_size=10), values=st.lists(st.integers(-5, 5), min_size=1, max_size=4, unique=True))
@example(name="A=", values=[1, 2])  # "A==1,2" was read as the name 'A' with the string value '=1'
@example(name="A=0", values=[0])  # "A=0=0" was read as the name 'A' with the string value '0=0'
def test_any_grid_name_is_accepted_or_named(name, values):
    text = f"{name}={','.join(map(str, values))}"
    try:
        parsed = parse_grid_option(text)
    except FlexmbError as exc:
        assert "--grid" in str(exc) and FIX.search(str(exc)), str(exc)
        return
    assert parsed == (name.strip(), values) and name.strip().isidentifier() and name.strip() not in RESERVED
    assert fm.grid(**{parsed[0]: parsed[1]}) == [{parsed[0]: v} for v in values]


def test_a_keyword_the_study_functions_cannot_take_is_named_before_any_run(in_tmp):
    """``shared={'A': 0}`` for a build without a parameter ``A`` failed every run alike with a TypeError
    (hypothesis found it); now a ModelError before any run names the input, where it comes from and the fix.
    The same for a swept parameter that ``build`` or ``outputs`` cannot take; ``**kwargs`` takes anything."""
    with pytest.raises(FlexmbError, match=r"build build_fails\(\) has no parameter 'A'.*from shared.*give build"):
        sweep(shared={"A": 0})
    with pytest.raises(FlexmbError, match=r"has no parameter 'width'.*from the parameters"):
        sweep(parameters={"length": [1.0], "width": [2.0]})

    def outputs_length_only(sol, length):
        return {}

    def build_any(**kw):
        raise RuntimeError("not built")

    with pytest.raises(FlexmbError, match=r"outputs outputs_length_only\(\) has no parameter 'width'"):
        sweep(build=build_any, parameters={"length": [1.0], "width": [2.0]}, outputs=outputs_length_only)
    df = sweep(build=build_any, shared={"A": 0})
    assert df["status"].tolist() == ["failed"] and df["message"].iloc[0] == "not built"
