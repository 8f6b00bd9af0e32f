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
