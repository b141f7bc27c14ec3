"""Every page as a runnable notebook (_ext/commbook_notebooks.py, _ext/myst_to_jupyter.py).

Unit tests feed the MyST -> Jupyter converter one construct at a time (each role and
directive the book uses) and compare with what Sphinx/MyST-NB show for it: the value
formatted as Python's format() does, the number Sphinx gave the figure, the page the
label lies on.  An unknown glue key, role or directive must be an error.

The end-to-end test builds a small book (the repository's _config.yml, _static/ and _ext/,
as tests/test_site.py does) whose pages glue a value computed in a code cell and make a
figure, then runs the downloaded notebook with nbclient from a fresh kernel in an empty
folder: the prose carries the value (checked against math.sqrt here), running glues the
same value again and shows the figure, and no MyST syntax is left in any markdown cell.
`make test` runs the same checks on the full book after building it (the Makefile calls
`_ext/commbook_notebooks.py _build/html --run …`).
"""
from __future__ import annotations

import base64
import math
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))

import commbook_notebooks as cn  # noqa: E402
from myst_to_jupyter import ConversionError, Context, convert  # noqa: E402
from conftest import build_small_book  # noqa: E402

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
PNG64 = base64.b64encode(PNG).decode()


def ctx(**kw) -> Context:
    base = dict(
        docname="chapters/en/p5/02-links",
        glue={"pi": {"text/plain": repr(math.pi)}, "mb": {"text/plain": "'1,000,000'"},
              "n": {"text/plain": "42"}, "md": {"text/markdown": "**bold** value"},
              "tab": {"text/html": "<table>\n\n<tr><td>1</td></tr>\n</table>", "text/plain": "<table>"},
              "eq": {"text/latex": "$x^2$", "text/plain": "x"},
              "fig": {"image/png": PNG64, "text/plain": "<Image>"}},
        labels={"en-p5-links-model": ("chapters/en/p5/02-links", "2.1 The α–β model"),
                "en-p5-coll": ("chapters/en/p5/04-collectives", "4 Collective operations")},
        numbers={"en-p5-links-fig-effbw": ("chapters/en/p5/02-links", "figure", "3"),
                 "en-p5-coll-fig-ring": ("chapters/en/p5/04-collectives", "figure", "2"),
                 "en-p5-links-eq-time": ("chapters/en/p5/02-links", "displaymath", "1")},
        titles={"exercises/en/p5": "P5 Exercises"},
    )
    base.update(kw)
    return Context(**base)


# ------------------------------------------------------------------------------ roles


def test_glue_text_is_formatted_as_myst_nb_formats_it():
    c = ctx()
    assert convert("π = {glue:text}`pi:.3f`", c) == f"π = {math.pi:.3f}"
    assert convert("{glue:text}`mb` bytes", c) == "1,000,000 bytes"  # quotes of the str repr go
    assert convert("{glue:text}`n:.1%`", c) == f"{42:.1%}"
    assert convert("{glue}`n` and {glue:}`n`", c) == "42 and 42"
    assert convert("{glue:md}`md`", c) == "**bold** value"


def test_unknown_glue_key_is_an_error_naming_it():
    with pytest.raises(ConversionError, match=r"chapters/en/p5/02-links.*'nope'"):
        convert("a {glue:text}`nope` b", ctx())
    with pytest.raises(ConversionError, match="'nope'"):
        convert("```{glue:figure} nope\n```", ctx())


def test_references_become_links_with_sphinx_texts():
    c = ctx()
    assert convert("see {ref}`en-p5-links-model`", c) == "see [2.1 The α–β model](#en-p5-links-model)"
    assert convert("{ref}`P5 §4 <en-p5-coll>`", c) == "[P5 §4](04-collectives.ipynb#en-p5-coll)"
    assert convert("{numref}`en-p5-links-fig-effbw`", c) == "[Fig. 3](#en-p5-links-fig-effbw)"
    assert convert("{numref}`Figure %s <en-p5-coll-fig-ring>`", c) == \
        "[Figure 2](04-collectives.ipynb#en-p5-coll-fig-ring)"
    assert convert("{numref}`Fig. {number} <en-p5-coll-fig-ring>`", c).startswith("[Fig. 2](")
    assert convert("eq. {eq}`en-p5-links-eq-time`", c) == "eq. [(1)](#en-p5-links-eq-time)"
    assert convert("{doc}`../../../exercises/en/p5`", c) == "[P5 Exercises](../../../exercises/en/p5.ipynb)"
    assert convert("{math}`\\alpha`", c) == "$\\alpha$"
    assert convert("[next](03-topologies.md#x) [web](https://a.org/b.md)", c) == \
        "[next](03-topologies.ipynb#x) [web](https://a.org/b.md)"
    for bad in ("{ref}`no-such-label`", "{eq}`no-such-eq`", "{doc}`nowhere`", "{term}`ring`"):
        with pytest.raises(ConversionError):
            convert(bad, c)


def test_zh_numbers_use_the_chinese_prefix():
    c = ctx(docname="chapters/zh/p5/02-links", lang="zh", numfig_format={"figure": "图 %s"},
            numbers={"zh-f": ("chapters/zh/p5/02-links", "figure", "4")})
    assert convert("{numref}`zh-f`", c) == "[图 4](#zh-f)"


# ------------------------------------------------------------------------- directives


def test_targets_comments_and_code_blocks():
    text = "(en-x)=\n# Title\n% a MyST comment\ntext\n\n```python\nglue('{glue:text}`pi`')\n```"
    out = convert(text, ctx())
    assert out.startswith('<a id="en-x"></a>\n\n# Title\ntext')
    assert "comment" not in out
    assert "```python\nglue('{glue:text}`pi`')\n```" in out  # code is not prose


def test_dropdowns_become_details_and_boxes_quotes():
    text = ("````{admonition} Check yourself\nQuestion {glue:text}`n`?\n\n"
            "```{admonition} Answer\n:class: dropdown\nIt is $$a\n= b$$ and {glue:text}`pi:.2f`.\n```\n````")
    out = convert(text, ctx())
    assert out.startswith("> **Check yourself**\n>\n> Question 42?")
    assert "> <details>\n> <summary>Answer</summary>\n>\n> It is $$a = b$$ and 3.14." in out
    assert out.endswith("> </details>")
    sol = convert("::::{dropdown} Solution\nWork **here**.\n::::", ctx())
    assert sol == "<details>\n<summary>Solution</summary>\n\nWork **here**.\n\n</details>"
    assert convert("```{note}\nMind it.\n```", ctx()) == "> **Note**\n>\n> Mind it."
    assert convert("```{note}\n注意。\n```", ctx(lang="zh")).startswith("> **备注**")


def test_math_blocks_keep_numbers_and_indentation():
    out = convert("```{math}\n:label: en-p5-links-eq-time\nT = \\alpha\n```", ctx())
    assert out == '<a id="en-p5-links-eq-time"></a>\n\n$$\nT = \\alpha \\tag{1}\n$$'
    listed = convert("- item\n\n  ```{math}\n  a \\\\\n  b\n  ```", ctx())
    assert "  $$\n  \\begin{aligned}\n  a \\\\\n  b\n  \\end{aligned}\n  $$" in listed


def test_glued_outputs_and_figures():
    c = ctx()
    fig = convert("```{glue:figure} fig\n:name: en-p5-links-fig-effbw\n:alt: A curve\n\n"
                  "Caption with {glue:text}`n`.\n```", c)
    assert fig == ('<a id="en-p5-links-fig-effbw"></a>\n\n![A curve](attachment:fig.png)\n\n'
                   "*Fig. 3* Caption with 42.")
    assert c.attachments == {"fig.png": {"image/png": PNG64}}
    assert convert("```{glue} tab\n```", c) == "<table>\n<tr><td>1</td></tr>\n</table>"  # one HTML block
    assert convert("```{glue:md} md\n```", c) == "**bold** value"
    assert convert("```{glue:math} eq\n```", c) == "$$\nx^2\n$$"
    with pytest.raises(ConversionError, match="not an image"):
        convert("```{glue:figure} n\n```", c)
    with pytest.raises(ConversionError, match="list-table"):
        convert("```{list-table}\n* - a\n```", c)
    with pytest.raises(ConversionError, match="':::'"):
        convert(":::\nx\n:::", c)


def test_figure_file_is_attached(tmp_path: Path):
    (tmp_path / "chapters/en/p5").mkdir(parents=True)
    (tmp_path / "chapters/en/p5/pic.png").write_bytes(PNG)
    c = ctx(srcdir=tmp_path)
    out = convert("```{figure} pic.png\n:name: en-p5-coll-fig-ring\n\nA ring.\n```", c)
    assert out.endswith("![](attachment:pic.png)\n\n*Fig. 2* A ring.")
    assert c.attachments["pic.png"]["image/png"] == PNG64
    with pytest.raises(ConversionError, match="no such image"):
        convert("```{figure} missing.png\n```", c)


def test_glued_images_are_displayed_when_run():
    source = '# 图：中文注释\nglue("fig", Image(x), display=False)\nglue("n", 1, display=False)\n'
    assert cn.show_glued_images(source, {"fig"}) == \
        '# 图：中文注释\nglue("fig", Image(x), display=True)\nglue("n", 1, display=False)\n'
    assert cn.show_glued_images("%matplotlib inline\nx = 1", {"fig"}) == "%matplotlib inline\nx = 1"
    with pytest.raises(ValueError, match="not plain Python"):
        cn.show_glued_images('%time glue("fig", im, display=False)', {"fig"})


def test_stored_outputs_drop_widget_views_and_keep_the_static_rendering():
    view = {"model_id": "abc", "version_major": 2, "version_minor": 0}
    outputs = [nbformat.v4.new_output("display_data", data={
                   "text/plain": "Explorer", "text/html": "<img>", cn.WIDGET_VIEW: view}),
               nbformat.v4.new_output("stream", text="hello\n")]
    stored = cn.stored_outputs(outputs)
    assert cn.WIDGET_VIEW not in stored[0]["data"] and stored[0]["data"]["text/html"] == "<img>"
    assert stored[1] == outputs[1] and cn.WIDGET_VIEW in outputs[0]["data"]   # inputs untouched


# ------------------------------------------------------------------ end to end: a small book

TOC = """\
format: jb-book
root: index
parts:
  - caption: 中文
    chapters:
      - file: chapters/zh/p5/01-roots
      - file: exercises/zh/p5
  - caption: English
    chapters:
      - file: chapters/en/p5/01-roots
      - file: exercises/en/p5
"""

CODE = '''\
```{code-cell} python
:tags: [remove-cell]

import math

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from io import BytesIO
from IPython.display import Image
from myst_nb import glue

glue("root2", f"{math.sqrt(2):.6f}", display=False)
fig, ax = plt.subplots(figsize=(2, 1))
ax.plot([0, 1], [0, math.sqrt(2)])
buf = BytesIO()
fig.savefig(buf, format="png")
glue("fig_root", Image(buf.getvalue()), display=False)
```
'''

PAGE = """\
---
jupytext:
  text_representation: {{extension: .md, format_name: myst, format_version: 0.13}}
kernelspec: {{display_name: Python 3, language: python, name: python3}}
---

({lang}-p5-roots)=
# 1 {title}

[{other}](../../{olang}/p5/01-roots.md)

{code}
{text} {{glue:text}}`root2` ({{eq}}`{lang}-p5-roots-eq`, {{numref}}`{lang}-p5-roots-fig`).

```{{math}}
:label: {lang}-p5-roots-eq
x^2 = 2
```

```{{glue:figure}} fig_root
:name: {lang}-p5-roots-fig

{caption}
```

````{{admonition}} {box}
{{ref}}`{lang}-p5-roots`

```{{admonition}} {answer}
:class: dropdown
{{glue:text}}`root2:.2f`
```
````
"""


def exercise(lang: str) -> nbformat.NotebookNode:
    title, sol = ("P5 练习", "参考解答") if lang == "zh" else ("P5 Exercises", "Solution")
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"display_name": "Python 3",
                                                           "language": "python", "name": "python3"}})
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\n## 1 · √2"),
                nbformat.v4.new_markdown_cell(f"::::{{dropdown}} {sol}\n$\\sqrt 2$ ≈ 1.414\n::::"),
                nbformat.v4.new_code_cell("import math\nprint(round(math.sqrt(2), 3))")]
    return nb


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the small book once; return its _build/html."""
    words = {"zh": dict(title="平方根", other="English version", text="2 的平方根是", caption="一条直线。",
                        box="自测", answer="答案"),
             "en": dict(title="Square roots", other="中文版", text="The square root of 2 is",
                        caption="A straight line.", box="Check yourself", answer="Answer")}
    files = {"index.md": "# Roots\n\n- [中文](chapters/zh/p5/01-roots.md)\n- [English](chapters/en/p5/01-roots.md)\n"}
    for lang, olang in (("zh", "en"), ("en", "zh")):
        files[f"chapters/{lang}/p5/01-roots.md"] = PAGE.format(lang=lang, olang=olang, code=CODE, **words[lang])
        files[f"exercises/{lang}/p5.ipynb"] = nbformat.writes(exercise(lang))
    return build_small_book(tmp_path_factory.mktemp("nbbook"), TOC, files)


def markdown(nb: nbformat.NotebookNode) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def test_every_page_has_its_notebook_and_header_link(site: Path):
    assert cn.check_site(site) == []
    for docname in ("chapters/zh/p5/01-roots", "chapters/en/p5/01-roots", "exercises/zh/p5", "exercises/en/p5"):
        page = (site / f"{docname}.html").read_text(encoding="utf-8")
        href = re.search(r'class="commbook-ipynb-link" href="([^"]+)"', page).group(1)
        assert not re.match(r"(/|[a-z]+:)", href), f"{docname}: the link must be relative, got {href}"
        assert (site / f"{docname}.html").parent.joinpath(href).resolve() == (site / cn.notebook_path(docname)).resolve()
    assert "commbook-ipynb-link" not in (site / "index.html").read_text(encoding="utf-8")


def test_downloaded_notebook_runs_and_carries_the_values(site: Path):
    path = site / cn.notebook_path("chapters/en/p5/01-roots")
    nb = nbformat.read(path, as_version=4)
    text = markdown(nb)
    root2 = f"{math.sqrt(2):.6f}"
    assert f"The square root of 2 is {root2} ([(1)](#en-p5-roots-eq), [Fig. 1](#en-p5-roots-fig))" in text
    assert "\\tag{1}" in text and f"{math.sqrt(2):.2f}" in text
    assert "<details>\n> <summary>Answer</summary>" in text
    assert "pip install -e" in nb.cells[0].source  # how to run it comes first
    for leftover in ("{glue", "```{", ":::", "{ref}", "{eq}", "(en-p5-roots)="):
        assert leftover not in text, leftover
    figure = next(c for c in nb.cells if "attachment:fig_root.png" in c.source)
    assert base64.b64decode(figure.attachments["fig_root.png"]["image/png"])[:4] == b"\x89PNG"

    ran = cn.run_notebook(path)
    assert cn.glued(ran)["root2"]["text/plain"] == repr(root2)  # the prose's value, recomputed
    shown = [o for c in ran.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(shown) == 1, "running the notebook shows the figure"
    assert cn.check_run(site, "chapters/en/p5/01-roots") == []


def test_exercise_solutions_fold_in_jupyter(site: Path):
    zh = nbformat.read(site / cn.notebook_path("exercises/zh/p5"), as_version=4)
    assert "<details>\n<summary>参考解答</summary>\n\n$\\sqrt 2$ ≈ 1.414\n\n</details>" in markdown(zh)
    assert "本笔记本" in zh.cells[0].source
    ran = cn.run_notebook(site / cn.notebook_path("exercises/zh/p5"))
    assert ran.cells[-1].outputs[0]["text"].strip() == str(round(math.sqrt(2), 3))


def test_check_site_reports_missing_notebooks_and_leftover_myst(site: Path, tmp_path: Path):
    html = tmp_path / "html"
    shutil.copytree(site, html)
    bad = html / cn.notebook_path("chapters/en/p5/01-roots")
    nb = nbformat.read(bad, as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell("left {glue:text}`root2`"))
    nbformat.write(nb, bad)
    (html / cn.notebook_path("exercises/en/p5")).unlink()
    problems = cn.check_site(html)
    assert any("01-roots" in p and "{glue" in p for p in problems), problems
    assert any("exercises/en/p5: no _notebooks/exercises/en/p5.ipynb" in p for p in problems), problems
