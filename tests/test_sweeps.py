"""Studies over independent configurations (mbslib.studies.sweeps): serial by default, on any
concurrent.futures.Executor on request, with bitwise the serial results."""

from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np
import pytest

from mbslib.diagnostics import attitude_error
from mbslib.methods import solve
from mbslib.reference import reference_states
from mbslib.studies.sweeps import convergence, sweep, work_precision
from mbslib.systems.benchmarks import pendulum_3d

MODEL, T_END = pendulum_3d(), 2.0


def _error(reference, run):
    return attitude_error(run.states, reference)


def _rk44(reference, h):
    run = solve(MODEL, "RKMK RK44", h, T_END, record_every=None)
    return attitude_error(run.states, reference), run.work


@pytest.fixture(scope="module")
def reference():
    return reference_states(MODEL, [0.0, T_END])


def test_a_convergence_ladder_fits_the_order_on_its_asymptotic_range(reference):
    study = convergence(partial(_rk44, reference), [0.4, 0.2, 0.1, 0.05])
    assert study.order == pytest.approx(4.0, abs=0.3) and len(study.local) == 3
    assert [w.rhs_evaluations for w in study.work] == [4 * 5, 4 * 10, 4 * 20, 4 * 40]
    floored = convergence(partial(_rk44, reference), [0.4, 0.2, 0.1, 0.05], floor=study.errors[2])
    assert list(floored.fitted) == [0, 1]


def test_an_executor_gives_the_serial_results_bit_for_bit(reference):
    error = partial(_error, reference)
    serial = work_precision("RKMK RK44", MODEL, [0.4, 0.2, 0.1], T_END, error)
    with ThreadPoolExecutor(2) as pool:
        threaded = work_precision("RKMK RK44", MODEL, [0.4, 0.2, 0.1], T_END, error, executor=pool)
    assert [(p.error, p.work) for p in serial] == [(p.error, p.work) for p in threaded]
    with pytest.raises(TypeError, match="executor must be a concurrent.futures.Executor"):
        sweep(abs, [1], executor=4)


def test_a_local_dask_cluster_gives_the_serial_results_bit_for_bit(reference):
    """The same study on a dask.distributed cluster of two worker processes (``Client.get_executor()``)."""
    import distributed  # a test dependency (pyproject.toml)

    error = partial(_error, reference)
    serial = work_precision("RKMK RK44", MODEL, [0.4, 0.2, 0.1], T_END, error)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        clustered = work_precision("RKMK RK44", MODEL, [0.4, 0.2, 0.1], T_END, error,
                                   executor=client.get_executor())
    assert [(p.error, p.work, p.ok) for p in serial] == [(p.error, p.work, p.ok) for p in clustered]
    assert np.isfinite([p.error for p in clustered]).all()
