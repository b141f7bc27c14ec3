"""The explorers on the static page (commbook.book.explorers.static, issue 19 §3).

Each state the page carries is checked against the kernel explorer: a fresh explorer,
moved with ``update`` to that state's control values, must show the same table (the
HTML it renders, every number as displayed) and plot the same points (each point of the
payload lies on the figure's curve of the same name, within the payload's 5 significant
digits).  The payload stays under a stated size, its controls speak the page's language,
bad grids fail with the control's name, and the Sphinx extension refuses a page without
its chart library.
"""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib.lines import Line2D

from commbook.book.explorers import (AllReduceRaceExplorer, CompressionPayoffExplorer, CrossoverExplorer,
                                     EffectiveBandwidthExplorer, HierarchyExplorer, RingMappingExplorer,
                                     TPDecodeExplorer)
from commbook.book.explorers.static import MAX_STATES, OfflineExplorer, offline

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))
import commbook_interactive  # noqa: E402  (_ext/ is not a package)

EXPLORERS = [EffectiveBandwidthExplorer, AllReduceRaceExplorer, RingMappingExplorer, HierarchyExplorer,
             TPDecodeExplorer, CrossoverExplorer, CompressionPayoffExplorer]
MAX_PAYLOAD = 200_000
"""Bytes of one view's JSON on the page (the heaviest, the ring mapping's, is about 170 KB)."""
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module", params=EXPLORERS, ids=lambda c: c.__name__)
def view(request: pytest.FixtureRequest) -> OfflineExplorer:
    return offline(request.param(lang="en"))


def _sample(keys: list[str], start: str) -> list[str]:
    """The starting state, the first, the last and a spread of the others."""
    picked = {start, keys[0], keys[-1]} | {keys[i] for i in np.linspace(0, len(keys) - 1, 5).astype(int)}
    return sorted(picked)


def _curves(fig: object) -> dict[str, list[Line2D]]:
    out: dict[str, list[Line2D]] = {}
    for ax in fig.axes:
        for line in ax.get_lines():
            if line.get_transform() == ax.transData and len(line.get_xdata()):
                out.setdefault(line.get_gid() or line.get_label(), []).append(line)
    return out


def _on_curve(xs: list, ys: list, lines: list[Line2D]) -> bool:
    for line in lines:
        x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
        ok = True
        for px, py in zip(xs, ys):
            if px is None or py is None:
                continue
            hit = np.isclose(x, px, rtol=6e-5, atol=1e-12) & np.isclose(y, py, rtol=6e-5, atol=1e-12)
            if not hit.any():
                ok = False
                break
        if ok:
            return True
    return False


def test_states_match_the_kernel_explorer(view: OfflineExplorer) -> None:
    cls = type(view.explorer)
    payload = view.payload
    start = "-".join(str(c["start"]) for c in payload["controls"])
    assert start in payload["states"]
    assert len(payload["states"]) == np.prod([len(c["labels"]) for c in payload["controls"]])
    for key in _sample(sorted(payload["states"]), start):
        values = view.state_values(key)
        kernel = cls(lang="en")
        result = kernel.update(**values)
        axes, table = payload["states"][key]
        assert payload["tables"][table] == result.table.to_html("en"), (cls.__name__, key)
        curves = _curves(result.figure)
        drawn = 0
        for _, series, _ in axes:
            for i in series:
                s = payload["series"][i]
                if "rule" in s:
                    continue
                name = s.get("gid") or s.get("label")
                if name is None:                   # an unnamed line (a diagram's link): any line of the figure
                    candidates = [line for lines in curves.values() for line in lines]
                else:
                    assert name in curves, (cls.__name__, key, name)
                    candidates = curves[name]
                assert _on_curve(s["x"], s["y"], candidates), (cls.__name__, key, name)
                drawn += 1
        assert drawn or not curves, (cls.__name__, key)


def test_controls_show_the_explorers_values(view: OfflineExplorer) -> None:
    """Each option's label is what the kernel explorer's control shows for that value."""
    for control in view.payload["controls"]:
        widget = view.explorer.controls[control["name"]]
        assert control["label"] == widget.description
        assert len(control["labels"]) == len(view.grid[control["name"]])
        if hasattr(widget, "_options_labels") and control["kind"] == "select":
            shown = dict(zip(widget._options_values, widget._options_labels))
            assert control["labels"] == [shown[v] for v in view.grid[control["name"]]]


def test_payload_size(view: OfflineExplorer) -> None:
    text = view.payload_json()
    assert len(text.encode()) <= MAX_PAYLOAD, f"{type(view.explorer).__name__}: {len(text.encode())} bytes"
    assert "</" not in text
    assert json.loads(text) == view.payload
    html = view.to_html()
    assert 'class="commbook-interactive"' in html and 'class="commbook-interactive-static"' in html
    assert "data:image/png;base64," in html                # the static fallback stays


def test_zh_controls_are_chinese() -> None:
    view = offline(TPDecodeExplorer(lang="zh"))
    labels = [c["label"] for c in view.payload["controls"]]
    assert all(CJK.search(label) for label in labels), labels
    assert view.payload["lang"] == "zh"
    assert 'lang="zh-Hans"' in view.to_html()


def test_bad_grids_fail_clearly() -> None:
    ex = AllReduceRaceExplorer(lang="en")
    with pytest.raises(ValueError, match=r"grid\['p'\] must be one of"):
        offline(ex, grid={"p": [3]})
    with pytest.raises(ValueError, match="no control 'q'"):
        offline(ex, grid={"q": [1]})
    with pytest.raises(ValueError, match=r"grid\['n'\] must hold"):
        offline(ex, grid={"n": []})
    with pytest.raises(ValueError, match=r"grid\['n'\] must be between"):
        offline(ex, grid={"n": [1.0]})
    with pytest.raises(ValueError, match="max_states"):
        offline(ex, grid={}, max_states=MAX_STATES)
    with pytest.raises(TypeError, match="explorer must be an Explorer"):
        offline("race")
    view = offline(EffectiveBandwidthExplorer(lang="en"))
    with pytest.raises(ValueError, match="must hold 2 indices"):
        view.state_values("0")


def test_extension_refuses_a_missing_bundle(tmp_path: Path) -> None:
    from sphinx.errors import ExtensionError
    with pytest.raises(ExtensionError, match="npm ci"):
        commbook_interactive.bundle_parts(tmp_path)
    parts = commbook_interactive.bundle_parts(ROOT) if (ROOT / "node_modules").is_dir() else None
    if parts is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true: node_modules/ missing (`make venv` runs npm ci)")
        pytest.skip("node_modules/ not installed here (`make venv` runs npm ci)")
    assert [p.name for p in parts] == ["vega.min.js", "vega-lite.min.js"]


def test_pinned_versions() -> None:
    """package.json pins exact versions and the lock file holds the same."""
    pkg = json.loads((ROOT / "package.json").read_text())
    lock = json.loads((ROOT / "package-lock.json").read_text())
    for name, version in pkg["dependencies"].items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), (name, version)
        assert lock["packages"][f"node_modules/{name}"]["version"] == version


def test_states_only_in_the_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader's kernel gets the explorer's own rendering at once; the book's build (the
    extension sets the variable its page kernels inherit) gets the states."""
    from commbook.book.explorers.static import BUILD_ENV
    monkeypatch.setenv(BUILD_ENV, "")                       # restored (unset) after the test
    view = offline(TPDecodeExplorer(lang="en"))
    bundle = view._repr_mimebundle_()
    assert 'class="commbook-interactive"' not in bundle["text/html"]
    assert "data:image/png;base64," in bundle["text/html"] and "application/vnd.jupyter.widget-view+json" in bundle
    assert view._states_cache is None                       # nothing precomputed

    class App:
        def connect(self, *args: object) -> None:
            pass
    commbook_interactive.setup(App())
    assert os.environ.get(BUILD_ENV) == "1"
    assert 'class="commbook-interactive"' in view._repr_mimebundle_()["text/html"]
