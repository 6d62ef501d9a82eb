"""The API reference (api.md): how mbslib's docstrings render, and a check that none is left out.

1. Names that cannot be links stay text. The build is nitpicky (``-n``), so every
   cross-reference must resolve, and two kinds cannot: the type of a parameter or attribute is
   prose (``ndarray, shape (n, 3)``, ``float >= 0``) that Sphinx still splits into would-be class
   names, and names from numpy, the standard library and the other packages mbslib uses have no
   inventory in a site built offline. A reference written with a role (``:class:`...```,
   ``:func:`...```) to anything else, mbslib included, still has to resolve.
2. Attributes documented together (``q, v : ndarray``) get one entry each, as napoleon already
   does for parameters; a single ``:ivar q, v:`` field would read ``q,`` as the type of ``v``.
   The fields of a ``NamedTuple``, documented in its Attributes section, get no second entry
   reading "Alias for field number 0". The docstring of a property, attribute or constant is
   shown as written: napoleon would take the text before a first colon as its type
   (``l = 3a/4 [m]: distance from the tip ...``). A constant whose value takes more than a line
   to print (a registry of compiled kernels, a Butcher tableau) is shown without it.

And the reference stays complete: a module of mbslib that the page does not document is a
warning, so it fails the book build.
"""

import builtins
import pkgutil
import re

from sphinx import addnodes
from sphinx.util import logging

import mbslib

PAGE = "api"
logger = logging.getLogger(__name__)

EXTERNAL = ("numpy.", "np.", "scipy.", "numba.", "matplotlib.", "ipywidgets.", "exudyn.", "collections.",
            "typing.", "functools.", "dataclasses.", "pathlib.")


def text_for_types_and_external_names(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"]
    docstring_type = node.get("refspecific") and node["reftype"] in ("class", "obj")
    external = target.startswith(EXTERNAL) or hasattr(builtins, target)
    return contnode if docstring_type or external else None


FIELD = re.compile(r"^:(ivar|vartype) ([^:]+): ?(.*)$")


def one_field_per_attribute(app, what, name, obj, options, lines):
    out, i = [], 0
    while i < len(lines):
        match = FIELD.match(lines[i])
        if not match or "," not in match[2]:
            out.append(lines[i])
            i += 1
            continue
        # The field's body: its first line and the indented lines (and blank lines) after it.
        end = i + 1
        while end < len(lines) and (lines[end].startswith(" ") or (not lines[end].strip()
                                                                   and end + 1 < len(lines)
                                                                   and lines[end + 1].startswith(" "))):
            end += 1
        role, names, first = match[1], match[2], match[3]
        for attribute in (n.strip() for n in names.split(",")):
            out.append(f":{role} {attribute}: {first}".rstrip())
            out.extend(lines[i + 1:end])
        i = end
    lines[:] = out


VALUES = ("attribute", "data", "property")


def keep_as_written(app, what, name, obj, options, lines):
    if what in VALUES:
        app.env.temp_data.setdefault("apiref_written", {})[name] = list(lines)


def restore_as_written(app, what, name, obj, options, lines):
    written = app.env.temp_data.get("apiref_written", {}).pop(name, None)
    if written is not None:
        lines[:] = written


LONGEST_VALUE = 100  # characters


def drop_long_values(app, doctree):
    for desc in doctree.findall(addnodes.desc):
        if desc.get("objtype") not in ("data", "attribute"):
            continue
        for annotation in list(desc.findall(addnodes.desc_annotation)):
            value = annotation.astext().strip()
            if value.startswith("=") and len(value) > LONGEST_VALUE:
                annotation.parent.remove(annotation)


def skip_namedtuple_fields(app, what, name, obj, skip, options):
    return True if (getattr(obj, "__doc__", None) or "").startswith("Alias for field number") else None


def public_modules() -> set[str]:
    found = pkgutil.walk_packages(mbslib.__path__, "mbslib.")
    return {"mbslib"} | {m.name for m in found if not any(p.startswith("_") for p in m.name.split("."))}


def every_module_documented(app, env):
    if PAGE not in env.found_docs:
        return
    documented = {name for name, entry in env.get_domain("py").modules.items() if entry.docname == PAGE}
    for name in sorted(public_modules() - documented):
        logger.warning("module %s is missing from the API reference (%s.md)", name, PAGE, location=PAGE)


def setup(app):
    app.setup_extension("sphinx.ext.napoleon")
    app.connect("env-check-consistency", every_module_documented)
    app.connect("missing-reference", text_for_types_and_external_names)
    # napoleon rewrites docstrings at priority 500: keep before it, restore and split after it.
    app.connect("autodoc-process-docstring", keep_as_written, priority=400)
    app.connect("autodoc-process-docstring", restore_as_written, priority=600)
    app.connect("autodoc-process-docstring", one_field_per_attribute, priority=600)
    app.connect("autodoc-skip-member", skip_namedtuple_fields)
    app.connect("doctree-read", drop_long_values)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
