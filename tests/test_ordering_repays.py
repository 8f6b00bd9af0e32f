"""The second column ordering (MMD_ATA) only where the run can repay it (linsolve.ata_repays): trying it costs
about ATA_TRY_COST refactorizations, so a run of a few elements keeps COLAMD's structure (X3 p = 2 to
0.9 rad, 8 elements: the try was 2.3 of a ~40 ms run, to save ~0.05 ms per refactorization), a long run
tries it and keeps the cheaper structure as before; deterministic (multiply-add counts, no clock)."""
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmb as fm
from flexmb.dynamics.simulate import Run
from flexmb.dynamics.solve.linsolve import ATA_TRY_COST, FACTORIZATIONS_PER_ELEMENT, Refactor, ata_repays

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from compare_exudyn import flexmb_chain  # noqa: E402


def test_the_rule():
    # COLAMD within ata_ratio multiply-adds per nonzero: never tried, whatever the run
    assert not ata_repays(100.0 * 20, 100, 20.0, None) and not ata_repays(1999.0, 100, 20.0, 1e9)
    # unknown run (a backend used on its own): tried, as before
    assert ata_repays(2001.0, 100, 20.0, None)
    # the saving expected (excess over 20 per nonzero, per refactorization) must exceed the try's cost
    flops, nnz = 147448.0, 5808  # X3 p = 2 (measured)
    need = ATA_TRY_COST * flops / (flops - 20.0 * nnz)
    assert not ata_repays(flops, nnz, 20.0, 8 * FACTORIZATIONS_PER_ELEMENT)  # X3's 8 elements
    assert not ata_repays(flops, nnz, 20.0, np.floor(need))
    assert ata_repays(flops, nnz, 20.0, np.ceil(need + 1e-9))


def _ordering(t_end, h, p):
    run = Run.start(flexmb_chain(15), t_end, h, p, 0.0, fm.SimulationOptions())
    run.step()
    f = run.solver.inner
    assert type(f) is Refactor and f.n_orderings == 1
    return f.ordering, f.expected_factorizations


@pytest.mark.parametrize("p", [2, 3])
def test_short_run_keeps_colamd_long_run_tries_mmd_ata(p):
    h = 5e-3
    short, e_short = _ordering(4 * h, h, p)  # 4 elements
    long, e_long = _ordering(400 * h, h, p)  # 400 elements (one step taken)
    assert e_short == 4 * FACTORIZATIONS_PER_ELEMENT and e_long == 400 * FACTORIZATIONS_PER_ELEMENT
    assert short == "COLAMD"  # before: MMD_ATA whatever the run's length
    assert long == "MMD_ATA"  # the 15-link chain's (test_refactor_ordering.py)


def test_short_run_repeats_its_bits():
    model = flexmb_chain(15)
    a = fm.simulate(model, 0.02, 5e-3, p=2, show_progress=False)
    b = fm.simulate(model, 0.02, 5e-3, p=2, show_progress=False)
    assert np.array_equal(a.body_position, b.body_position) and np.array_equal(a.body_velocity, b.body_velocity)
