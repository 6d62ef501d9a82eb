"""No chapter passes or fails on a measured time: CPU times go to ``Scorecard.timing``."""

import ast
import re
import tomllib
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOK = tomllib.loads((ROOT / "book.toml").read_text())
CHAPTERS = [ROOT / "notebooks" / f"{c}.md" for c in BOOK["chapters"]]
TIME_WORDS = re.compile(r"cpu|wall_time|perf_counter|process_time|µs|seconds|time_interleaved|Timing", re.IGNORECASE)


def verdicts(source: str):
    """The source of every ``….check(…)`` call and ``assert`` statement of a code cell."""
    lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    code = "\n".join(lines)
    for node in ast.walk(ast.parse(code)):
        is_check = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "check"
        if is_check or isinstance(node, ast.Assert):
            yield node.lineno, ast.get_source_segment(code, node)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_no_check_or_assert_on_a_measured_time(chapter):
    hits = []
    for index, cell in enumerate(jupytext.read(chapter).cells):
        if cell.cell_type == "code":
            hits += [(index, " ".join(call.split())[:150]) for _, call in verdicts(cell.source)
                     if TIME_WORDS.search(call)]
    assert not hits, f"{chapter.name}: verdicts on measured time (use card.timing):\n" + "\n".join(
        f"  cell {index}: {call}" for index, call in hits)


def test_the_guard_sees_a_timing_verdict():
    source = 'card.check("Fig. 4", "CPU(RV)/CPU(Rxyz)", cpu["RV"] / cpu["Rxyz"], upper=1.0)\nassert ok\n'
    assert [line for line, call in verdicts(source) if TIME_WORDS.search(call)] == [1]
