"""The library's caches: one fingerprint, nothing deleted, kernels shared between clones."""

import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import mbslib

ROOT = Path(__file__).resolve().parents[1]


def _run(code, cwd, cache_home):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(XDG_CACHE_HOME=str(cache_home), PYTHONPATH=str(cwd))
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          check=True).stdout


def test_fingerprint_serves_library_and_book():
    conf = (ROOT / "notebooks" / "conf.py").read_text()
    assert "from mbslib import fingerprint" in conf and "hashlib" not in conf
    assert len(mbslib.fingerprint()) == 16 and mbslib.fingerprint() == mbslib.fingerprint()


def test_importing_keeps_other_versions_and_clones_share_compiled_kernels(tmp_path):
    cache_home = tmp_path / "cache"
    other = cache_home / "mbsbook" / "numba-0123456789abcdef"
    other.mkdir(parents=True)
    (other / "keep").write_text("another clone's kernels")
    clones = []
    for name in ("a", "b"):
        clone = tmp_path / name
        shutil.copytree(ROOT / "mbslib", clone / "mbslib", ignore=shutil.ignore_patterns("__pycache__"))
        clones.append(clone)
    probe = "import mbslib, mbslib.kernels as k, numpy as np; k.sinc(np.float64(0.3)); print(mbslib.fingerprint())"
    fingerprint = _run(probe, clones[0], cache_home).strip()
    folder = cache_home / "mbsbook" / f"numba-{fingerprint}" / "mbslib"
    first = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    assert any(name.startswith("kernels.sinc") for name in first)
    _run(probe, clones[1], cache_home)  # the second clone, at another path, loads what the first compiled
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == first
    assert (other / "keep").exists()


def test_a_process_started_by_one_that_imported_mbslib_shares_its_kernels(tmp_path):
    """Sphinx and pytest import mbslib and then start the chapters' Jupyter kernels, which inherit
    ``NUMBA_CACHE_DIR``: they must still key the kernels inside mbslib (as the precompilation did),
    not on the clone's absolute path, and never use the directory of another library version."""
    probe = "import mbslib.kernels as k, numpy as np; k.sinc(np.float64(0.3))"
    parent = f"import mbslib, subprocess, sys; subprocess.run([sys.executable, '-c', {probe!r}], check=True)"
    env_of_another_version = {"NUMBA_CACHE_DIR": str(tmp_path / "mbsbook" / "numba-0123456789abcdef")}
    for code, extra in ((parent, {}), (probe, env_of_another_version)):
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        env.update(XDG_CACHE_HOME=str(tmp_path), PYTHONPATH=str(ROOT), **extra)
        subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True)
    assert [p.name for p in (tmp_path / "mbsbook").iterdir()] == [f"numba-{mbslib.fingerprint()}"]
    assert [p.name for p in (tmp_path / "mbsbook" / f"numba-{mbslib.fingerprint()}").iterdir()] == ["mbslib"]


def test_a_kernel_called_with_a_bound_formulation_is_compiled_once_for_all_processes(tmp_path):
    """:func:`~mbslib.formulations.compiled.bind_form`: the second process loads the kernel the
    first one compiled (with the bundle of dispatchers it would compile again and again)."""
    probe = ("import numpy as np; from mbslib.formulations import rotation_parameters as rp\n"
             "from mbslib.formulations.compiled import bind_form, bodies_tangent_inv as f\n"
             "f(bind_form(rp.RV), np.zeros(1), np.full(6, 0.1), np.ones(6), np.zeros(6))\n"
             "print(len(f.stats.cache_hits), len(f.stats.cache_misses))")
    assert _run(probe, ROOT, tmp_path) == "0 1\n"
    assert _run(probe, ROOT, tmp_path) == "1 0\n"


def test_no_cached_kernel_is_keyed_on_a_type_bound_to_one_process():
    """Every cache index of this library version: no signature holds a dispatcher's type (see
    :func:`~mbslib.formulations.compiled.bind_form`)."""
    from numba.core import types

    def bound_to_process(t):
        return isinstance(t, types.Dispatcher) or (isinstance(t, types.BaseTuple)
                                                   and any(bound_to_process(x) for x in t.types))

    offending = []
    for index in Path(os.environ["NUMBA_CACHE_DIR"]).rglob("*.nbi"):
        with index.open("rb") as f:
            pickle.load(f)  # numba's index format version
            _, overloads = pickle.loads(f.read())
        offending += [index.name for (signature, *_) in overloads
                      if any(bound_to_process(t) for t in getattr(signature, "args", signature))]
    assert not offending, f"kernels compiled for a bundle of dispatchers: {sorted(set(offending))}"
