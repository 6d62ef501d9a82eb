"""Opening a chapter in JupyterLab and saving it leaves the file unchanged.

JupyterLab reads and writes the MyST chapters through jupytext's contents manager, which calls
``jupytext.reads``/``jupytext.writes`` with the configuration of ``[tool.jupytext]`` in
pyproject.toml; when a kernel starts, Lab stamps the notebook with the kernel's spec. This test
makes the same calls (without a Jupyter server, whose dependencies would slow every kernel of the
test run): a chapter whose header already says what Lab would write comes back byte for byte,
so ``git status`` stays clean.
"""

import tomllib
from pathlib import Path

import jupytext
import pytest
from jupytext.config import load_jupytext_configuration_file
from jupytext.formats import long_form_one_format

ROOT = Path(__file__).resolve().parents[1]
BOOK = tomllib.loads((ROOT / "book.toml").read_text())
PAGES = [f"{c}.md" for c in BOOK["chapters"]]


def lab_round_trip(text: str) -> str:
    """Read as Lab opens a chapter, stamp the kernel as Lab does, write as Lab saves."""
    from jupyter_client.kernelspec import KernelSpecManager

    config = load_jupytext_configuration_file(str(ROOT / "pyproject.toml"))
    notebook = jupytext.reads(text, fmt="md", config=config)
    spec = KernelSpecManager().get_kernel_spec("python3")
    notebook.metadata["kernelspec"] = {"display_name": spec.display_name, "language": spec.language,
                                       "name": "python3"}
    fmt = long_form_one_format(notebook.metadata["jupytext"]["formats"])
    return jupytext.writes(notebook, fmt=fmt, config=config)


@pytest.mark.parametrize("page", PAGES)
def test_open_and_save_in_lab_keeps_the_chapter(page):
    text = (ROOT / "notebooks" / page).read_text()
    assert lab_round_trip(text) == text
