"""The whole repository passes `ruff check` with the rules configured in pyproject.toml."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_check_is_clean():
    command = [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", str(ROOT)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"ruff check found problems:\n{result.stdout}{result.stderr}"
