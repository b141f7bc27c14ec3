"""The front door of commbook.measure (issue 18 §2): names a new user would try."""
from __future__ import annotations

import numpy as np
import pytest

import commbook.measure as measure


def test_measure_fit_is_the_function():
    """`commbook.measure.fit(...)` is the fit, not a module that shadows it."""
    assert callable(measure.fit)
    from commbook.measure.fitting import fit
    assert measure.fit is fit
    n = np.array([1e3, 1e5, 1e7, 1e9]); p = 8
    t = 2 * (p - 1) * 4e-6 + 2 * (p - 1) / p * n / 200e9
    f = measure.fit(n, t, "all_reduce", "ring", p)
    assert f.alpha == pytest.approx(4e-6, rel=1e-9)
    assert f.beta == pytest.approx(200e9, rel=1e-9)
