"""The book's figure style: increments of conserved quantities (symlog axes, or linear axes with
symmetric decade limits), log–log convergence plots with slope guides, and 3D drawings of rigid
bodies.

Figures carry no titles (the caption is the title); axis labels are lower case with units.
"""

from __future__ import annotations

from itertools import cycle

import matplotlib.pyplot as plt
import numpy as np

STYLE = {
    "figure.dpi": 90,
    "figure.figsize": (6.4, 3.6),
    "axes.grid": True,
    "grid.alpha": 0.3,
    "lines.linewidth": 1.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
    "font.size": 10,
}


def apply_style() -> None:
    """Set the book's matplotlib defaults."""
    plt.rcParams.update(STYLE)


def plot_increments(ax, t, series: dict, linthresh: float = 1e-16, ylabel: str = "increment"):
    """Per-step increments ``X^{n+1} - X^n`` of each series against ``t^{n+1}`` on a symlog axis.

    Round-off-level increments (``|Δ| ≲ 1e-14``) sit in the linear band around zero; drifting
    schemes rise out of it by orders of magnitude, which a linear axis would hide.
    """
    t = np.asarray(t, dtype=float)
    largest = linthresh
    for label, values in series.items():
        delta = np.diff(np.asarray(values, dtype=float), axis=0)
        ax.plot(t[1:], delta, label=label, lw=1.0)
        largest = max(largest, float(np.max(np.abs(delta), initial=0.0)))
    ax.set_yscale("symlog", linthresh=linthresh)
    ax.set_yticks(symlog_ticks(linthresh, largest))
    ax.set_xlabel("time t")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return ax


def symlog_ticks(linthresh: float, largest: float, max_per_side: int = 4) -> list[float]:
    """Symmetric decade ticks ``0, ±linthresh, …, ±10^k`` with at most ``max_per_side`` per sign."""
    low = int(np.floor(np.log10(linthresh)))
    high = max(low, int(np.ceil(np.log10(largest))))
    stride = max(1, int(np.ceil((high - low + 1) / max_per_side)))
    decades = [10.0**k for k in range(low, high + 1, stride)]
    return sorted([-d for d in decades] + [0.0] + decades)


def symmetric_ylim(ax, values, factor: float = 2.0):
    """Symmetric y-limits ``±factor·10^(⌊log10 max|values|⌋ + 1)``, as in the authors' plots.

    The limit is one decade above the largest magnitude, rounded down to a power of ten, so
    that increments of similar size share the same axis across runs. NaN and infinite entries
    are ignored; if no finite value is non-zero, the limits are left alone.

    Returns
    -------
    (low, high) : tuple of float, or None when the limits were not changed.
    """
    magnitude = np.abs(np.asarray(values, dtype=float))
    largest = float(np.max(magnitude[np.isfinite(magnitude)], initial=0.0))
    if largest <= 0.0:
        return None
    high = factor * 10.0 ** (np.floor(np.log10(largest)) + 1)
    ax.set_ylim(-high, high)
    return -high, high


def plot_convergence(ax, hs, errors: dict, orders=(2,), ylabel: str = "error"):
    """Log–log plot of error against step size with dashed slope guides ``∝ h^p``.

    Each guide passes through the smallest-h point of the first series, shifted down by a factor
    of 3 so that it does not hide the data.
    """
    hs = np.asarray(hs, dtype=float)
    markers = "osd^v<>ph*"
    for (label, err), marker in zip(errors.items(), cycle(markers)):
        ax.loglog(hs, err, marker=marker, label=label)
    first = np.asarray(next(iter(errors.values())), dtype=float)
    i = int(np.argmin(hs))
    for p in orders:
        guide = first[i] / 3.0 * (hs / hs[i]) ** p
        ax.loglog(hs, guide, "k--", lw=0.8, label=f"slope {p}")
    ax.set_xlabel("step size h")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    return ax


def axes_3d(fig=None, position=111, extent: float = 1.0):
    """A 3D axes with equal aspect and limits ``[-extent, extent]³``."""
    fig = fig or plt.figure(figsize=(4.5, 4.5))
    ax = fig.add_subplot(position, projection="3d")
    for set_lim in (ax.set_xlim, ax.set_ylim, ax.set_zlim):
        set_lim(-extent, extent)
    ax.set_box_aspect((1, 1, 1))
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_zlabel("z")
    return ax


def draw_frame(ax, origin, R, length: float = 1.0, alpha: float = 1.0):
    """Draw the body frame (directors ``d_i = R e_i``) as red, green and blue arrows from ``origin``."""
    origin = np.asarray(origin, dtype=float)
    for i, color in enumerate(("tab:red", "tab:green", "tab:blue")):
        d = length * np.asarray(R)[:, i]
        ax.quiver(*origin, *d, color=color, alpha=alpha, arrow_length_ratio=0.15)


def box_edges(origin, R, half_extents) -> np.ndarray:
    """The 12 edges of the box ``origin + R diag(half_extents) [±1, ±1, ±1]``, shape (12, 2, 3)."""
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
    points = np.asarray(origin, dtype=float) + (corners * np.asarray(half_extents, dtype=float)) @ np.asarray(R).T
    edges = [(a, b) for a in range(8) for b in range(a + 1, 8) if np.sum(corners[a] != corners[b]) == 1]
    return np.array([[points[a], points[b]] for a, b in edges])


def draw_box(ax, origin, R, half_extents, color="tab:gray", alpha: float = 1.0):
    """Draw a rigid box (wire frame) at ``origin`` with orientation ``R``."""
    for a, b in box_edges(origin, R, half_extents):
        ax.plot(*np.column_stack([a, b]), color=color, alpha=alpha, lw=1.0)


def cylinder_surface(origin, R, radius: float, length: float, n: int = 24) -> tuple[np.ndarray, ...]:
    """Mantle of the cylinder about the body x axis, centred at ``origin``: X, Y, Z of shape (2, n)."""
    phi = np.linspace(0.0, 2.0 * np.pi, n)
    body = np.stack([np.outer([-0.5 * length, 0.5 * length], np.ones(n)),
                     radius * np.outer([1.0, 1.0], np.cos(phi)),
                     radius * np.outer([1.0, 1.0], np.sin(phi))])            # (3, 2, n)
    inertial = np.einsum("ij,jkl->ikl", np.asarray(R, dtype=float), body)
    return tuple(inertial + np.asarray(origin, dtype=float)[:, None, None])


def draw_cylinder(ax, origin, R, radius: float, length: float, color="tab:gray", alpha: float = 0.4):
    """Draw a rigid cylinder (axis = body x) at ``origin`` with orientation ``R``."""
    ax.plot_surface(*cylinder_surface(origin, R, radius, length), color=color, alpha=alpha, linewidth=0)


def spring_line(a, b, turns: int = 6, width: float = 0.03) -> np.ndarray:
    """Zig-zag polyline of a spring from point ``a`` to point ``b`` with ``turns`` zig-zag periods
    of amplitude ``width``; shape (2 turns + 3, 3)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    axis = b - a
    if not np.linalg.norm(axis) > 0:
        raise ValueError("spring_line needs two distinct end points a and b")
    side = np.cross(axis, [1.0, 0.0, 0.0] if abs(axis[0]) < 0.9 * np.linalg.norm(axis) else [0.0, 1.0, 0.0])
    side *= width / np.linalg.norm(side)
    s = np.linspace(0.1, 0.9, 2 * turns + 1)
    zig = a + np.outer(s, axis) + np.outer((-1.0) ** np.arange(s.size), side)
    return np.vstack([a, zig, b])


def draw_sphere(ax, radius: float = 1.0, alpha: float = 0.15):
    """A translucent sphere of ``radius`` about the origin (for trajectories on S²)."""
    u, v = np.meshgrid(np.linspace(0, 2 * np.pi, 40), np.linspace(0, np.pi, 20))
    ax.plot_surface(radius * np.cos(u) * np.sin(v), radius * np.sin(u) * np.sin(v), radius * np.cos(v),
                    color="tab:gray", alpha=alpha, linewidth=0)


# matplotlib's animation player draws its buttons with Font Awesome 4 from a CDN; the book's pages
# load nothing from outside the site, so the buttons get plain Unicode symbols instead.
_PLAYER_SYMBOLS = {"minus": "−", "plus": "+", "fast-backward": "⏮", "step-backward": "◁",
                   "play fa-flip-horizontal": "◀", "play": "▶", "pause": "❚❚", "step-forward": "▷",
                   "fast-forward": "⏭"}


def animation_html(animation, **kwargs) -> str:
    """The HTML player of a matplotlib ``animation`` (``to_jshtml(**kwargs)``), self-contained:
    the Font Awesome stylesheet link is dropped and its icons are replaced by Unicode symbols."""
    import re

    page = animation.to_jshtml(**kwargs)
    page = re.sub(r'<link rel="stylesheet"\s+href="https?://[^"]*font-awesome[^"]*">', "", page)
    for name, symbol in _PLAYER_SYMBOLS.items():
        page = page.replace(f'<i class="fa fa-{name}"></i>', symbol)
    if "fa fa-" in page or "font-awesome" in page:
        raise RuntimeError("matplotlib's player changed: an icon or the Font Awesome link is left")
    return page
