"""The notebook test machinery itself: a chapter whose check fails makes its test fail.

Each test writes a tiny MyST chapter under _build/ (inside the repository, so the root
conftest's collection hook applies), runs pytest on it in a subprocess and inspects the result.
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

```{code-cell} ipython3
from mbslib.checks import Scorecard
card = Scorecard("machinery")
```

```{code-cell} ipython3
card.check("Fig. 1", "increments at round-off", %s, upper=1e-12)
```
"""


def run_chapter(tmp_name: str, measured: str, checks_dir: Path) -> subprocess.CompletedProcess:
    folder = ROOT / "_build" / "machinery"
    folder.mkdir(parents=True, exist_ok=True)
    chapter = folder / f"{tmp_name}.md"
    chapter.write_text(HEADER % measured)
    env = dict(os.environ, MBS_CHECKS_DIR=str(checks_dir), MBS_QUICK="1")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--no-header", str(chapter)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )


def test_failing_check_fails_the_notebook_test(tmp_path):
    result = run_chapter("failing_check", "1e-3", tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "does not hold" in result.stdout
    assert "1 failed" in result.stdout


def test_passing_check_passes_and_is_recorded(tmp_path):
    result = run_chapter("passing_check", "1e-15", tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "passed" in result.stdout
    assert '"status": "pass"' in (tmp_path / "machinery.json").read_text()
