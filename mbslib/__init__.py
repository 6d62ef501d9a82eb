"""mbslib: the shared library of *mbsbook*.

Structure-preserving time integration for rigid-body and multibody dynamics, organised by
concept: rotations, quaternions, the sphere S², discrete gradients, Newton's method, the
simulation driver, diagnostics, convergence analysis, plotting, widgets and the book's
scorecard of checks.
"""

import hashlib
import os
import shutil
from pathlib import Path

__version__ = "0.1.0"


def _numba_cache_dir() -> str:
    """One numba cache directory per version of the mbslib sources.

    Numba keys its on-disk cache on the file of each compiled function only: after an edit to a
    kernel in another module, a cached caller would keep running the old machine code. Keying
    the directory on a hash of all sources makes every edit recompile; the directories of
    earlier versions are removed.
    """
    sources = sorted(Path(__file__).parent.rglob("*.py"))
    digest = hashlib.sha1(b"".join(p.read_bytes() for p in sources)).hexdigest()[:16]
    root = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mbsbook"
    current = root / f"numba-{digest}"
    if not current.exists():
        for old in root.glob("numba-*"):
            shutil.rmtree(old, ignore_errors=True)
    return str(current)


if "NUMBA_CACHE_DIR" not in os.environ:  # a user's own choice wins
    os.environ["NUMBA_CACHE_DIR"] = _numba_cache_dir()
    import numba.core.config

    numba.core.config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]


def quick() -> bool:
    """True when the book runs in quick mode (environment variable ``MBS_QUICK=1``).

    Quick mode shortens horizons and step-size ladders so that every code path of a chapter
    runs in seconds; the full book uses the paper's values. Never keyed on ``CI``.
    """
    value = os.environ.get("MBS_QUICK", "0").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"MBS_QUICK must be 0 or 1, got {value!r}")
