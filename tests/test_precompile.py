"""``python -m mbslib.precompile`` (run by ``make book`` and ``make lab``) must keep working."""

import subprocess
import sys


def test_precompile_runs_as_a_module():
    out = subprocess.run([sys.executable, "-m", "mbslib.precompile"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("mbslib: numba kernels ready (")
