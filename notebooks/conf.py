"""Sphinx configuration of the book; everything book-specific comes from ../book.toml."""

import hashlib
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


def library_fingerprint() -> str:
    """Hash of the mbslib sources: jupyter-cache keys on a chapter's code only, so a library
    change must start a fresh cache or the book would show results of the old library."""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "mbslib").rglob("*.py")):
        digest.update(path.relative_to(ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


# One execution cache per mode and library version; the chapters record their checks beside
# it and the scorecard page reads them back, so cached chapters keep their records.
CACHE_DIR = ROOT / "_build" / ".jupyter_cache" / f"{MODE}-{library_fingerprint()}"
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

extensions = ["myst_nb", "scorecard"]
root_doc = "index"
include_patterns = ["index.md", "scorecard.md"] + [f"{c}.md" for c in BOOK["chapters"]]
exclude_patterns = ["_build", "conf.py", "**/.ipynb_checkpoints", "_ext"]

myst_enable_extensions = ["dollarmath", "amsmath"]
myst_dmath_double_inline = True
numfig = True

nb_execution_mode = "cache"
nb_execution_cache_path = str(CACHE_DIR)
nb_execution_timeout = BOOK["execution"]["cell_timeout"]
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True

html_theme = "sphinx_book_theme"
html_title = BOOK["book"]["title"]
html_theme_options = {"show_toc_level": 2}

scorecard_chapters = BOOK["chapters"]
scorecard_dir = str(CHECKS_DIR)


def add_chapter_toctree(app, docname, source):
    """Append the chapter list of book.toml to the landing page as its table of contents."""
    if docname == "index":
        entries = "\n".join(BOOK["chapters"] + ["scorecard"])
        source[0] += f"\n\n```{{toctree}}\n:maxdepth: 1\n:caption: Chapters\n\n{entries}\n```\n"


def setup(app):
    app.connect("source-read", add_chapter_toctree)
