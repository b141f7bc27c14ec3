"""collectives.versus: every algorithm of a collective on a topology next to its closed form
(the five-line script's third line)."""
import pytest

from commbook.collectives import names
from commbook.collectives.versus import Comparison, Versus, versus_closed_forms
from commbook.hardware import IB_NDR, NVLINK4
from commbook.topology import Ring, Switch, TwoLevel


def test_ring_on_a_switch_is_the_textbook_ring():
    # Patarasuk & Yuan's ring all-reduce: 2(p-1) steps of alpha + n/(p beta)
    p, n, a, b = 8, 2.0 ** 26, NVLINK4.alpha, NVLINK4.beta
    rows = versus_closed_forms(Switch(p, NVLINK4), "all_reduce", nbytes=n)
    ring = next(r for r in rows if r.algorithm == "ring")
    assert ring.closed_form_s == pytest.approx(2 * (p - 1) * (a + n / (p * b)), rel=1e-12)
    assert ring.simulated_s == pytest.approx(ring.closed_form_s, rel=1e-9)
    assert ring.ratio == pytest.approx(1.0, rel=1e-9)


def test_rows_are_the_algorithms_with_a_closed_form_that_run_there():
    topo = Ring(8, NVLINK4)
    rows = versus_closed_forms(topo, "all_gather", nbytes=1e6)
    assert isinstance(rows, Comparison) and all(isinstance(r, Versus) for r in rows)
    assert tuple(r.algorithm for r in rows) == names("all_gather", with_closed_form=True, topology=topo)
    rd = next(r for r in rows if r.algorithm == "rd")
    # recursive doubling's distance-4 partners are 4 hops apart on a ring: slower than on a switch
    assert rd.simulated_s > rd.closed_form_s


def test_prints_one_line_per_algorithm():
    rows = versus_closed_forms(Switch(4, NVLINK4), "broadcast", nbytes=1e6)
    text = str(rows).splitlines()
    assert text[0].split() == ["algorithm", "simulated", "closed", "form", "ratio"]
    assert len(text) == 1 + len(rows) and repr(rows) == str(rows)


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="topology: TwoLevel"):
        versus_closed_forms(TwoLevel(2, 4, NVLINK4, IB_NDR))
    with pytest.raises(TypeError, match="topology must be"):
        versus_closed_forms("switch")
    with pytest.raises(ValueError, match="collective"):
        versus_closed_forms(Switch(4, NVLINK4), "allreduce")
    with pytest.raises(ValueError, match="nbytes"):
        versus_closed_forms(Switch(4, NVLINK4), nbytes=-1)
