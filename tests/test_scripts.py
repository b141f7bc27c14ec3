"""The lecture's scripts code/scripts/p5/0N_*.py run as programs (exit code 0), print
their demo tables with anchor numbers, import without side effects and without
matplotlib."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "code" / "scripts" / "p5"

ANCHORS = {
    "01_links_and_topologies.py": [
        "Demo 01-1", "Demo 01-2", "Demo 01-3", "900 KB", "1.99 GB/s (0.44%)", "3.67 GB/s (8.2%)",
        "1,440 GB/s", "1,600 GB/s", "1.089 µs", "8.089 µs"],
    "02_collectives_semantics.py": [
        "Demo 02-1", "Demo 02-2", "Demo 02-2b", "Demo 02-3", "[60, 64, 68, 72]", "[0, 10, 20, 30]",
        "16.13", "6.22", "48.62", "61.92", "47.11", "1.75", "0.875"],
    "03_allreduce_algorithms.py": [
        "Demo 03-1", "Demo 03-2", "Demo 03-3", "Demo 03-4", "28.02", "1712.67", "81.8 KB", "2.16 MB",
        "7.92 MB", "5.113 ms", "1022", "32.2 µs", "249.11", "536.33", "41.56", "32.66"],
    "04_topology_and_hierarchy.py": [
        "Demo 04-1", "Demo 04-2", "Demo 04-3", "2.6967 ms", "1.011×", "1.022×", "14.667 µs",
        "413 µs", "16.3×", "3.97×", "5.83×", "7.54×"],
    "05_communication_in_llm_inference.py": [
        "Demo 05-1", "Demo 05-2", "Demo 05-3", "Demo 05-4", "Demo 05-5", "4.490 ms", "15.7%", "64.7%",
        "8.392 ms", "107%", "45.5%", "5.132 ms", "7.152 ms", "11.348 ms", "25.7 MB", "328 KB", "7.99×"],
}


def _tensor_busbw_anchor() -> str:
    """Demo 03-3's model busbw for bf16[8192, 3584] (lecture §5.6), computed here with the
    simulator at the tensor's exact size: the script must print what the package computes."""
    from commbook.bandwidth import busbw
    from commbook.collectives import all_reduce
    from commbook.comm_sim import VirtualCluster
    from commbook.hardware import NVLINK4
    from commbook.topology import Switch

    n = 8192 * 3584 * 2
    t = all_reduce(VirtualCluster(Switch(8, NVLINK4)), nbytes=n).time
    return f"{busbw('all_reduce', n, t, 8) / 1e9:.1f} GB/s"


ANCHORS["03_allreduce_algorithms.py"].append(_tensor_busbw_anchor())


def test_every_script_is_listed():
    assert sorted(p.name for p in SCRIPTS.glob("0*.py")) == sorted(ANCHORS)


@pytest.mark.parametrize("name", sorted(ANCHORS))
def test_script_runs_and_prints_anchors(name):
    proc = subprocess.run([sys.executable, str(SCRIPTS / name)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    missing = [a for a in ANCHORS[name] if a not in proc.stdout]
    assert not missing, f"{name} output lacks {missing}"


def test_script_in_chinese():
    proc = subprocess.run([sys.executable, str(SCRIPTS / "02_collectives_semantics.py"), "--lang", "zh"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "演示 02-1" in proc.stdout and "二项树" in proc.stdout


@pytest.mark.parametrize("name", sorted(ANCHORS))
def test_script_imports_without_side_effects(name, capsys):
    path = SCRIPTS / name
    text = path.read_text(encoding="utf-8")
    assert text.startswith("#!/usr/bin/env python3\n") and '"""' in text.splitlines()[1]
    spec = importlib.util.spec_from_file_location(f"p5_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert capsys.readouterr().out == ""
    assert callable(module.main) and module.__doc__


def test_scripts_do_not_load_matplotlib():
    code = ("import runpy, sys, io, contextlib\n"
            f"for p in sorted(__import__('pathlib').Path({str(SCRIPTS)!r}).glob('0*.py')):\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n"
            "        m = runpy.run_path(str(p)); m['main']([])\n"
            "print('matplotlib' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"
