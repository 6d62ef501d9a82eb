"""Sphinx extension: the ``{scorecard}`` directive renders every chapter's check records.

The chapters write their records (mbslib.checks) while they execute during the read phase; the
directive leaves a placeholder that is filled in after all documents were read, and the
scorecard page is re-read on every build so that it never shows stale records.

The page opens with a summary (chapters × kinds of evidence), then lists every discrepancy, then
one table per chapter. Every row links to the chapter section whose title starts with the row's
figure or table ("Fig. 4 — …"), found among the section labels of the chapter.
"""

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from mbslib.checks import load_records

logger = logging.getLogger(__name__)

STATUS_TEXT = {
    "pass": "✔ holds",
    "fail": "✘ FAILED",
    "discrepancy": "≠ does not reproduce",
    "held": "⏱ held",
    "not held": "⏱ did not hold",
}
KIND_TEXT = {
    "claim": "paper's claim",
    "reference": "vs independent reference",
    "timing": "timing on this machine",
    "discrepancy": "discrepancy",
}
SUMMARY_COLUMNS = (
    ("paper's claim reproduced", lambda r: r.kind == "claim" and r.status == "pass"),
    ("vs independent reference", lambda r: r.kind == "reference" and r.status == "pass"),
    ("discrepancy: the paper's", lambda r: r.kind == "discrepancy" and r.source == "paper"),
    ("discrepancy: ours", lambda r: r.kind == "discrepancy" and r.source == "ours"),
    ("timing: held here", lambda r: r.status == "held"),
    ("timing: did not hold here", lambda r: r.status == "not held"),
    ("failed", lambda r: r.status == "fail"),
)


class scorecard_placeholder(nodes.General, nodes.Element):
    pass


class ScorecardDirective(SphinxDirective):
    def run(self):
        return [scorecard_placeholder()]


def _cell(content):
    entry = nodes.entry()
    if isinstance(content, nodes.Node):
        paragraph = nodes.paragraph()
        paragraph += content
        entry += paragraph
    else:
        entry += nodes.paragraph(text=str(content))
    return entry


def _table(rows, header, classes=()):
    table = nodes.table(classes=["scorecard", *classes])
    group = nodes.tgroup(cols=len(header))
    table += group
    for _ in header:
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    group += head
    body = nodes.tbody()
    group += body
    for cells, target in [(header, head)] + [(r, body) for r in rows]:
        row = nodes.row()
        for cell in cells:
            row += _cell(cell)
        target += row
    return table


def _measured(value):
    return str(value) if isinstance(value, bool) else f"{value:.4g}"


def _section_anchors(app, chapter):
    """Map each section title of ``chapter`` to its URI fragment (from the std domain labels)."""
    anchors = {}
    for _label, (docname, labelid, sectname) in app.env.domaindata["std"]["labels"].items():
        if docname == chapter and sectname:
            anchors[sectname] = labelid
    return anchors


def _figure_link(app, fromdoc, chapter, figure, anchors):
    """A reference to the section of ``chapter`` whose title starts with ``figure``."""
    uri = app.builder.get_relative_uri(fromdoc, chapter)
    for title, labelid in anchors.items():
        head = title.split("—")[0].strip()
        if head == figure or title.startswith(figure + " ") or figure in [p.strip() for p in head.split(",")]:
            uri = f"{uri}#{labelid}"
            break
    return nodes.reference(text=figure, refuri=uri)


def _status(record):
    text = STATUS_TEXT[record.status]
    if record.kind == "discrepancy":
        text += f" ({'the paper' if record.source == 'paper' else 'this implementation'})"
    if record.kind == "reference":
        text += f" vs {record.source}"
    return text


def fill_scorecard(app, doctree, docname):
    config = app.config
    records = load_records(config.scorecard_dir, config.scorecard_chapters)
    titles = {c: (app.env.titles[c].astext() if c in app.env.titles else c) for c in records}
    for node in list(doctree.findall(scorecard_placeholder)):
        content = []
        all_records = [r for recs in records.values() if recs for r in recs]
        counts = {name: sum(map(test, all_records)) for name, test in SUMMARY_COLUMNS}
        summary_rows = []
        for chapter, recs in records.items():
            link = nodes.reference(text=titles[chapter], refuri=f"#scorecard-{chapter}")
            summary_rows.append([link, *(sum(map(test, recs or [])) for _, test in SUMMARY_COLUMNS), len(recs or [])])
        summary_rows.append(["all chapters", *counts.values(), len(all_records)])
        intro = nodes.section(ids=["scorecard-summary"])
        intro += nodes.title(text="Summary")
        intro += _table(summary_rows, ("chapter", *(name for name, _ in SUMMARY_COLUMNS), "rows"), ["summary"])
        content.append(intro)

        anchors = {c: _section_anchors(app, c) for c in records}
        discrepancies = [r for r in all_records if r.kind == "discrepancy" or r.status == "fail"]
        section = nodes.section(ids=["scorecard-discrepancies"])
        section += nodes.title(text="Discrepancies")
        rows = [(titles[r.chapter], _figure_link(app, docname, r.chapter, r.figure, anchors[r.chapter]), r.claim,
                 _measured(r.measured), r.criterion, _status(r), r.note) for r in discrepancies]
        section += _table(rows, ("chapter", "figure/table", "claim", "measured", "claim's criterion", "whose", "why"),
                          ["discrepancies"])
        content.append(section)

        for chapter, recs in records.items():
            section = nodes.section(ids=[f"scorecard-{chapter}"])
            title = nodes.title()
            title += nodes.reference(text=titles[chapter], refuri=app.builder.get_relative_uri(docname, chapter))
            section += title
            if recs is None:
                logger.warning(f"scorecard: no check records for chapter {chapter!r} in {config.scorecard_dir}; "
                               "the execution cache and the records are out of step: run `make clean` and rebuild")
                section += nodes.paragraph(text="No records.")
            else:
                rows = [(_figure_link(app, docname, chapter, r.figure, anchors[chapter]), r.claim, KIND_TEXT[r.kind],
                         _measured(r.measured), r.criterion, r.slack, _status(r), r.note) for r in recs]
                section += _table(rows, ("figure/table", "claim", "kind", "measured", "criterion", "slack", "status",
                                         "note"), ["rows"])  # filtered by _static/mbsbook.js
            content.append(section)
        node.replace_self(content)


def always_reread_scorecard(app, env, added, changed, removed):
    return ["scorecard"] if "scorecard" in env.found_docs else []


def setup(app):
    app.add_config_value("scorecard_dir", "", "env")
    app.add_config_value("scorecard_chapters", [], "env")
    app.add_node(scorecard_placeholder)
    app.add_directive("scorecard", ScorecardDirective)
    app.connect("env-get-outdated", always_reread_scorecard)
    app.connect("doctree-resolved", fill_scorecard)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
