"""Every number a chapter computes reaches its prose through ``glue``.

The rule, enforced on the prose of every chapter (markdown outside code cells, math, code spans,
roles and directive options): a number written with two or more significant digits after
removing leading zeros (``1.43``, ``3.4``, ``0.25``, ``5.4e-8``, ``5.4·10⁻⁸``) is either glued
from a cell (``{glue:text}`name:.3g```, which this test never sees as a number), or it is the
paper's: then its sentence names the source, with one of the words ``paper``, ``authors``,
``printed``, ``published`` or a table of the paper (``Table 3``). References to sections,
equations and figures (``Sect. 4.2``, ``eq. (3.12)``, ``Fig. 10``) and version numbers are not
values. Parameters and data belong in math (``$h = 2.5\\cdot 10^{-3}$``), where this rule does
not look: they are inputs, not results.
"""

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOK = tomllib.loads((ROOT / "book.toml").read_text())
CHAPTERS = [ROOT / "notebooks" / f"{c}.md" for c in BOOK["chapters"]]

SOURCE_WORDS = re.compile(r"\b(paper|paper's|authors|authors'|printed|published)\b|\bTables?\s+\d", re.IGNORECASE)
REFERENCE_BEFORE = re.compile(
    r"(Sect·|Sects·|Section|Sections|Fig·|Figs·|Figure|Table|Tables|Tab·|eq·|eqs·|Eq·|Eqs·|"
    r"Theorem|Prop·|Proposition|Lemma|Remark|Corollary|Definition|Algorithm|App·|Appendix|version|v|"
    r"Python|numpy|NumPy|Exudyn|Octave|Chromium|JupyterLab)\s*\(?(?:[\d.]+\s*[–-]\s*)?$"
)
NUMBER = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)(?:\s*(?:e|E|·10\^?|×10\^?|·\s*10|× 10)\s*([−\-+]?\d+|[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+))?(?![\w.]*\.\d)"
)


def prose(text: str) -> str:
    """The chapter's prose: markdown with code cells, fenced blocks, math, code spans, roles,
    labels, directive options, comments and link targets blanked out (line numbers kept)."""

    def blank(match):
        return re.sub(r"[^\n]", " ", match.group(0))

    text = re.sub(r"^---\n.*?\n---\n", blank, text, count=1, flags=re.S)  # jupytext header
    text = re.sub(r"^(`{3,}|~{3,}).*?^\1\s*$", blank, text, flags=re.S | re.M)  # fenced blocks
    text = re.sub(r"<!--.*?-->", blank, text, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$", blank, text, flags=re.S)
    text = re.sub(r"(?<!\\)\$[^$\n]+?(?<!\\)\$", blank, text)
    text = re.sub(r"\{[\w:-]+\}`[^`]*`", blank, text)  # roles, glue included
    text = re.sub(r"`[^`\n]*`", blank, text)
    text = re.sub(r"\]\([^)]*\)", blank, text)  # link targets
    text = re.sub(r"^\([\w:-]+\)=\s*$", blank, text, flags=re.M)  # labels
    text = re.sub(r"^:[\w-]+:.*$", blank, text, flags=re.M)  # directive options
    text = re.sub(r"https?://\S+|doi:\S+|arXiv:\S+", blank, text)
    # abbreviations do not end a sentence: "Sect. 4.2" keeps its number with its reference word
    return re.sub(r"\b(Sects?|Figs?|Tab|[Ee]qs?|Prop|App|e\.g|i\.e|cf|resp|approx|vs|Ref|No)\.", r"\1·", text)


def significant_digits(mantissa: str) -> int:
    digits = mantissa.replace(".", "").lstrip("0")
    if "." in mantissa:
        return len(digits)
    return len(digits.rstrip("0")) or 1


def unsourced_numbers(text: str):
    """(line, sentence, number) for every computed-looking number of the rule without a source."""
    body = prose(text)
    hits = []
    for paragraph in re.finditer(r"(?:[^\n]+\n?)+", body):
        for sentence in re.finditer(r"(?:[^.;!?]|\.(?=\d))*(?:\.(?!\d)|[;!?]|$)", paragraph.group(0)):
            s = sentence.group(0)
            for match in NUMBER.finditer(s):
                mantissa, exponent = match.group(1), match.group(2)
                if "." not in mantissa and exponent is None:
                    continue  # integers: counts, sizes, indices
                if significant_digits(mantissa) < 2:
                    continue
                if REFERENCE_BEFORE.search(s[: match.start()].rstrip()):
                    continue
                if SOURCE_WORDS.search(s):
                    continue
                line = body.count("\n", 0, paragraph.start() + sentence.start() + match.start()) + 1
                hits.append((line, " ".join(s.split()), match.group(0)))
    return hits


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_numbers_in_prose_are_glued_or_sourced(chapter):
    hits = unsourced_numbers(chapter.read_text())
    listing = "\n".join(f"  line {line}: {number!r} in: {sentence[:160]}" for line, sentence, number in hits)
    assert not hits, (
        f"{chapter.name}: {len(hits)} number(s) in the prose are neither glued from a cell nor marked as the "
        f"paper's (see the rule in {Path(__file__).name}):\n{listing}"
    )


def test_the_rule_sees_what_it_should():
    text = (
        "The ratio is 3.4 here. The paper reports 0.25 for it. See Sect. 4.2 and Fig. 10.\n"
        "We measured {glue:text}`ratio:.3g` and $h = 2.5$; 1e-9 and 0.5 are one-digit values.\n"
        "An error of 5.4e-8 remains.\n\n```{code-cell} ipython3\nx = 1.43\n```\n"
    )
    assert [(line, number) for line, _, number in unsourced_numbers(text)] == [(1, "3.4"), (3, "5.4e-8")]
