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


# ------------------------------------------------------------- a table pasted without its name
_PASTED = """
#       size    count   type  redop  root    time   algbw   busbw  #wrong    time   algbw   busbw  #wrong
        1024      256  float    sum    -1   28.00    0.04    0.06       0   27.50    0.04    0.07       0
     1048576   262144  float    sum    -1   40.00   26.21   45.88       0   39.80   26.35   46.11       0
   268435456 67108864  float    sum    -1  1900.0  141.28  247.25       0  1895.0  141.65  247.89       0
"""


def test_parse_takes_the_collective_a_pasted_table_lacks():
    run, = measure.parse_nccl_tests(_PASTED, nranks=8)
    assert run.collective is None
    with pytest.raises(ValueError, match="collective="):
        measure.fit_run(run)                       # says what to pass
    for name in ("all_reduce", "all_reduce_perf", "allreduce"):
        run, = measure.parse_nccl_tests(_PASTED, nranks=8, collective=name)
        assert run.collective == "all_reduce"
    f = measure.fit_run(run)
    assert f.model.startswith("all_reduce/ring") and len(f.sizes) == 3


def test_fit_run_takes_the_collective():
    run, = measure.parse_nccl_tests(_PASTED, nranks=8)
    f = measure.fit_run(run, collective="all_reduce")
    g = measure.fit_run(measure.parse_nccl_tests(_PASTED, nranks=8, collective="all_reduce")[0])
    assert f.alpha == g.alpha and f.beta == g.beta
    ag = measure.fit_run(run, collective="all_gather")
    assert ag.model.startswith("all_gather/") and ag.beta != f.beta


@pytest.mark.parametrize("bad", ["allreduse", "all_reduce_v", "scan"])
def test_unknown_collective_is_named(bad):
    with pytest.raises(ValueError, match=r"^collective must be one of .*all_reduce"):
        measure.parse_nccl_tests(_PASTED, nranks=8, collective=bad)
    run, = measure.parse_nccl_tests(_PASTED, nranks=8)
    with pytest.raises(ValueError, match=r"^collective must be one of"):
        measure.fit_run(run, collective=bad)
    with pytest.raises(TypeError, match="collective"):
        measure.parse_nccl_tests(_PASTED, collective=3)


def test_collective_that_contradicts_the_log_is_refused():
    log = "# Collective test starting: all_gather_perf\n" + _PASTED
    run, = measure.parse_nccl_tests(log, nranks=8)
    assert run.collective == "all_gather"
    with pytest.raises(ValueError, match=r"collective='all_reduce'.*'all_gather'"):
        measure.parse_nccl_tests(log, nranks=8, collective="all_reduce")
    with pytest.raises(ValueError, match=r"collective='all_reduce'.*'all_gather'"):
        measure.fit_run(run, collective="all_reduce")
    assert measure.fit_run(run, collective="all_gather_perf").model.startswith("all_gather/")


def test_recorded_logs_parse_as_before_with_their_own_collective():
    for name in measure.available_logs():
        for run in measure.load_log(name):
            assert run.collective is not None, name


def test_front_door_docstrings_run():
    import doctest
    from commbook.measure import fitting, nccl_tests, records
    for mod in (measure, fitting, nccl_tests, records):
        assert doctest.testmod(mod).failed == 0, mod.__name__


# ------------------------------------------------------------- one predict, one COLLECTIVES
def test_nccl_predictors_do_not_shadow_the_registry():
    """`collectives.predict` and `collectives.COLLECTIVES` are the registry's; the NCCL-style
    predictors are `predict_nccl` and their collectives `MODELLED_COLLECTIVES`."""
    import commbook.collectives as K
    from commbook.measure import nccl_cluster as C
    from commbook.measure import nccl_model as M
    for mod in (M, C):
        assert not hasattr(mod, "predict") and "predict" not in mod.__all__
        assert not hasattr(mod, "COLLECTIVES")
        assert "predict_nccl" in mod.__all__
    assert "MODELLED_COLLECTIVES" in M.__all__
    assert set(M.MODELLED_COLLECTIVES) < set(K.COLLECTIVES)
    p = M.predict_nccl(M.H100_8, "all_reduce", [1e3, 1e9])
    assert p.algo == ("ring", "nvls") and p.busbw[1] > p.busbw[0]
    q = C.predict_nccl(C.A3_MEGA_2x8, "all_reduce", [1e9])
    assert q.busbw[0] > 0
    with pytest.raises(ValueError, match="modelled: all_reduce, all_gather, reduce_scatter"):
        M.predict_nccl(M.H100_8, "broadcast", [1e6])


def test_nccl_docstrings_run():
    import doctest
    from commbook.measure import nccl_cluster as C
    from commbook.measure import nccl_model as M
    for mod in (M, C):
        assert doctest.testmod(mod).failed == 0, mod.__name__


# ------------------------------------------------------------- data as package data
def test_data_is_package_data():
    """The recorded measurements live in the package (commbook/data/measured), found through
    importlib.resources, not through the repository's layout."""
    from importlib import resources
    from pathlib import Path

    from commbook.measure import LOG_DIR, points
    root = Path(str(resources.files("commbook")))
    assert LOG_DIR == root / "data" / "measured" / "nccl-tests"
    assert points.DATA_DIR == root / "data" / "measured"
    assert (LOG_DIR / "PROVENANCE.md").is_file() and points.available()


def test_installed_wheel_finds_the_logs(tmp_path):
    """A wheel installed into a fresh venv (not an editable install) finds its logs (~10 s)."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path
    repo = Path(__file__).resolve().parents[1]
    whl, venv = tmp_path / "whl", tmp_path / "v"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", str(repo), "--no-deps", "-q", "-w", str(whl)],
                           capture_output=True, text=True, timeout=300)
    if build.returncode != 0:
        pytest.skip(f"cannot build a wheel here: {build.stderr[-500:]}")
    shutil.rmtree(repo / "build", ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    inst = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", *map(str, whl.glob("*.whl")),
                           "numpy"], capture_output=True, text=True, timeout=300)
    if inst.returncode != 0:
        pytest.skip(f"cannot install the wheel and numpy here: {inst.stderr[-500:]}")
    probe = ("from commbook.measure import LOG_DIR, available_logs, load_log, points\n"
             "import commbook\n"
             "assert 'site-packages' in str(LOG_DIR), LOG_DIR\n"
             "assert len(available_logs()) == 9, available_logs()\n"
             "print(load_log('h100x8_nvswitch_nccl2.29.2_nccl-tests.log')[0].collective, len(points.available()))\n")
    out = subprocess.run([str(py), "-c", probe], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["all_reduce", "2"]
