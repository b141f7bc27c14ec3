"""The exercise notebooks are generated: what is committed is what the builders write.

Every ``exercises/src/build_<name>.py`` is run with ``--no-exec --out <tmp>`` and the
notebooks it writes (``<tmp>/zh/<name>.ipynb``, ``<tmp>/en/<name>.ipynb``) are compared
with the committed ones in ``exercises/zh`` and ``exercises/en``: the same cells, in the
same order, with the same ids, cell types, sources and tags (outputs are left to
``pytest --nbval exercises/``).  So the test fails when a committed notebook was edited
by hand, when a builder changed and its notebooks were not regenerated, and when a
number the builder computes from ``commbook`` changed (the solutions' numbers are
filled in at build time).  A committed notebook that no builder writes fails too.

The other tests here hold the exercises to the house rules: solutions stay hidden in the
book (the written solution in a dropdown, the code cells folded), no exercise text
narrates its source or carries an internal marker, and no placeholder is left unfilled.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "exercises" / "src"
LANGS = ("zh", "en")
BUILDERS = sorted(SRC.glob("build_*.py"))
COMMITTED = sorted(p for lang in LANGS for p in (ROOT / "exercises" / lang).glob("*.ipynb"))


def _cells(path: Path) -> list[tuple]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [(c.get("id"), c["cell_type"], "".join(c["source"]), c.get("metadata", {}).get("tags", []))
            for c in cells]


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("exercises")
    for builder in BUILDERS:
        run = subprocess.run([sys.executable, str(builder), "--no-exec", "--out", str(out)],
                             cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, f"{builder.relative_to(ROOT)} failed:\n{run.stdout}\n{run.stderr}"
    return out


def test_there_are_builders_and_notebooks():
    assert BUILDERS, f"no exercises/src/build_*.py under {SRC}"
    assert COMMITTED, "no exercise notebooks under exercises/zh or exercises/en"


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda p: p.name)
def test_builder_writes_both_languages(builder, generated):
    """build_X.py writes X.ipynb, or one notebook per part (X-1.ipynb, X-2.ipynb, …), in each language."""
    name = builder.stem.removeprefix("build_")
    for lang in LANGS:
        written = [p.name for p in (generated / lang).glob("*.ipynb")
                   if p.stem == name or p.stem.startswith(f"{name}-")]
        assert written, f"{builder.name} wrote no {lang}/{name}.ipynb or {lang}/{name}-*.ipynb"


@pytest.mark.parametrize("committed", COMMITTED, ids=lambda p: str(p.relative_to(ROOT)))
def test_committed_notebook_is_what_the_builder_writes(committed, generated):
    fresh = generated / committed.parent.name / committed.name
    assert fresh.is_file(), (f"{committed.relative_to(ROOT)} is written by no builder in "
                             f"{SRC.relative_to(ROOT)}: notebooks are generated, not edited")
    want, have = _cells(fresh), _cells(committed)
    where = committed.relative_to(ROOT)
    hint = f"regenerate it: .venv/bin/python exercises/src/build_{committed.stem.split('-')[0]}.py"
    assert len(have) == len(want), f"{where}: {len(have)} cells, the builder writes {len(want)}; {hint}"
    for i, (h, w) in enumerate(zip(have, want)):
        for field, a, b in zip(("id", "cell type", "source", "tags"), h, w):
            assert a == b, f"{where}, cell {i}: the {field} differs from what the builder writes; {hint}\n" \
                            f"committed: {a!r}\nbuilder:   {b!r}"


@pytest.mark.parametrize("committed", COMMITTED, ids=lambda p: str(p.relative_to(ROOT)))
def test_committed_notebook_is_executed(committed):
    cells = json.loads(committed.read_text(encoding="utf-8"))["cells"]
    unexecuted = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and c.get("execution_count") is None]
    assert not unexecuted, f"{committed.relative_to(ROOT)}: code cells {unexecuted} have no outputs; run the builder without --no-exec"


NARRATION = re.compile(r"讲义|本讲义|lecture|\bF\.\d+|演示\s*\d|demo\s*\d|代码\s*0\d", re.I)


@pytest.mark.parametrize("committed", COMMITTED, ids=lambda p: str(p.relative_to(ROOT)))
def test_exercise_text_follows_the_house_rules(committed):
    cells = json.loads(committed.read_text(encoding="utf-8"))["cells"]
    where = committed.relative_to(ROOT)
    for i, c in enumerate(cells):
        text = "".join(c["source"])
        assert "<<" not in text or c["cell_type"] == "code", f"{where}, cell {i}: an unfilled placeholder"
        for m in NARRATION.finditer(text):
            pytest.fail(f"{where}, cell {i}: narrates its source or names an internal marker: {m.group(0)!r}")
    # Solutions stay hidden: a written solution is a dropdown, and every code cell after the
    # setup cell is folded.
    headings = [i for i, c in enumerate(cells) if c["cell_type"] == "markdown"
                and re.search(r"^## ", "".join(c["source"]), re.M)]
    assert headings, f"{where}: no exercise headings"
    for i in headings:
        nxt = cells[i + 1] if i + 1 < len(cells) else None
        assert nxt is not None and nxt["cell_type"] == "markdown" and "".join(nxt["source"]).startswith("::::{dropdown}"), \
            f"{where}, cell {i + 1}: the solution after an exercise statement is not a dropdown"
    code_cells = [c for c in cells if c["cell_type"] == "code"]
    for c in code_cells[1:]:
        tags = c.get("metadata", {}).get("tags", [])
        assert "hide-input" in tags and "hide-output" in tags, f"{where}: a solution code cell is not folded"
