"""Lighter pages (issue 19 §5: a page weighed 4–6 MB, most of it two scripts it does not need).

Once the site is written, every page but the search page loses (:func:`lighter`)

* the search scripts (``searchtools.js``, ``language_data.js`` and ``searchindex.js``, 1.3 MB
  with the API reference): the pydata theme loads them everywhere for a search-as-you-type
  box that this book turns off (its search box opens the search page, which keeps them);
  with them goes the book's own ``commbook-search.js`` (the search page's language and
  snippets);
* ``fontawesome.js`` (1.5 MB), which redraws the theme's ten or so icons as inline SVG: the
  theme's stylesheet already draws the same icons from the Font Awesome web font it ships
  (``fa-solid-900.woff2``, 0.16 MB), so the header looks the same without the script.
"""
from __future__ import annotations

import re

DROPPED = re.compile(
    r'[ \t]*<script (?:defer )?src="(?:\.\./)*(?:_static/searchtools\.js|_static/language_data\.js'
    r'|searchindex\.js|_static/commbook-search\.js|_static/scripts/fontawesome\.js)(?:\?[^"]*)?"></script>\n?')


def lighter(text: str) -> str:
    r"""``text`` (a written page but ``search.html``) without the scripts of :data:`DROPPED`;
    :mod:`commbook_pages` applies it to every page in its one pass over the site.

    >>> lighter('<p>x</p>\n  <script src="../_static/searchtools.js"></script>\n<p>y</p>')
    '<p>x</p>\n<p>y</p>'
    """
    return DROPPED.sub("", text)
