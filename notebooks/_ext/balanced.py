"""Sphinx extension: the chapters are read (and so executed) one per process, longest first.

myst-nb executes a chapter while Sphinx reads it. Sphinx's parallel read splits the documents, in
alphabetical order, into as many fixed chunks as there are processes, and each chunk is read by
one process: with ``-j 2`` the five paper chapters ran one after another in the first process
while the second finished its short chunk and idled. Here every document is a chunk of its own
and the chunks start in the order of ``start_order`` in ``book.toml`` (longest first; the rest
follow in Sphinx's order), so that both processes stay busy until the end of the build.
"""

import tomllib
from pathlib import Path

import sphinx.builders

START_ORDER = tomllib.loads((Path(__file__).resolve().parents[2] / "book.toml").read_text())["execution"]["start_order"]


def one_document_per_chunk(docnames, nproc, maxbatch=10):
    """The chunks of a parallel read or write, one document each, listed so that Sphinx *starts*
    them in the order of ``START_ORDER`` (then the rest). Sphinx starts the first ``nproc`` chunks
    at once and queues the others in a dict it empties with ``popitem()``, last in first out: the
    queued chunks are therefore listed in reverse."""
    rank = {name: i for i, name in enumerate(START_ORDER)}
    ordered = sorted(docnames, key=lambda name: rank.get(name, len(rank)))
    return [[name] for name in ordered[:nproc] + ordered[nproc:][::-1]]


def setup(app):
    # Sphinx's builders call the name they imported from sphinx.util.parallel (Sphinx pinned in
    # pyproject.toml; tests/test_site.py checks that the replacement is the one in use).
    sphinx.builders.make_chunks = one_document_per_chunk
    return {"parallel_read_safe": True, "parallel_write_safe": True}
