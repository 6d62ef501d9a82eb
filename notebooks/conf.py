"""Sphinx configuration of the book; everything book-specific comes from ../book.toml."""

import os
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BOOK = tomllib.loads((ROOT / "book.toml").read_text())
QUICK = os.environ.get("MBS_QUICK", "0") == "1"
MODE = "quick" if QUICK else "full"

sys.path.insert(0, str(HERE / "_ext"))

from mbslib import fingerprint  # noqa: E402

# One execution cache per mode and library version; the chapters record their checks beside
# it and the scorecard page reads them back, so cached chapters keep their records.
CACHE_DIR = ROOT / "_build" / ".jupyter_cache" / f"{MODE}-{fingerprint()}"
CHECKS_DIR = CACHE_DIR / "checks"

# Create the cache database here, in the main process: with `-j 2` two reader processes would
# otherwise both try to create it on a cold build.
from jupyter_cache import get_cache  # noqa: E402

get_cache(str(CACHE_DIR)).list_cache_records()
os.environ["MBS_CHECKS_DIR"] = str(CHECKS_DIR)
os.environ.setdefault("OMP_NUM_THREADS", "1")
# Kernels inherit this: widget panels skip creating live widgets in the static site (mbslib.widgets).
os.environ["MBS_STATIC_BUILD"] = "1"

project = BOOK["book"]["title"]
author = BOOK["book"]["author"]
copyright = BOOK["book"]["copyright"]

# Everything a page loads comes from the site itself (tests/test_site.py): MathJax from
# sphinx-mathjax-offline, no widget manager (static panels are plain HTML, mbslib.widgets).
extensions = ["balanced", "myst_nb", "scorecard", "paperfigures", "offline", "sphinx-mathjax-offline",
              "sphinx_copybutton", "sphinx_exercise", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "apiref"]
root_doc = "index"
# The chapters, then the scorecard and the API reference of mbslib (api.md, autodoc).
APPENDICES = ["scorecard", "api"]
include_patterns = ["index.md"] + [f"{c}.md" for c in BOOK["chapters"] + APPENDICES]
exclude_patterns = ["_build", "conf.py", "**/.ipynb_checkpoints", "_ext", "_static"]

myst_enable_extensions = ["dollarmath", "amsmath"]
myst_dmath_double_inline = True
# The book does not number its own figures: numbering across the book would caption the paper's
# Fig. 1 as "Fig. 7". Captions carry the paper's numbers instead (_ext/paperfigures.py).
# sphinx-exercise turns numfig on for its exercises, so figures and tables get an empty number.
numfig_format = {"figure": "%.0s", "table": "%.0s", "code-block": "%.0s"}
nb_ipywidgets_js = {}  # static pages have no live widgets: load no widget manager from a CDN

# API reference (api.md): members in the order of the sources, numpy-style docstring sections,
# attributes of records as a field list.
autodoc_member_order = "bysource"
napoleon_use_ivar = True

nb_execution_mode = "cache"
nb_execution_cache_path = str(CACHE_DIR)
nb_execution_timeout = BOOK["execution"]["cell_timeout"]
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True

html_theme = "sphinx_book_theme"
html_title = BOOK["book"]["title"]
html_static_path = ["_static"]
html_css_files = ["mbsbook.css"]
html_js_files = ["mbsbook.js"]
html_favicon = "_static/favicon.svg"
# A first visit (empty localStorage) otherwise starts with an empty theme mode, which the theme's
# script rejects with a console error before falling back to "auto".
html_context = {"default_mode": "auto"}
html_theme_options = {
    "show_toc_level": 2,
    # Launch in Binder (JupyterLab) and download the executed notebook (.ipynb); the repository
    # is one setting in book.toml.
    "repository_url": BOOK["book"]["repository"],
    "repository_branch": BOOK["book"].get("branch", "main"),
    "path_to_docs": "notebooks",
    "use_repository_button": True,
    "use_download_button": True,
    "launch_buttons": {"binderhub_url": BOOK["book"]["binderhub"], "notebook_interface": "jupyterlab"},
}

scorecard_chapters = BOOK["chapters"]
scorecard_dir = str(CHECKS_DIR)


def add_chapter_toctree(app, docname, source):
    """Append the chapter list of book.toml to the landing page as its table of contents."""
    if docname == "index":
        entries = "\n".join(BOOK["chapters"] + APPENDICES)
        source[0] += f"\n\n```{{toctree}}\n:maxdepth: 1\n:caption: Chapters\n\n{entries}\n```\n"


def setup(app):
    app.connect("source-read", add_chapter_toctree)
    # sphinx-mathjax-offline only copies MathJax into the site when the build has finished, but it
    # does not declare itself parallel-safe, and Sphinx would then read (execute) the chapters one
    # at a time instead of two at a time on `make book`'s two processes.
    mathjax = app.extensions["sphinx-mathjax-offline"]
    mathjax.parallel_read_safe = mathjax.parallel_write_safe = True

# The standard library's executor has no page here (the site is offline: no intersphinx).
nitpick_ignore = [("py:class", "concurrent.futures._base.Executor")]
