"""Sphinx extension: the built site loads nothing from outside itself.

After an HTML build every page and stylesheet is scanned for resources fetched from another
host: ``src``/``href`` of scripts, stylesheets, images, frames and media, CSS ``url(…)`` and
``@import``, and URLs written into inline scripts. Links a reader clicks (``<a href>``) and
plain text are allowed. Any such resource fails the build (so ``make book`` fails), naming the
page and the URL.
"""

import re
from pathlib import Path

from sphinx.errors import ExtensionError

RESOURCE_TAG = re.compile(
    r"<(script|link|img|iframe|source|video|audio|embed|object)\b[^>]*?\b(?:src|href|data)\s*=\s*"
    r"[\"']((?:https?:)?//[^\"']+)", re.IGNORECASE)
CSS_URL = re.compile(r"(?:url\(\s*[\"']?|@import\s+[\"'])((?:https?:)?//[^\"')\s]+)", re.IGNORECASE)
INLINE_SCRIPT = re.compile(r"<script\b(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.IGNORECASE | re.DOTALL)
SCRIPT_URL = re.compile(r"[\"'`]((?:https?:)?//[^\"'`\s]+)")


def external_resources(html: str) -> list[str]:
    """The URLs of resources a page would fetch from another host."""
    found = [m.group(2) for m in RESOURCE_TAG.finditer(html)]
    found += [m.group(1) for m in CSS_URL.finditer(html)]
    for script in INLINE_SCRIPT.finditer(html):
        found += [m.group(1) for m in SCRIPT_URL.finditer(script.group(1))]
    return found


def check_site(outdir) -> dict[str, list[str]]:
    """Map each page or stylesheet under ``outdir`` that loads something external to its URLs."""
    offenders = {}
    for path in sorted(Path(outdir).rglob("*")):
        if path.suffix == ".html":
            urls = external_resources(path.read_text(errors="replace"))
        elif path.suffix == ".css":
            urls = [m.group(1) for m in CSS_URL.finditer(path.read_text(errors="replace"))]
        else:
            continue
        if urls:
            offenders[str(path.relative_to(outdir))] = sorted(set(urls))
    return offenders


def check_after_build(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    offenders = check_site(app.outdir)
    if offenders:
        listing = "\n".join(f"  {page}: {', '.join(urls[:5])}" for page, urls in offenders.items())
        raise ExtensionError(f"the site loads resources from outside itself (it must work offline):\n{listing}")


def setup(app):
    # After sphinx-mathjax-offline and the theme have copied their assets.
    app.connect("build-finished", check_after_build, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
