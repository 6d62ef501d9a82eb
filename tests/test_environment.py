"""pyproject.toml and environment.yml list the same packages with the same pins."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _pins(specs, separator):
    out = {}
    for spec in specs:
        name, version = re.split(separator, spec.strip())
        out[name.lower().replace("_", "-")] = version
    return out


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pyproject = _pins(project["dependencies"], "==")
    for extra in project["optional-dependencies"].values():
        pyproject.update(_pins(extra, "=="))
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda, pip = {}, {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            pip.update(_pins(dep["pip"], "=="))
        elif dep not in ("pip",) and not dep.startswith("python="):
            conda.update(_pins([dep], "="))
    assert {**conda, **pip} == pyproject
