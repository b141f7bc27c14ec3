"""Mirror, never copy: no sentence of the Chinese pages (and exercise notebooks) repeats
the lecture's wording.

Every run of 14 characters (whitespace removed) that holds at least 9 Chinese characters
is looked up in the seed text; headings and map-table rows may keep the lecture's
section titles.  Skipped (with the reason shown) where ../shared/seeds is not present."""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT.parent / "shared" / "seeds"
WINDOW, MIN_CJK = 14, 9


def _seed_text() -> str:
    files = sorted(SEEDS.glob("*.txt")) if SEEDS.is_dir() else []
    if not files:
        pytest.skip(f"no seed texts at {SEEDS}")
    return re.sub(r"\s+", "", "".join(f.read_text(encoding="utf-8") for f in files))


def _prose_lines(path: Path):
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    else:
        text = path.read_text(encoding="utf-8")
    in_code = False
    for no, line in enumerate(text.splitlines(), 1):
        if line.startswith("```{code-cell}"):
            in_code = True
        elif in_code and line.startswith("```"):
            in_code = False
        elif not in_code and not line.startswith(("#", "|")):
            yield no, re.sub(r"\s+", "", line)


PAGES = sorted((ROOT / "chapters" / "zh").rglob("*.md")) + sorted((ROOT / "exercises" / "zh").glob("*.ipynb"))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_copied_wording(page):
    seed = _seed_text()
    cjk = re.compile(r"[\u4e00-\u9fff]")
    copied = []
    for no, text in _prose_lines(page):
        for i in range(len(text) - WINDOW + 1):
            run = text[i:i + WINDOW]
            if len(cjk.findall(run)) >= MIN_CJK and run in seed:
                copied.append(f"line {no}: {run}")
                break
    assert not copied, f"{page.name} repeats the lecture's wording:\n" + "\n".join(copied)


def test_the_check_can_fail():
    seed = _seed_text()
    assert "半带宽点" in seed or len(seed) > 1000
    run = next(seed[i:i + WINDOW] for i in range(len(seed)) if
               len(re.findall(r"[\u4e00-\u9fff]", seed[i:i + WINDOW])) >= MIN_CJK)
    assert run in seed
