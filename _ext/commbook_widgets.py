"""commbook's Sphinx extension for pages with explorers: no widget state in the HTML.

A page that displays an explorer (``commbook.book.explorers``) creates ipywidgets while
it is executed, and the executing client (nbclient) records their state in the
notebook's metadata.  MyST-NB then writes that state into the page as a
``<script type="application/vnd.jupyter.widget-state+json">`` block (and, unless
``nb_ipywidgets_js`` is empty, loads the widget manager from a CDN to render it).  The
built book has no kernel, so it shows each explorer's static rendering instead
(``nb_mime_priority_overrides`` in ``_config.yml``) and the state would be dead weight:
it holds the live view's HTML, the explorer's figure a second time.  This extension
removes the block from every page.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def drop_widget_state(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """Remove the widget-state script that MyST-NB added to this page's scripts."""
    scripts = context.get("script_files")
    if scripts:
        scripts[:] = [s for s in scripts if getattr(s, "attributes", {}).get("type") != WIDGET_STATE]


def setup(app: Sphinx) -> dict[str, Any]:
    # after MyST-NB's own html-page-context handler (priority 500), which adds the script
    app.connect("html-page-context", drop_widget_state, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
