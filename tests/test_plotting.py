"""Tests of the figure helpers shared by the chapters (mbslib.plotting, mbslib.convergence.on_grid)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from mbslib.convergence import on_grid  # noqa: E402
from mbslib.plotting import cylinder_surface, plot_increments, spring_line, symlog_ticks, symmetric_ylim  # noqa: E402
from mbslib.rotations import exp_so3  # noqa: E402


@pytest.fixture
def ax():
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


@pytest.mark.parametrize("largest, limit", [(3.2e-5, 2e-4), (1e-5, 2e-4), (0.99, 2.0), (7.0, 20.0), (1.5e-14, 2e-13)])
def test_symmetric_ylim_is_twice_the_next_decade(ax, largest, limit):
    values = np.array([[0.1 * largest, -largest], [np.nan, 0.5 * largest]])
    low, high = symmetric_ylim(ax, values)
    assert high == pytest.approx(limit, rel=1e-12) and low == -high
    assert ax.get_ylim() == pytest.approx((-limit, limit), rel=1e-12)
    assert symmetric_ylim(ax, values, factor=5.0)[1] == pytest.approx(2.5 * limit, rel=1e-12)


def test_symmetric_ylim_leaves_zero_or_nan_data_alone(ax):
    ax.set_ylim(-1.0, 3.0)
    for values in (np.zeros(4), np.full(3, np.nan), np.array([0.0, np.inf]), np.array([])):
        assert symmetric_ylim(ax, values) is None
        assert ax.get_ylim() == (-1.0, 3.0)


def test_on_grid_rounds_to_whole_steps():
    assert on_grid(0.1, 10.0) == pytest.approx(10.0, rel=1e-15)
    assert on_grid(0.3, 1.0) == pytest.approx(0.9)  # round(3.33) = 3 steps
    assert on_grid(0.4, 1.0) == pytest.approx(0.8)  # round(2.5) = 2 (ties to even)
    assert on_grid(0.5, 0.1) == 0.5  # at least one step
    assert on_grid(0.01, 0.0) == 0.01
    h = 2.5e-4
    assert round(on_grid(h, 1.2345) / h) == 4938
    for h, t_end, name in [(0.0, 1.0, "h"), (-0.1, 1.0, "h"), (0.1, -1.0, "t_end"), (0.1, np.inf, "t_end")]:
        with pytest.raises(ValueError, match=name):
            on_grid(h, t_end)


def test_symlog_ticks_and_increment_plot(ax):
    ticks = symlog_ticks(1e-16, 1e-3)
    assert ticks == sorted(ticks) and 0.0 in ticks and len(ticks) <= 2 * 4 + 1
    assert np.allclose(ticks, -np.array(ticks[::-1]))
    t = np.linspace(0, 1, 11)
    plot_increments(ax, t, {"E": np.cumsum(np.full(11, 1e-6))})
    assert ax.get_yscale() == "symlog" and len(ax.lines) == 1


def test_cylinder_surface_lies_on_the_rotated_mantle():
    origin, R = np.array([0.3, -0.2, 1.0]), exp_so3(np.array([0.4, -1.1, 0.7]))
    X, Y, Z = cylinder_surface(origin, R, radius=0.1, length=0.4, n=17)
    body = (np.stack([X, Y, Z], axis=-1) - origin) @ R          # body coordinates, (2, n, 3)
    assert X.shape == (2, 17)
    assert np.allclose(np.hypot(body[..., 1], body[..., 2]), 0.1, atol=1e-14)
    assert np.allclose(body[0, :, 0], -0.2, atol=1e-14) and np.allclose(body[1, :, 0], 0.2, atol=1e-14)


def test_spring_line_joins_its_end_points_and_stays_near_the_axis():
    a, b = np.array([0.0, 0.0, 0.0]), np.array([0.0, 0.0, -0.3])
    line = spring_line(a, b, turns=5, width=0.02)
    assert line.shape == (13, 3)
    assert np.array_equal(line[0], a) and np.array_equal(line[-1], b)
    assert np.allclose(np.hypot(line[:, 0], line[:, 1]).max(), 0.02)
    assert np.all(np.diff(line[:, 2]) < 0)                      # monotone along the axis


def test_spring_line_rejects_coincident_end_points():
    with pytest.raises(ValueError, match="distinct end points"):
        spring_line([0.1, 0.2, 0.3], [0.1, 0.2, 0.3])


def test_animation_html_loads_nothing_from_outside():
    import sys
    from pathlib import Path

    import matplotlib.pyplot as plt
    from matplotlib.animation import FuncAnimation

    from mbslib.plotting import animation_html

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "notebooks" / "_ext"))
    from offline import external_resources

    fig, ax = plt.subplots()
    (line,) = ax.plot([0, 1], [0, 0])
    anim = FuncAnimation(fig, lambda k: line.set_ydata([0, k]), frames=3)
    page = animation_html(anim, default_mode="loop")
    plt.close(fig)
    assert external_resources(page) == [] and "▶" in page and "fa fa-" not in page
