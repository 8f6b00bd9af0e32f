"""flexmb.memo: digests that tell contents apart (shape, dtype, bytes, values) and a bounded memo that keeps
answers by them, drops the least recently used first and keeps no exception."""
from __future__ import annotations

import numpy as np
import pytest

from flexmb.memo import Memo, digest


def test_digest_tells_contents_apart():
    a = np.arange(6, dtype=np.int64)
    assert digest(a) == digest(a.copy()) == digest(np.ascontiguousarray(a[::1]))
    assert digest(a) != digest(a.reshape(2, 3)) != digest(a.astype(np.int32))
    b = a.copy()
    b[3] += 1
    assert digest(a) != digest(b)
    assert digest(a, 1) != digest(a, 2) and digest(a, None) != digest(a, "None")
    assert digest(np.zeros(0)) != digest(np.zeros((0, 3)))


def test_memo_keeps_the_newest_answers_and_no_exception():
    m, calls = Memo(2), []

    def make(v):
        def f():
            calls.append(v)
            return v
        return f

    assert m.get(b"a", make(1)) == 1 and m.get(b"b", make(2)) == 2
    assert m.get(b"a", make(9)) == 1  # kept (and now the newest)
    assert m.get(b"c", make(3)) == 3  # drops b, the least recently used
    assert m.get(b"b", make(4)) == 4 and len(m) == 2 and calls == [1, 2, 3, 4]

    def fails():
        raise ValueError("singular")

    with pytest.raises(ValueError):
        m.get(b"d", fails)
    assert m.get(b"d", make(5)) == 5


def test_group_data_is_kept_for_the_same_numbers_and_computed_again_for_changed_ones():
    """A modal group's kernel data (flexmb.dynamics.bodies.modal_matrices.group_data) are kept by the digest of
    every number they are made of: a model rebuilt around the same body data gets the kept arrays (equal to
    a fresh computation), a changed damping or an inertia invariant changed in place gets its own."""
    import copy
    from dataclasses import replace

    from flexmb.dynamics.bodies.modal_matrices import _group_data, body_factors, group_data
    from flexmb.validation.cases import case_x3

    data = case_x3.rod_data()

    def rods(stiffening):
        return [b for b in case_x3.slider_crank(case_x3.OMEGA_X3, 0.0, stiffening, data).bodies if hasattr(b, "data")]

    def fresh(src):
        return _group_data(src, src[0].n_modes, [body_factors(b) if b.stiffening == "full" else None for b in src])

    for stiffening in ("none", "full"):
        first, again = rods(stiffening), rods(stiffening)
        nm = first[0].n_modes
        a, b, ref = group_data(first, nm), group_data(again, nm), fresh(again)
        assert a.keys() == ref.keys()
        assert all(a[k] is b[k] and np.array_equal(a[k], ref[k]) and not a[k].flags.writeable for k in a)
    damped = [replace(first[0], damping=0.02)]
    c = group_data(damped, nm)
    assert not np.array_equal(c["C"], a["C"]) and np.array_equal(c["C"], fresh(damped)["C"])
    moved = copy.deepcopy(first)
    inv = moved[0].data.invariants
    inv.modal_cross_moment.flags.writeable = True
    inv.modal_cross_moment[0, 0, 1] += 1e-3  # changed in place: the digest sees it
    d = group_data(moved, nm)
    assert not np.array_equal(d["J1"], a["J1"]) and np.array_equal(d["J1"], fresh(moved)["J1"])
