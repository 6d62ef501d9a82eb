"""Sphinx extension: figures carry the paper's numbers, and every image has alt text.

A chapter has one section per paper figure or table, titled with the paper's number ("Fig. 13 —
h-convergence", "Table 4 — Newton iterations"). The book does not number its own figures
(``numfig = False``: numbering across the book would caption the paper's Fig. 1 as "Fig. 7");
instead each figure's caption is prefixed with the number of the section it stands in, so the
page shows "Fig. 13. h-convergence of …" beside the paper's Fig. 13. Figures in other sections
keep their caption as written. Every image inside a figure gets its caption as alt text
(myst-nb would leave the image's hashed file name).
"""

import re

from docutils import nodes

PAPER_NUMBER = re.compile(r"^((?:Figs?\.|Tables?|Tab\.)\s*[0-9][0-9a-z]*(?:\s*(?:[–,-]|and)\s*[0-9][0-9a-z]*)*)")


def paper_number(title: str) -> str | None:
    """The leading paper number of a section title ("Fig. 13", "Figs. 3–4", "Table 2"), or None."""
    match = PAPER_NUMBER.match(title.strip())
    return match.group(1).strip() if match else None


def _section_title(node) -> str | None:
    while node is not None:
        if isinstance(node, nodes.section) and node.children and isinstance(node[0], nodes.title):
            return node[0].astext()
        node = node.parent
    return None


def number_figures(app, doctree):
    for figure in doctree.findall(nodes.figure):
        captions = [c for c in figure.children if isinstance(c, nodes.caption)]
        number = paper_number(_section_title(figure.parent) or "")
        if captions and number and not captions[0].astext().startswith(number):
            captions[0].insert(0, nodes.Text(f"{number}. "))
        alt = captions[0].astext() if captions else None
        for image in figure.findall(nodes.image):
            if alt and (not image.get("alt") or re.fullmatch(r"[0-9a-f]{16,}.*", image["alt"])):
                image["alt"] = alt


def setup(app):
    app.connect("doctree-read", number_figures)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
