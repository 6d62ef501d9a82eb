"""The README's example runs as printed."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_example_runs(capsys):
    code = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[0]  # the second needs a cluster
    exec(compile(code, "README.md", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) >= 10 and all(" ok " in line or " unhealthy " in line for line in lines)
