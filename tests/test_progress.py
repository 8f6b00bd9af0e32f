"""progress(): silent when disabled or not on a terminal, a tqdm bar over simulated time otherwise."""
from __future__ import annotations

import sys

import pytest

from flexmb.progress import progress, progress_enabled


class FakeTTY:
    """A stderr stand-in that claims to be a terminal."""

    def __init__(self):
        self.text = ""

    def isatty(self):
        return True

    def write(self, s):
        self.text += s

    def flush(self):
        pass


def test_disabled_writes_nothing(capsys):
    with progress(1.0, desc="sim", enabled=False) as bar:
        for _ in range(10):
            bar.update(0.1)
        bar.note("h=0.1")
    assert not bar.enabled
    assert bar.n == pytest.approx(1.0)
    assert capsys.readouterr() == ("", "")


def test_default_off_when_not_a_terminal(capsys, monkeypatch):
    monkeypatch.delenv("FLEXMB_PROGRESS", raising=False)
    with progress(1.0, desc="sim") as bar:  # pytest's captured stderr is not a terminal
        bar.update(0.5)
    assert not bar.enabled
    assert capsys.readouterr() == ("", "")


def test_default_follows_terminal_and_env(monkeypatch):
    monkeypatch.setattr(sys, "stderr", FakeTTY())
    monkeypatch.delenv("FLEXMB_PROGRESS", raising=False)
    assert progress_enabled()
    monkeypatch.setenv("FLEXMB_PROGRESS", "0")
    assert not progress_enabled()
    with progress(1.0, desc="sim") as bar:
        bar.update(1.0)
    assert sys.stderr.text == ""


def test_enabled_shows_simulated_time(monkeypatch):
    fake = FakeTTY()
    monkeypatch.setattr(sys, "stderr", fake)
    with progress(2.0, desc="pendulum", enabled=True) as bar:
        bar.update(0.5)
        bar.update(5.0)  # clipped at the total
    assert bar.n == pytest.approx(2.0)
    assert "pendulum" in fake.text and "2/2 s" in fake.text and "100%" in fake.text


def test_negative_total_is_refused():
    with pytest.raises(ValueError, match="total"):
        with progress(-1.0, desc="x", enabled=False):
            pass
