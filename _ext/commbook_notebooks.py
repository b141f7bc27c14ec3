"""Every page of the book as a runnable Jupyter notebook (loaded by commbook_sphinx).

After an HTML build, each page of a language part (``chapters/{zh,en}/…``,
``exercises/{zh,en}/…``) is written to ``<html>/_notebooks/<docname>.ipynb``, made from
the notebook MyST-NB executed for the page (``<html>/../jupyter_execute/``):

* a first cell says what the notebook is and how to run it;
* the prose is Jupyter Markdown with the computed values pasted in (``myst_to_jupyter``):
  glued numbers and figures, links for references, solutions and answers in ``<details>``;
* every code cell is kept, visible, in order, so the notebook runs top to bottom; a
  ``glue(key, image, display=False)`` call is switched to ``display=True`` so that running
  the notebook shows each figure where it is computed (its stored output too);
* outputs are kept as the book shows them (tables, printed results; an explorer's
  static rendering, not its live view, which runs again when the cell runs).

Every such page gets a "⬇ .ipynb" link in its header, next to the 中文 / English switch.

Run as a script, the module checks a built site (``make test`` does, after the book)::

    python _ext/commbook_notebooks.py _build/html --run chapters/en/p5/02-links

Every language page must have its notebook and a header link to it, no markdown cell may
keep MyST syntax, and each ``--run`` notebook is executed from a fresh kernel in an empty
folder: it must run without error, show its figures and glue the values its prose carries.
"""
from __future__ import annotations

import argparse
import ast
import json
import posixpath
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import nbformat

if str(Path(__file__).parent) not in sys.path:  # run as a script or imported by a test
    sys.path.insert(0, str(Path(__file__).parent))
from commbook_sphinx import ZH_NUMFIG_FORMAT, page_language  # noqa: E402
from myst_to_jupyter import Context, convert  # noqa: E402

NOTEBOOKS = "_notebooks"
GLUE_PREFIX = "application/papermill.record/"
# Left over in a markdown cell, these mean a MyST construct was not converted.
LEFTOVER = re.compile(r"\{glue|```+\{|~~~+\{|:::|\{[a-z][\w:-]*\}`|^\([^)\s]+\)=\s*$", re.M)

HEADER = {
    "en": """\
*This notebook is the page “{title}” of the book **commbook · Collective Communication**,
as offered for download on the book's site.* The text carries the numbers, tables and figures
computed when the book was built; the code cells below compute them again. To run it, install
the `commbook` package from the book's repository (in its root folder:
`pip install -e '.[book]'`, Python ≥ 3.11), open this notebook in Jupyter and run all cells
from the top (*Run → Restart Kernel and Run All Cells*). Solutions and answers are folded:
click ▸ to open them. Links to other pages lead to their notebooks, in the same folder tree.""",
    # One line: a line break between Chinese characters would show as a space.
    "zh": "*这是《commbook · 集合通信》“{title}”一页的笔记本版本，从本书网站下载*。"
          "正文中的数、表和图都是构建本书时算好填进去的，下面的代码单元会把它们重新算一遍。"
          "要运行它，先在本书代码仓库的根目录执行 `pip install -e '.[book]'`（需要 Python 3.11 及以上）"
          "安装 `commbook`，再用 Jupyter 打开本笔记本，从头运行全部单元（*Run → Restart Kernel and Run All Cells*）。"
          "参考解答和答案默认折叠，点 ▸ 展开。指向其他页面的链接会打开同一目录树里对应的笔记本。",
}


def notebook_path(docname: str) -> str:
    """Where the page's notebook lies in the built site."""
    return f"{NOTEBOOKS}/{docname}.ipynb"


# ---------------------------------------------------------------- glue and outputs


def _glue_key(output: dict) -> str | None:
    return output.get("metadata", {}).get("scrapbook", {}).get("name")


def glued(nb: nbformat.NotebookNode) -> dict[str, dict[str, Any]]:
    """Glue key -> its mime bundle (plain mime types), from the outputs of a notebook run
    with nbclient (MyST-NB moves them out of the notebooks it executes: see book_glue)."""
    bundles = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            key = _glue_key(output)
            if key is not None:
                bundles[key] = {m.removeprefix(GLUE_PREFIX): v for m, v in output.get("data", {}).items()}
    return bundles


def book_glue(executed: Path) -> dict[str, dict[str, Any]]:
    """Glue key -> mime bundle of a page as the book pasted it (``<docname>.glue.json``
    beside MyST-NB's executed notebook; none when the page glues nothing)."""
    path = executed.with_name(executed.name.removesuffix(".ipynb") + ".glue.json")
    if not path.is_file():
        return {}
    return {k: output["data"] for k, output in json.loads(path.read_text(encoding="utf-8")).items()}


def _image_keys(bundles: dict[str, dict[str, Any]]) -> set[str]:
    return {k for k, b in bundles.items() if any(m.startswith("image/") for m in b)}


def show_glued_images(source: str, keys: set[str]) -> str:
    """``glue("key", image, display=False)`` -> ``display=True`` for the keys given."""
    if not keys or "glue" not in source:
        return source
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:  # IPython syntax: fine unless it glues one of the images
        if any(k in source for k in keys):
            raise ValueError(f"a cell that glues an image is not plain Python ({exc}):\n{source}") from exc
        return source
    data = source.encode("utf-8")
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == ord("\n")]
    edits = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "glue"
                and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value in keys):
            for kw in node.keywords:
                if kw.arg == "display" and isinstance(kw.value, ast.Constant) and kw.value.value is False:
                    v = kw.value
                    edits.append((starts[v.lineno - 1] + v.col_offset, starts[v.end_lineno - 1] + v.end_col_offset))
    for start, end in sorted(edits, reverse=True):
        data = data[:start] + b"True" + data[end:]
    return data.decode("utf-8")


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def stored_outputs(outputs: list) -> list:
    """A code cell's outputs as the notebook stores them: without ipywidgets views, whose
    widget state is not saved (Jupyter would show "model not found" until the cell runs
    again); the static rendering of the same output stays."""
    out = []
    for o in outputs:
        if WIDGET_VIEW in o.get("data", {}):
            o = nbformat.from_dict({**o, "data": {k: v for k, v in o["data"].items() if k != WIDGET_VIEW}})
        out.append(o)
    return out


def page_notebook(executed: nbformat.NotebookNode, ctx: Context, title: str) -> nbformat.NotebookNode:
    """The downloadable notebook of one page, from the notebook MyST-NB executed for it
    (``ctx.glue``: what the page glued, see :func:`book_glue`)."""
    images = _image_keys(ctx.glue)
    nb = nbformat.v4.new_notebook(metadata={
        k: v for k, v in executed.metadata.items() if k in ("kernelspec", "language_info")})
    nb.cells.append(nbformat.v4.new_markdown_cell(HEADER[ctx.lang].format(title=title)))
    for cell in executed.cells:
        if cell.cell_type == "markdown":
            ctx.attachments = {}
            text = convert(cell.source, ctx)
            if text.strip():
                new = nbformat.v4.new_markdown_cell(text)
                if ctx.attachments:
                    new.attachments = ctx.attachments
                nb.cells.append(new)
        elif cell.cell_type == "code":
            new = nbformat.v4.new_code_cell(show_glued_images(cell.source, images),
                                            metadata=dict(cell.metadata),
                                            outputs=stored_outputs(cell.get("outputs", [])),
                                            execution_count=cell.get("execution_count"))
            nb.cells.append(new)
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i:03d}"
    nbformat.validate(nb)
    return nb


# ---------------------------------------------------------------------------- Sphinx


def _references(app) -> dict[str, Any]:
    """Labels, numbers and titles of the whole book, for every page's roles."""
    env = app.env
    std, math = env.get_domain("std"), env.get_domain("math")
    numbers: dict[str, tuple[str, str, str]] = {}
    for label, (docname, labelid) in std.anonlabels.items():
        for figtype, ids in env.toc_fignumbers.get(docname, {}).items():
            if labelid in ids:
                numbers[label] = (docname, figtype, ".".join(map(str, ids[labelid])))
    for label, (docname, eqno) in math.equations.items():
        number = env.toc_fignumbers.get(docname, {}).get("displaymath", {}).get(f"equation-{label}")
        numbers[label] = (docname, "displaymath", ".".join(map(str, number)) if number else str(eqno))
    return {
        "labels": {label: (docname, str(text)) for label, (docname, _, text) in std.labels.items()},
        "numbers": numbers,
        "titles": {d: env.titles[d].astext() for d in env.found_docs if d in env.titles},
    }


def _executed(app, docname: str) -> tuple[nbformat.NotebookNode, dict[str, dict[str, Any]]]:
    """The notebook MyST-NB executed for the page and the page's glue."""
    path = Path(app.outdir).parent / "jupyter_execute" / f"{docname}.ipynb"
    if path.is_file():
        return nbformat.read(path, as_version=4), book_glue(path)
    source = Path(app.env.doc2path(docname))  # a page without code cells is not executed
    if source.suffix == ".ipynb":
        return nbformat.read(source, as_version=4), {}
    import jupytext

    return jupytext.read(source, fmt="myst"), {}


def _write_notebooks(app, exc: Exception | None) -> None:
    if exc is not None or app.builder.name != "html":
        return
    refs = _references(app)
    english = dict(getattr(app, "_commbook_numfig_format", None) or app.config.numfig_format)
    for docname in sorted(app.env.found_docs):
        lang = page_language(docname)
        if lang is None:
            continue
        executed, glue = _executed(app, docname)
        ctx = Context(docname=docname, lang=lang, glue=glue, srcdir=Path(app.srcdir),
                      other_glue=lambda doc: book_glue(Path(app.outdir).parent / "jupyter_execute" / f"{doc}.ipynb"),
                      numfig_format={**english, **ZH_NUMFIG_FORMAT} if lang == "zh" else english, **refs)
        nb = page_notebook(executed, ctx, refs["titles"].get(docname, docname))
        target = Path(app.outdir, notebook_path(docname))
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)


def _page_context(app, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """The header's download link, relative to the page (works from a subfolder and file://)."""
    context["commbook_ipynb"] = None
    if app.builder.name == "html" and page_language(pagename) is not None and pagename in app.env.found_docs:
        from sphinx.util.osutil import relative_uri

        context["commbook_ipynb"] = relative_uri(app.builder.get_target_uri(pagename), notebook_path(pagename))


def setup(app) -> dict[str, Any]:
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _write_notebooks)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


# --------------------------------------------------------------------- site checks


def check_site(html: Path) -> list[str]:
    """Problems with the notebooks of a built site: missing, no header link, MyST left over."""
    problems = []
    pages = sorted(p for part in ("chapters", "exercises") for p in (html / part).rglob("*.html"))
    docnames = [p.relative_to(html).with_suffix("").as_posix() for p in pages]
    docnames = [d for d in docnames if page_language(d) is not None]
    if not docnames:
        return [f"{html}: no chapter or exercise pages"]
    for docname in docnames:
        path = html / notebook_path(docname)
        if not path.is_file():
            problems.append(f"{docname}: no {notebook_path(docname)}")
            continue
        page = (html / f"{docname}.html").read_text(encoding="utf-8")
        link = re.search(r'class="commbook-ipynb-link" href="([^"]+)"', page)
        if link is None or posixpath.normpath(posixpath.join(posixpath.dirname(docname), link.group(1))) \
                != notebook_path(docname):
            problems.append(f"{docname}: the header has no link to {notebook_path(docname)}")
        nb = nbformat.read(path, as_version=4)
        for i, cell in enumerate(nb.cells):
            found = LEFTOVER.search(cell.source) if cell.cell_type == "markdown" else None
            if found:
                problems.append(f"{path.relative_to(html)}, cell {i}: MyST left over: {found.group(0)!r}")
    return problems


def run_notebook(path: Path, timeout: int = 600) -> nbformat.NotebookNode:
    """Execute a downloaded notebook from a fresh kernel in an empty folder; return it run."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as folder:
        NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": folder}}).execute()
    return nb


def check_run(html: Path, docname: str) -> list[str]:
    """Run one page's notebook: its figures are shown and it glues what the book glued."""
    ran = run_notebook(html / notebook_path(docname))
    built = book_glue(html.parent / "jupyter_execute" / f"{docname}.ipynb")
    again = glued(ran)
    images = _image_keys(built)
    problems = [f"{docname}: glue {k!r} is {again.get(k, {}).get('text/plain')!r} when run, "
                f"{b['text/plain']!r} in the book" for k, b in built.items()
                if k not in images and again.get(k, {}).get("text/plain") != b.get("text/plain")]
    shown = sum(1 for c in ran.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {}))
    if shown < len(images):
        problems.append(f"{docname}: {shown} figures shown when run, the page glues {len(images)}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check the notebooks of a built commbook site.")
    parser.add_argument("html", type=Path, help="the built site, e.g. _build/html")
    parser.add_argument("--run", action="append", default=[], metavar="DOCNAME",
                        help="also execute this page's notebook (repeatable), e.g. chapters/en/p5/02-links")
    args = parser.parse_args(argv)
    problems = check_site(args.html)
    for docname in args.run:
        problems += check_run(args.html, docname)
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"notebooks: {len(problems)} problem(s) in {args.html / NOTEBOOKS}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
