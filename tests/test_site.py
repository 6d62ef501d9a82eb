"""The built site: offline, paper-numbered captions with alt text, favicon, static panels.

A small page is built with the book's own Sphinx configuration (notebooks/conf.py, execution
off), so the theme, MathJax and every extension of the book take part.
"""

import os
import shutil
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


def test_scanner_finds_external_loads_but_not_links():
    import sys

    sys.path.insert(0, str(NOTEBOOKS / "_ext"))
    from offline import external_resources

    page = """<a href="https://doi.org/10.1/x">paper</a> https://example.org in text
    <script src="https://cdn.example/require.js"></script><link rel="stylesheet" href="//fonts.example/a.css">
    <img src="_images/a.png"><script>var s = "https://cdn.example/mathjax.js";</script>
    <style>@import "https://fonts.example/b.css"; .x { background: url(https://img.example/c.png) }</style>"""
    assert sorted(external_resources(page)) == sorted(
        ["https://cdn.example/require.js", "//fonts.example/a.css", "https://fonts.example/b.css",
         "https://img.example/c.png", "https://cdn.example/mathjax.js"])


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from sphinx.application import Sphinx

    src = tmp_path_factory.mktemp("src")
    (src / "conf.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(NOTEBOOKS)!r})
        from conf import *  # the book's configuration
        sys.path.insert(0, {str(NOTEBOOKS / "_ext")!r})
        html_static_path = [{str(NOTEBOOKS / "_static")!r}]
        html_favicon = {str(NOTEBOOKS / "_static" / "favicon.svg")!r}
        include_patterns = ["index.md"]
        nb_execution_mode = "off"
        def setup(app):
            pass
        """))
    (src / "index.md").write_text(textwrap.dedent("""
        # A page

        Math $E = \\tfrac12 m v^2$ and
        $$ \\dot q = v . $$

        ## Fig. 3 — energy

        ```{figure} plot.png
        :name: fig-energy

        Energy increments of the scheme
        ```

        ## Notes

        ```{figure} plot.png
        Not a paper figure
        ```
        """))
    shutil.copy(NOTEBOOKS / "_static" / "favicon.svg", src / "plot.png")  # any image file will do
    out = tmp_path_factory.mktemp("html")
    environ = dict(os.environ)  # the book's conf.py sets variables for its kernels (MBS_STATIC_BUILD)
    try:
        app = Sphinx(str(src), str(src), str(out), str(out / ".doctrees"), "html", status=None, warning=None,
                     freshenv=True)
        app.build()
    finally:
        os.environ.clear()
        os.environ.update(environ)
    return out


def test_built_page_is_self_contained(site):
    import sys

    sys.path.insert(0, str(NOTEBOOKS / "_ext"))
    from offline import check_site

    assert check_site(site) == {}
    assert (site / "_static" / "mathjax" / "tex-chtml.js").exists()
    page = (site / "index.html").read_text()
    assert "_static/mathjax/tex-chtml.js" in page and "favicon.svg" in page


def test_captions_carry_the_paper_numbers_and_alt_text(site):
    page = (site / "index.html").read_text()
    assert "Fig. 3. </span>" in page or "Fig. 3. Energy increments" in page
    assert 'alt="Fig. 3. Energy increments of the scheme"' in page
    assert "Fig. 1" not in page and "Not a paper figure" in page


# napoleon (Sphinx 9) reads autodoc's options through an interface Sphinx 11 will remove.
@pytest.mark.filterwarnings("ignore:The mapping interface for autodoc options:PendingDeprecationWarning")
def test_api_reference_documents_every_module_without_a_warning(tmp_path):
    """notebooks/api.md, built nitpicky with the book's configuration (as `make book` builds it),
    renders the docstrings of every module of mbslib without a warning."""
    import io

    from sphinx.application import Sphinx
    from sphinx.util.console import strip_escape_sequences

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(NOTEBOOKS)!r})
        from conf import *  # the book's configuration
        html_static_path = [{str(NOTEBOOKS / "_static")!r}]
        html_favicon = {str(NOTEBOOKS / "_static" / "favicon.svg")!r}
        include_patterns = ["index.md", "api.md"]
        nb_execution_mode = "off"
        def setup(app):
            pass
        """))
    (src / "index.md").write_text("# A book\n\n```{toctree}\napi\n```\n")
    shutil.copy(NOTEBOOKS / "api.md", src / "api.md")
    warnings = io.StringIO()
    environ = dict(os.environ)  # the book's conf.py sets variables for its kernels
    try:
        app = Sphinx(str(src), str(src), str(tmp_path / "html"), str(tmp_path / "doctrees"), "html",
                     status=None, warning=warnings, freshenv=True, confoverrides={"nitpicky": True})
        app.build()
    finally:
        os.environ.clear()
        os.environ.update(environ)
    # A second Sphinx application in one process registers docutils' node classes again.
    found = [w for w in strip_escape_sequences(warnings.getvalue()).splitlines() if "is already registered" not in w]
    assert found == []
    page = (tmp_path / "html" / "api.html").read_text()
    assert 'id="module-mbslib.model"' in page and 'id="mbslib.model.Model"' in page


def test_api_reference_follows_the_chapters_and_the_scorecard():
    import os
    import sys

    sys.path.insert(0, str(NOTEBOOKS))
    environ = dict(os.environ)  # the book's conf.py sets variables for its kernels
    try:
        import conf
    finally:
        os.environ.clear()
        os.environ.update(environ)
    source = [""]
    conf.add_chapter_toctree(None, "index", source)
    toctree = source[0].split("```")[1].splitlines()
    assert [line for line in toctree if line and line[0] not in "{:"] == conf.BOOK["chapters"] + ["scorecard", "api"]
    assert "api.md" in conf.include_patterns


def test_chapters_are_read_one_per_process_longest_first(site, tmp_path):
    """The book's Sphinx reads (and executes) every document in a chunk of its own, and its
    parallel runner starts them in the start order of book.toml, which lists every chapter once
    (notebooks/_ext/balanced.py): checked on Sphinx's own runner, two processes at a time."""
    import sys
    import time
    import tomllib

    import sphinx.builders
    from sphinx.util.parallel import ParallelTasks

    sys.path.insert(0, str(NOTEBOOKS / "_ext"))
    from balanced import START_ORDER, one_document_per_chunk

    book = tomllib.loads((ROOT / "book.toml").read_text())
    assert sorted(START_ORDER) == sorted(book["chapters"])
    assert sphinx.builders.make_chunks is one_document_per_chunk  # the site fixture loaded the extension
    docs = ["index", "api", *sorted(book["chapters"]), "scorecard"]
    log = tmp_path / "started"

    def read(chunk):  # every chunk takes 0.6 s, so the others wait in Sphinx's queue
        with log.open("a") as f:
            f.write(chunk[0] + "\n")
        time.sleep(0.6)

    tasks = ParallelTasks(2)
    first, *rest = one_document_per_chunk(docs, 2)
    tasks.add_task(read, first)
    time.sleep(0.3)  # the two processes then free up 0.3 s apart: one start at a time
    for chunk in rest:
        tasks.add_task(read, chunk)
    tasks.join()
    assert log.read_text().split() == [*START_ORDER, "index", "api", "scorecard"]
