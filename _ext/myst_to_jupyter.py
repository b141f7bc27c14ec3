"""MyST Markdown -> Jupyter Markdown, for the pages offered as notebooks (commbook_notebooks).

Jupyter renders CommonMark, HTML and ``$``/``$$`` math; it knows nothing of MyST's roles
and directives.  :func:`convert` rewrites one markdown cell of an executed page:

* glue roles (``{glue}``, ``{glue:}``, ``{glue:any}``, ``{glue:text}`` with MyST-NB's own
  format spec, ``{glue:md}``) become the glued value; glue directives (``{glue}``,
  ``{glue:figure}``, ``{glue:md}``, ``{glue:math}``) become the glued output: an image
  (a cell attachment), Markdown, HTML or math.  A key the page did not glue is an error;
* ``{ref}``, ``{numref}``, ``{eq}`` and ``{doc}`` become links (to ``#label`` on the same
  page, to ``other.ipynb#label`` elsewhere) with the text Sphinx shows; ``{math}`` is ``$…$``;
* ``(label)=`` targets become ``<a id="label"></a>`` anchors, ``%`` comment lines go;
* admonitions and dropdowns with ``:class: dropdown`` become ``<details>`` (collapsible
  in Jupyter), other admonitions block quotes with their title in bold;
* ``{math}`` blocks become ``$$ … \\tag{n} $$``, ``{figure}`` an attached image and caption,
  ``{code-block}`` a plain fenced block; links to ``.md`` pages point at their ``.ipynb``.

Anything else in braces (an unknown role or directive) is an error, not left behind.
"""
from __future__ import annotations

import base64
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from myst_nb.core.variables import format_plain_text

# MyST-NB's priority for the HTML builder: the glued output the book shows.
MIME_PRIORITY = ("text/html", "image/svg+xml", "image/png", "image/jpeg", "text/markdown",
                 "text/latex", "text/plain")
IMAGE_SUFFIX = {"image/png": ".png", "image/jpeg": ".jpg", "image/svg+xml": ".svg"}
ADMONITIONS = {"note": ("备注", "Note"), "tip": ("小技巧", "Tip"), "hint": ("提示", "Hint"),
               "important": ("重要", "Important"), "warning": ("警告", "Warning"),
               "seealso": ("参见", "See also")}  # as Sphinx's zh_CN catalog (the book's pages)

ROLE = re.compile(r"\{([A-Za-z][\w:.-]*)\}`([^`]+)`")
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|:{3,})(?P<rest>.*)$")
DIRECTIVE = re.compile(r"^\{(?P<name>[^}\s]+)\}\s*(?P<arg>.*)$")
OPTION = re.compile(r"^:(?P<key>[\w-]+):\s*(?P<value>.*)$")
TARGET = re.compile(r"^(?P<indent>\s*)\((?P<label>[^)\s]+)\)=\s*$")
COMMENT = re.compile(r"^\s*%")
TITLED = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
MD_LINK = re.compile(r"\]\((?![a-z]+:|#)(?P<path>[^)#\s]+)\.md(?P<anchor>#[^)\s]*)?\)")
DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)


class ConversionError(ValueError):
    """A construct the converter cannot render faithfully (unknown key, role or directive)."""


@dataclass
class Context:
    """What one page needs to resolve its roles; filled from the Sphinx environment.

    ``glue``: key -> mime bundle (plain mime types); ``labels``: label -> (docname, the text
    ``{ref}`` shows); ``numbers``: label -> (docname, figure type, number) for figures, tables
    and equations; ``titles``: docname -> title; ``numfig_format``: figure type -> ``"Fig. %s"``;
    ``other_glue``: docname -> that page's glue, for the keys a page pastes from another
    (MyST-NB's ``{glue:text}`../p5/page.md::key:s```; none: such a key is an error).
    """

    docname: str
    lang: str = "en"
    glue: dict[str, dict[str, str]] = field(default_factory=dict)
    labels: dict[str, tuple[str, str]] = field(default_factory=dict)
    numbers: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)
    numfig_format: dict[str, str] = field(default_factory=lambda: {"figure": "Fig. %s", "table": "Table %s"})
    srcdir: Path | None = None
    attachments: dict[str, dict[str, str]] = field(default_factory=dict)
    other_glue: Callable[[str], dict[str, dict[str, str]]] | None = None

    def fail(self, message: str) -> ConversionError:
        return ConversionError(f"{self.docname}: {message}")

    def bundle(self, key: str) -> dict[str, str]:
        if "::" in key:
            if self.other_glue is None:
                raise self.fail(f"glue key {key!r} names another page, and no other page's glue was given")
            path, _, name = key.partition("::")
            doc = posixpath.normpath(posixpath.join(posixpath.dirname(self.docname), path))
            doc = doc.removesuffix(".md").removesuffix(".ipynb")
            glue = self.other_glue(doc)
            if name not in glue:
                raise self.fail(f"glue key {key!r}: the page {doc!r} never glues {name!r}")
            return glue[name]
        if key not in self.glue:
            raise self.fail(f"glue key {key!r} is used in the text but the page's code never glues it")
        return self.glue[key]

    def link(self, docname: str, anchor: str | None = None) -> str:
        """A relative link from this page's notebook to ``docname``'s (same folder tree)."""
        path = "" if docname == self.docname else \
            posixpath.relpath(docname, posixpath.dirname(self.docname)) + ".ipynb"
        return path + (f"#{anchor}" if anchor else "")

    def attach(self, name: str, mime: str, data: str | bytes) -> str:
        """Attach an image to the cell; the Markdown that shows it."""
        if isinstance(data, bytes):
            data = base64.b64encode(data).decode("ascii")
        filename = f"{name}{IMAGE_SUFFIX[mime]}"
        self.attachments[filename] = {mime: "".join(data) if isinstance(data, list) else data}
        return f"attachment:{filename}"


def convert(text: str, ctx: Context) -> str:
    """One markdown cell in Jupyter Markdown; images it needs are added to ``ctx.attachments``."""
    return "\n".join(_blocks(text.split("\n"), ctx)).strip("\n")


# ------------------------------------------------------------------------------ blocks


def _closing(lines: list[str], start: int, fence: str) -> int:
    close = re.compile(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$")
    for j in range(start + 1, len(lines)):
        if close.match(lines[j]):
            return j
    return len(lines)


def _dedent(lines: list[str], indent: str) -> list[str]:
    return [line[len(indent):] if line.startswith(indent) else line.lstrip() for line in lines]


def _blocks(lines: list[str], ctx: Context) -> list[str]:
    out: list[str] = []
    prose: list[str] = []

    def flush() -> None:
        if prose:
            out.extend(_inline("\n".join(prose), ctx).split("\n"))
            prose.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if fence:
            flush()
            end = _closing(lines, i, fence["fence"])
            directive = DIRECTIVE.match(fence["rest"].strip())
            if directive is None:  # a plain code block stays as it is
                if fence["fence"][0] == ":":
                    raise ctx.fail(f"a ':::' fence without a directive: {line.strip()!r}")
                out.extend(lines[i:end + 1])
            else:
                body = _dedent(lines[i + 1:end], fence["indent"])
                rendered = _directive(directive["name"], directive["arg"].strip(), body, ctx)
                out.extend(fence["indent"] + r if r else r for r in rendered.split("\n"))
            i = end + 1
            continue
        target = TARGET.match(line)
        if target:
            flush()
            out.extend([f'{target["indent"]}<a id="{target["label"]}"></a>', ""])
        elif not COMMENT.match(line):
            prose.append(line)
        i += 1
    flush()
    return out


def _options(body: list[str]) -> tuple[dict[str, str], list[str]]:
    options: dict[str, str] = {}
    i = 0
    while i < len(body) and OPTION.match(body[i]):
        m = OPTION.match(body[i])
        options[m["key"]] = m["value"].strip()
        i += 1
    return options, body[i:]


def _directive(name: str, arg: str, body: list[str], ctx: Context) -> str:
    options, content = _options(body)
    if name.startswith("glue") and options.get("doc"):  # MyST-NB's glue from another page
        arg = f"{options['doc']}::{arg}"
    text = "\n".join(content).strip("\n")
    anchor = options.get("name") or options.get("label")
    head = f'<a id="{anchor}"></a>\n\n' if anchor else ""
    if name == "admonition" or name in ADMONITIONS or name == "dropdown":
        title = arg or (ADMONITIONS[name][ctx.lang != "zh"] if name in ADMONITIONS else "")
        inner = convert(text, ctx)
        if name == "dropdown" or "dropdown" in options.get("class", "").split():
            return head + _details(_inline(title, ctx), inner)
        return head + _quote(f"**{_inline(title, ctx)}**\n\n{inner}" if title else inner)
    if name == "math":
        return head + _display_math("\n".join(filter(None, [arg, text])), ctx.numbers.get(anchor or ""))
    if name in ("glue", "glue:", "glue:any"):
        return head + _block_output(arg, ctx.bundle(arg), ctx)
    if name == "glue:md":
        return head + _mime(arg, ctx.bundle(arg), "text/markdown", ctx)
    if name == "glue:math":
        return head + _display_math(_mime(arg, ctx.bundle(arg), "text/latex", ctx).strip("$"), None)
    if name == "glue:figure":
        bundle = ctx.bundle(arg)
        mime = next((m for m in MIME_PRIORITY if m in bundle and m.startswith("image/")), None)
        if mime is None:
            raise ctx.fail(f"glue:figure {arg!r}: the glued value is not an image")
        return head + _figure(ctx.attach(arg, mime, bundle[mime]), options, text, ctx)
    if name == "figure":
        return head + _figure(_file_image(arg, ctx), options, text, ctx)
    if name in ("code-block", "code", "sourcecode"):
        return f"```{arg}\n{text}\n```"
    raise ctx.fail(f"directive {{{name}}} has no notebook form (add it to _ext/myst_to_jupyter.py)")


def _details(summary: str, body: str) -> str:
    summary = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", summary)
    summary = re.sub(r"`([^`]+)`", r"<code>\1</code>", summary)
    return f"<details>\n<summary>{summary}</summary>\n\n{body}\n\n</details>"


def _quote(text: str) -> str:
    # Jupyter takes $$…$$ out before Markdown sees the quote marks: keep each on one line.
    text = DISPLAY_MATH.sub(lambda m: "$$" + " ".join(m.group(1).split()) + "$$", text)
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))


def _display_math(tex: str, number: tuple[str, str, str] | None) -> str:
    tex = tex.strip()
    if "\\\\" in tex and "\\begin" not in tex:
        tex = f"\\begin{{aligned}}\n{tex}\n\\end{{aligned}}"  # what Sphinx's split wrap does
    tag = f" \\tag{{{number[2]}}}" if number else ""
    return f"$$\n{tex}{tag}\n$$"


def _caption(options: dict[str, str], text: str, ctx: Context) -> str:
    anchor = options.get("name")
    number = ctx.numbers.get(anchor) if anchor else None
    caption = convert(text, ctx)
    if number:
        prefix = ctx.numfig_format.get(number[1], "%s") % number[2]
        caption = f"*{prefix}* {caption}" if caption else f"*{prefix}*"
    return caption


def _figure(src: str, options: dict[str, str], text: str, ctx: Context) -> str:
    alt = options.get("alt", "").replace("]", "\\]")
    caption = _caption(options, text, ctx)
    return f"![{alt}]({src})" + (f"\n\n{caption}" if caption else "")


def _file_image(path: str, ctx: Context) -> str:
    if ctx.srcdir is None:
        raise ctx.fail(f"figure {path!r}: no source folder to read it from")
    file = (ctx.srcdir / posixpath.dirname(ctx.docname) / path).resolve()
    mime = next((m for m, s in IMAGE_SUFFIX.items() if file.suffix.lower() in (s, ".jpeg")), None)
    if mime is None or not file.is_file():
        raise ctx.fail(f"figure {path!r}: no such image file ({file})")
    return ctx.attach(file.stem, mime, file.read_bytes())


def _mime(key: str, bundle: dict[str, str], mime: str, ctx: Context) -> str:
    if mime not in bundle:
        raise ctx.fail(f"glue key {key!r} has no {mime} value")
    value = bundle[mime]
    return "".join(value) if isinstance(value, list) else value


def _block_output(key: str, bundle: dict[str, str], ctx: Context) -> str:
    mime = next((m for m in MIME_PRIORITY if m in bundle), None)
    if mime is None:
        raise ctx.fail(f"glue key {key!r} has no output Jupyter can show ({sorted(bundle)})")
    value = _mime(key, bundle, mime, ctx)
    if mime.startswith("image/"):
        return f"![{key}]({ctx.attach(key, mime, value)})"
    if mime == "text/html":  # one HTML block: a blank line would end it
        return "\n".join(line for line in value.split("\n") if line.strip())
    if mime == "text/latex":
        return _display_math(value.strip().strip("$"), None)
    if mime == "text/plain":
        return f"```\n{value}\n```"
    return value


# ------------------------------------------------------------------------------ inline


def _inline(text: str, ctx: Context) -> str:
    text = ROLE.sub(lambda m: _role(m.group(1), m.group(2), ctx), text)
    return MD_LINK.sub(lambda m: f"]({m['path']}.ipynb{m['anchor'] or ''})", text)


def _titled(content: str) -> tuple[str | None, str]:
    m = TITLED.match(content.strip())
    return (m["text"], m["target"]) if m and m["text"] else (None, content.strip())


def _role(name: str, content: str, ctx: Context) -> str:
    if name == "glue:text":
        key, _, spec = content.rpartition(":") if ":" in content else (content, "", "s")
        text = _mime(key, ctx.bundle(key), "text/plain", ctx)
        try:
            return format_plain_text(text, spec)
        except (ValueError, TypeError) as exc:
            raise ctx.fail(f"{{glue:text}}`{content}`: cannot format {text!r}: {exc}") from exc
    if name in ("glue", "glue:", "glue:any"):
        bundle = ctx.bundle(content)
        mime = next((m for m in MIME_PRIORITY if m in bundle), None)
        if mime is None or mime.startswith("image/"):
            return _block_output(content, bundle, ctx)
        value = _mime(content, bundle, mime, ctx)
        return f"${value.strip().strip('$')}$" if mime == "text/latex" else value
    if name == "glue:md":
        return _mime(content, ctx.bundle(content), "text/markdown", ctx)
    if name == "math":
        return f"${content}$"
    if name == "source":  # the builder of a figure (_ext/commbook_source.py): its dotted name
        return f"({'源码' if ctx.docname.split('/')[1:2] == ['zh'] else 'source'}: `{content.strip()}`)"
    title, target = _titled(content)
    if name == "ref":
        if target not in ctx.labels:
            raise ctx.fail(f"{{ref}} to unknown label {target!r}")
        docname, text = ctx.labels[target]
        return f"[{title or text}]({ctx.link(docname, target)})"
    if name in ("numref", "eq"):
        if target not in ctx.numbers:
            raise ctx.fail(f"{{{name}}} to {target!r}, which has no number")
        docname, figtype, number = ctx.numbers[target]
        if name == "eq":
            return f"[({number})]({ctx.link(docname, target)})"
        fmt = title or ctx.numfig_format.get(figtype, "%s")
        text = fmt.replace("{number}", number).replace("%s", number)
        return f"[{text}]({ctx.link(docname, target)})"
    if name == "doc":
        docname = posixpath.normpath(posixpath.join(posixpath.dirname(ctx.docname), target))
        if docname not in ctx.titles:
            raise ctx.fail(f"{{doc}} to unknown page {target!r}")
        return f"[{title or ctx.titles[docname]}]({ctx.link(docname)})"
    raise ctx.fail(f"role {{{name}}}`{content}` has no notebook form (add it to _ext/myst_to_jupyter.py)")
