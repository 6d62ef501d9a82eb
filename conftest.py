"""Notebook tests: every chapter of book.toml runs under nbval in quick mode.

nbval collects only ``.ipynb`` files; the chapters are MyST markdown. This hook converts each
chapter with jupytext into ``_build/nbtest/`` (atomically: every xdist worker collects) with a
first cell that changes into the chapter's folder, and hands nbval the copy while the test keeps
the chapter's own path as its id. A chapter file given explicitly on the command line is
collected even when it is not (yet) in book.toml.
"""

import os
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
NOTEBOOKS = ROOT / "notebooks"
BOOK = tomllib.loads((ROOT / "book.toml").read_text())

# Kernels inherit the environment: quick mode unless asked otherwise, one thread per kernel,
# check records away from the book's.
os.environ.setdefault("MBS_QUICK", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MBS_CHECKS_DIR", str(ROOT / "_build" / "checks" / "pytest"))


def _explicit(config, path: Path) -> bool:
    for arg in config.invocation_params.args:
        candidate = Path(config.invocation_params.dir, str(arg).split("::")[0])
        if candidate.suffix == ".md" and candidate.resolve() == path.resolve():
            return True
    return False


def _to_ipynb(path: Path) -> Path:
    import jupytext
    import nbformat

    nb = jupytext.read(path)
    chdir = nbformat.v4.new_code_cell(f"import os\nos.chdir({str(path.parent)!r})")
    nb.cells.insert(0, chdir)
    out_dir = ROOT / "_build" / "nbtest"
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{path.stem}.ipynb"
    tmp = out.with_suffix(f".tmp{os.getpid()}")
    nbformat.write(nb, tmp)
    os.replace(tmp, out)
    return out


def pytest_collect_file(parent, file_path: Path):
    config = parent.config
    if file_path.suffix != ".md" or not (config.option.nbval or config.option.nbval_lax):
        return None
    in_book = file_path.parent == NOTEBOOKS and file_path.stem in BOOK["chapters"]
    if not (in_book or _explicit(config, file_path)):
        return None
    chapter = _chapter_class().from_parent(parent, path=file_path)
    chapter.ipynb_copy = _to_ipynb(file_path)
    return chapter


def _chapter_class():
    """nbval's notebook collector, reading the converted copy but keeping the chapter's own path
    as the test id (so ``pytest notebooks/<chapter>.md`` selects it)."""
    from nbval.plugin import IPyNbFile

    class MystChapter(IPyNbFile):
        @property
        def fspath(self):
            return type(super().fspath)(self.ipynb_copy)

    return MystChapter


def pytest_configure(config):
    # One per-cell timeout for the notebook tests, from book.toml (nbval's default is 2000 s).
    if config.getoption("nbval_cell_timeout", None) == 2000:
        config.option.nbval_cell_timeout = BOOK["execution"]["test_cell_timeout"]


def pytest_collection_modifyitems(config, items):
    slow = set(BOOK.get("slow", []))
    for item in items:
        if Path(str(item.fspath)).stem in slow:
            item.add_marker(pytest.mark.slow)
