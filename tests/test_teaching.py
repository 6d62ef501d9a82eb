"""Every chapter opens with learning objectives and prerequisites and ends with 3–5 exercises,
each with a folded solution whose code runs (and checks itself) in the notebook tests."""

import re
import tomllib
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOK = tomllib.loads((ROOT / "book.toml").read_text())
CHAPTERS = [ROOT / "notebooks" / f"{c}.md" for c in BOOK["chapters"]]
LABELS = set(re.findall(r"^\(([\w-]+)\)=\s*$", (ROOT / "notebooks" / "preliminaries.md").read_text(), flags=re.M))


def sections(text):
    return re.findall(r"^## (.+)$", text, flags=re.M)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_objectives_and_prerequisites_open_the_chapter(chapter):
    text = chapter.read_text()
    titles = sections(text)
    assert "Learning objectives" in titles[:4], f"{chapter.name}: no '## Learning objectives' near the top"
    block = text.split("## Learning objectives", 1)[1].split("\n## ", 1)[0]
    assert 3 <= len(re.findall(r"^- ", block, flags=re.M)) <= 8
    assert "**Prerequisites:**" in block
    if chapter.stem != "preliminaries":
        links = re.findall(r"\]\(#([\w-]+)\)", block)
        assert links and set(links) <= LABELS, f"{chapter.name}: prerequisites must link preliminaries labels"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_exercises_have_running_solutions(chapter):
    notebook = jupytext.read(chapter)
    exercises, solutions, open_solution, code_in = [], {}, None, 0
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            exercises += re.findall(r"```\{exercise\}\s*\n:label: ([\w-]+)", cell.source)
            for match in re.finditer(r"```\{solution-(start|end)\}\s*([\w-]*)", cell.source):
                if match.group(1) == "start":
                    open_solution, code_in = match.group(2), 0
                else:
                    solutions[open_solution], open_solution = code_in, None
        elif open_solution is not None:
            code_in += 1
            assert "assert" in cell.source, f"{chapter.name}: solution {open_solution} does not check its answer"
    assert 3 <= len(exercises) <= 5, f"{chapter.name}: {len(exercises)} exercises"
    assert set(exercises) == set(solutions), f"{chapter.name}: exercises and solutions differ"
    assert all(solutions[label] >= 1 for label in exercises), f"{chapter.name}: a solution without code"
