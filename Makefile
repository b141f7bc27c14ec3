# commbook: build the book and run every check.
#   make book   install into .venv, execute every page, build _build/html
#   make test   unit tests + bilingual parity + CJK figure test, nbval on exercises/,
#               then the full book build with warnings as errors, then the built
#               pages in a real browser (tests/browser), then the PDFs (make pdf) and their check
#   make pdf    one PDF per language from the built book: _build/pdf/commbook-{zh,en}.pdf

PYTHON  ?= $(shell command -v python3.11 || command -v python3)
VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.commbook-installed
# -W: any Sphinx warning fails the build; --keep-going: but report all of them first;
# --all: rebuild every page, so warnings from unchanged pages are not hidden.
JB_FLAGS := --warningiserror --keep-going --all

.PHONY: venv fonts browser js book pdf test clean

venv: $(STAMP) fonts browser js

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e '.[book,test,measure]'
	touch $@

# Chinese figure labels need a CJK font.  Install one when we can (root + apt-get);
# otherwise only print a note: the figures then fall back to English labels.
fonts: $(STAMP)
	@if $(PY) -c 'import sys; from commbook.book.plots import find_cjk_font; sys.exit(find_cjk_font() is None)'; then \
	  echo "CJK font: $$($(PY) -c 'from commbook.book.plots import find_cjk_font; print(find_cjk_font())')"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-cjk; then \
	    rm -f "$$($(PY) -c 'import matplotlib; print(matplotlib.get_cachedir())')"/fontlist-*.json; \
	    echo "CJK font installed (fonts-noto-cjk); matplotlib font cache cleared"; \
	  else \
	    echo "note: apt-get could not install fonts-noto-cjk; Chinese figure labels will fall back to English"; \
	  fi; \
	else \
	  echo "note: no CJK font and no root/apt-get to install fonts-noto-cjk; Chinese figure labels will fall back to English"; \
	fi

# The browser check (tests/browser, run by `make test` after the book build) drives
# Debian's Chromium; the 💻 marker of the exercises needs a colour emoji font.  Install
# both when we can (root + apt-get); otherwise only print a note: the check is then
# skipped with the reason (with CI=true it fails).
browser:
	@if [ -x /usr/bin/chromium ] && fc-list 2>/dev/null | grep -q "Noto Color Emoji"; then \
	  echo "browser: $$(/usr/bin/chromium --version 2>/dev/null)"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-color-emoji; then \
	    echo "browser installed (chromium, fonts-noto-color-emoji)"; \
	  else \
	    echo "note: apt-get could not install chromium and fonts-noto-color-emoji; the browser check will be skipped"; \
	  fi; \
	else \
	  echo "note: no /usr/bin/chromium and no root/apt-get to install it; the browser check will be skipped"; \
	fi

# The explorers on the built pages (_static/commbook-interactive.js) draw with Vega 6.4.0 and
# Vega-Lite 6.4.3 from the npm registry, pinned in package.json / package-lock.json; the
# build serves them as one file, _static/commbook-vega.js (_ext/commbook_interactive.py), never
# from a CDN.  Weighed before choosing (minified; gzip -9): vega.min.js 521 KB (180 KB) +
# vega-lite.min.js 251 KB (79 KB) = 772 KB (259 KB); plotly-basic.min.js 4.1.1: 1,192 KB
# (395 KB); Bokeh 3.9.2: bokeh.min.js 1,268 KB (351 KB) + bokeh-widgets.min.js 382 KB.
js: node_modules/.package-lock.json

node_modules/.package-lock.json: package.json package-lock.json
	@command -v npm >/dev/null || { echo "npm (Node.js 20) is needed to install the explorers' chart library (package.json)"; exit 1; }
	npm ci --no-audit --no-fund
	touch $@

# The site serves the package it documents: the wheel and the sdist of the current version
# (pyproject.toml's) under _build/html/_downloads/dist/, linked from the reference's first
# page (reference/index.md); built from this checkout with the venv's setuptools.
DIST := _build/html/_downloads/dist

book: venv
	$(VENV)/bin/jupyter-book build . $(JB_FLAGS)
	rm -rf $(DIST) build
	$(PY) -m pip wheel --no-deps --no-build-isolation -q -w $(DIST) .
	$(PY) -c 'import sys; from setuptools import build_meta; build_meta.build_sdist(sys.argv[1])' $(DIST) > /dev/null
	rm -rf build
	@echo "Book: $(CURDIR)/_build/html/index.html"
	@echo "Package: $$(ls $(DIST))"

# One PDF per language from the built site (tools/pdf_book.py: Chromium prints every page in
# _toc.yml order; title page, contents, bookmarks, page numbers): _build/pdf/commbook-{zh,en}.pdf.
pdf: venv
	$(PY) tools/pdf_book.py _build/html

# pytest exits with 5 when it collects nothing; that is accepted only while exercises/zh
# and exercises/en hold no notebook at all (otherwise nbval must have run them).
test: venv
	$(PY) -m pytest tests
	if [ -d exercises ]; then $(PY) -m pytest --nbval exercises/ || { rc=$$?; if [ $$rc -eq 5 ] && [ -z "$$(find exercises/zh exercises/en -name '*.ipynb' -not -path '*/.ipynb_checkpoints/*' 2>/dev/null)" ]; then echo "nbval: no exercise notebooks yet"; else echo "nbval failed (exit $$rc)"; exit $$rc; fi; }; fi
	$(MAKE) --no-print-directory book
	COMMBOOK_SITE=_build/html $(PY) -m pytest tests/browser -q --deselect tests/browser/test_pdf.py
	$(MAKE) --no-print-directory pdf
	COMMBOOK_SITE=_build/html $(PY) -m pytest tests/browser/test_pdf.py -q
	$(PY) _ext/commbook_notebooks.py _build/html --run chapters/en/p5/02-links --run exercises/zh/p5

clean:
	rm -rf _build
