"""Sphinx extension: the ``{scorecard}`` directive renders every chapter's check records.

The chapters write their records (mbslib.checks) while they execute during the read phase; the
directive leaves a placeholder that is filled in after all documents were read, and the
scorecard page is re-read on every build so that it never shows stale records.
"""

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from mbslib.checks import load_records

logger = logging.getLogger(__name__)


class scorecard_placeholder(nodes.General, nodes.Element):
    pass


class ScorecardDirective(SphinxDirective):
    def run(self):
        return [scorecard_placeholder()]


def _table(rows, header):
    table = nodes.table(classes=["scorecard"])
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
            entry = nodes.entry()
            entry += nodes.paragraph(text=str(cell))
            row += entry
        target += row
    return table


def _measured(value):
    return str(value) if isinstance(value, bool) else f"{value:.4g}"


def fill_scorecard(app, doctree, docname):
    config = app.config
    records = load_records(config.scorecard_dir, config.scorecard_chapters)
    status_text = {"pass": "✔ reproduced", "discrepancy": "≠ does not reproduce", "fail": "✘ FAILED"}
    for node in list(doctree.findall(scorecard_placeholder)):
        content = []
        all_records = [r for recs in records.values() if recs for r in recs]
        counts = {s: sum(r.status == s for r in all_records) for s in status_text}
        content.append(nodes.paragraph(text=(
            f"{len(all_records)} checks in {len(records)} chapters: {counts['pass']} reproduced, "
            f"{counts['discrepancy']} documented discrepancies, {counts['fail']} failed.")))
        for chapter, recs in records.items():
            section = nodes.section(ids=[f"scorecard-{chapter}"])
            title = nodes.title()
            title += nodes.reference(text=chapter, refuri=app.builder.get_relative_uri(docname, chapter))
            section += title
            if recs is None:
                logger.warning(f"scorecard: no check records for chapter {chapter!r} in {config.scorecard_dir}; "
                               "the execution cache and the records are out of step: run `make clean` and rebuild")
                section += nodes.paragraph(text="No records.")
            else:
                rows = [(r.figure, r.claim, _measured(r.measured), r.criterion, status_text[r.status], r.note)
                        for r in recs]
                section += _table(rows, ("figure/table", "claim", "measured", "paper's claim", "status", "note"))
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
