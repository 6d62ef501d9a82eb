"""mbslib: the shared library of *mbsbook*.

Structure-preserving time integration for rigid-body and multibody dynamics, organised by
concept: rotations, quaternions, the sphere S², discrete gradients, Newton's method, the
simulation driver, diagnostics, convergence analysis, plotting, widgets and the book's
scorecard of checks.
"""

import hashlib
import os
from pathlib import Path

__version__ = "0.1.0"


def fingerprint() -> str:
    """Hash of the mbslib sources (paths and contents), the one version key of the library.

    It names the numba cache directory (numba keys its on-disk cache on the file of each
    compiled function only, so after an edit to a kernel in another module a cached caller
    would keep running the old machine code) and the book's execution cache (jupyter-cache keys
    a chapter on its own code only, so a library change must re-execute the book).
    """
    package = Path(__file__).parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _numba_cache_dir() -> str:
    """One numba cache directory per version of the mbslib sources, under ``~/.cache/mbsbook``.

    Nothing is deleted: clones or versions of the library with other sources keep their own
    directories (``make clean-cache`` removes them all).
    """
    root = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mbsbook"
    return str(root / f"numba-{fingerprint()}")


def _install_numba_cache() -> None:
    """Point numba's on-disk cache at :func:`_numba_cache_dir`, keyed by the path of each source
    file *inside* mbslib (numba's own locator keys on the absolute path): a second clone with
    the same sources loads the kernels the first one compiled instead of compiling again."""
    import numba.core.config
    from numba.core import caching

    package = Path(__file__).resolve().parent

    class PackageCacheLocator(caching.UserProvidedCacheLocator):
        def __init__(self, py_func, py_file):
            super().__init__(py_func, py_file)
            relative = Path(py_file).resolve().parent.relative_to(package)
            self._cache_path = os.path.join(numba.core.config.CACHE_DIR, "mbslib", *relative.parts)

        @classmethod
        def from_function(cls, py_func, py_file):
            if not Path(py_file).resolve().is_relative_to(package):
                return None
            return super().from_function(py_func, py_file)

    numba.core.config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]
    if PackageCacheLocator.__name__ not in {c.__name__ for c in caching.CacheImpl._locator_classes}:
        caching.CacheImpl._locator_classes.insert(0, PackageCacheLocator)


def _chosen_by_user(directory: str | None) -> bool:
    """True for a ``NUMBA_CACHE_DIR`` the user set; False if unset or set by a process that
    imported mbslib (a Jupyter kernel started by Sphinx or pytest inherits the variable; it may
    belong to another version of the library)."""
    return directory is not None and Path(directory).parent.name != "mbsbook"


if not _chosen_by_user(os.environ.get("NUMBA_CACHE_DIR")):
    os.environ["NUMBA_CACHE_DIR"] = _numba_cache_dir()
_install_numba_cache()  # also under a user's directory: the kernels are keyed inside mbslib


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


_ENTRY_POINTS = ("solve", "applicable", "refusals", "METHODS")


def __getattr__(name: str):
    """``mbslib.solve``, ``mbslib.applicable``, ``mbslib.refusals`` and ``mbslib.METHODS``, the entry
    point of :mod:`mbslib.methods`, imported on first use (it imports every integrator)."""
    if name in _ENTRY_POINTS:
        from mbslib import methods

        return getattr(methods, name)
    raise AttributeError(f"module 'mbslib' has no attribute {name!r}")
