"""Layering of the library: an integrator consumes a system through its family's protocol and the
formulations, never a paper's system module; a system is physics and never imports an
integrator. Checked on the import statements of every module, parsed with ``ast``."""

import ast
from pathlib import Path

import pytest

import mbslib

PACKAGE = Path(mbslib.__file__).parent
RULES = {"integrators": "mbslib.systems", "systems": "mbslib.integrators"}  # layer -> what it must not import

def _is_module(name: str) -> bool:
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imported_modules(source: str) -> set[str]:
    """The modules that the ``import`` and ``from … import`` statements of ``source`` load, anywhere
    in the file (inside functions too): ``from mbslib.systems import multibody`` loads
    ``mbslib.systems`` and ``mbslib.systems.multibody``."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                raise ValueError("relative imports are not used in mbslib")
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names if _is_module(f"{node.module}.{a.name}"))
    return names


def violations(layer: str, source: str) -> set[str]:
    """Modules of the other layer that ``source`` imports (their parent packages left out)."""
    other = RULES[layer]
    found = {n for n in imported_modules(source) if n == other or n.startswith(other + ".")}
    return {n for n in found if not any(m.startswith(n + ".") for m in found)}


MODULES = sorted(path for layer in RULES for path in (PACKAGE / layer).glob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_integrators_and_systems_do_not_import_each_other(path):
    layer = path.parent.name
    found = violations(layer, path.read_text())
    assert not found, f"{layer}/{path.name} imports {sorted(found)}"


def test_every_form_of_import_is_seen():
    """A check that found nothing would pass everything."""
    source = ("import mbslib.integrators.ggl\n"
              "from mbslib.integrators import livens as L\n"
              "from mbslib.integrators.rodrigues_vi import RRState\n"
              "def f():\n    from mbslib.integrators.nonholonomic_em import step_em\n")
    assert violations("systems", source) == {"mbslib.integrators.ggl", "mbslib.integrators.livens",
                                             "mbslib.integrators.rodrigues_vi", "mbslib.integrators.nonholonomic_em"}
    assert violations("integrators", "from mbslib.systems import multibody as mb\n") == {"mbslib.systems.multibody"}
    assert violations("integrators", "from mbslib.formulations.director_triad import constraint\n") == set()
