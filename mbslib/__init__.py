"""mbslib: the shared library of *mbsbook*.

Structure-preserving time integration for rigid-body and multibody dynamics, organised by
concept: rotations, quaternions, the sphere S², discrete gradients, Newton's method, the
simulation driver, diagnostics, convergence analysis, plotting, widgets and the book's
scorecard of checks.
"""

import os

__version__ = "0.1.0"


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
