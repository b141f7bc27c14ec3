"""The release bits (issue 18 §3): one version number (pyproject.toml's) wherever a version
is written, a changelog entry and a citation for it, and the five-line script of the
README, which runs as written and opens the API reference word for word."""
from __future__ import annotations

import re
import subprocess
import sys
import tomllib

import pytest

import commbook
from conftest import ROOT

VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def readme_script() -> str:
    """The ```python block under the README's "Use the library" heading."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Use the library\n", 1)
    assert len(section) == 2, "README.md has no '## Use the library' section"
    block = re.search(r"```python\n(.*?)\n```", section[1].split("\n## ", 1)[0], re.S)
    assert block, "no ```python block under 'Use the library'"
    return block.group(1)


def reference_script() -> str:
    """The first code cell of the reference's first page."""
    text = (ROOT / "reference" / "index.md").read_text(encoding="utf-8")
    cell = re.search(r"```\{code-cell\} python\n(.*?)\n```", text, re.S)
    assert cell, "reference/index.md has no code cell"
    return cell.group(1)


def test_one_version():
    assert commbook.__version__ == VERSION  # read from the installed package's metadata
    footer = re.search(r"extra_footer: \|\n\s*(.*)", (ROOT / "_config.yml").read_text(encoding="utf-8")).group(1)
    assert f"commbook {VERSION} " in footer
    assert re.search(rf'^version: "{re.escape(VERSION)}"$', (ROOT / "CITATION.cff").read_text(encoding="utf-8"), re.M)
    assert re.search(rf"^## {re.escape(VERSION)} ", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.M)


def test_licence_and_citation():
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert "cff-version: 1.2.0" in cff and "license: MIT" in cff
    index = (ROOT / "index.md").read_text(encoding="utf-8")
    assert "CITATION.cff" in index and index.count("```bibtex") == 2  # how to cite, both languages
    assert f"version = {{{VERSION}}}" in index


def test_script_is_five_calls_and_the_reference_runs_the_same():
    script = readme_script()
    assert script == reference_script()
    calls = [line for line in script.splitlines()
             if line and not line.startswith(("import ", "from ", "#", " ", '"""', "LOG = "))
             and not re.match(r"^[\d#]", line.strip())]
    assert len(calls) == 5, calls


def test_script_runs_as_written(tmp_path):
    script = tmp_path / "five_lines.py"
    script.write_text(readme_script(), encoding="utf-8")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    out = run.stdout.splitlines()
    # 2 nodes x 4 GPUs holding 0..7: every element of the all-reduce is 0 + 1 + ... + 7 = 28
    assert out[0] == "[28. 28. 28. 28.]"
    # on one link class the engine's ring is the closed form's ring
    ring = next(line for line in out if line.startswith("ring "))
    assert ring.split()[-1] == "1.000"
    assert any(line.startswith("Prediction(collective='all_reduce'") for line in out)
    fit = out[-1]
    assert fit.startswith("Fit(all_reduce/ring, p=8:")
    # the pasted table's largest size: busbw 247.25 GB/s, which the fitted beta must reproduce
    beta = float(re.search(r"beta=([\d.]+) GB/s", fit).group(1))
    assert beta == pytest.approx(247.25, rel=0.02)
