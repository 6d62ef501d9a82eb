"""Widget panels for the chapters.

A panel is built from a parameter record (a ``NamedTuple`` with the paper's values as defaults)
and a dictionary of ranges; every slider recomputes on release only (``continuous_update=False``),
so an expensive simulation runs once per move. The plot function receives the whole record with
the chosen values.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import ipywidgets as w
import numpy as np


def _check_default(name: str, default, spec) -> None:
    """Raise ``ValueError`` naming field ``name`` when ``default`` lies outside ``spec``."""
    kind, low, high = _range(spec)
    if kind == "log" and not (low > 0 and low <= default <= high):
        raise ValueError(f"{name}: default {default!r} is outside the log range [{low}, {high}]")
    if kind == "lin" and not low <= default <= high:
        raise ValueError(f"{name}: default {default!r} is outside the range [{low}, {high}]")
    if kind == "options":
        if not isinstance(spec, Sequence) or isinstance(spec, str):
            raise ValueError(f"{name}: unsupported control spec {spec!r}")
        if default not in list(spec):
            raise ValueError(f"{name}: default {default!r} is not one of {list(spec)}")


def control(name: str, default, spec):
    """One control for field ``name``.

    ``spec`` is ``(low, high)`` for a linear slider, ``("log", low, high)`` for a logarithmic slider
    or a list of options for a dropdown. Raises ``ValueError`` naming the field when the default lies
    outside the range or is not among the options.
    """
    _check_default(name, default, spec)
    style = {"description_width": "initial"}
    kind, low, high = _range(spec)
    if kind == "log":
        return w.FloatLogSlider(value=default, base=10, min=np.log10(low), max=np.log10(high), step=0.1,
                                description=name, continuous_update=False, readout_format=".2e", style=style)
    if kind == "lin":
        if isinstance(default, int) and isinstance(low, int) and isinstance(high, int):
            return w.IntSlider(value=default, min=low, max=high, description=name,
                               continuous_update=False, style=style)
        return w.FloatSlider(value=default, min=low, max=high, step=(high - low) / 100, description=name,
                             continuous_update=False, style=style)
    return w.Dropdown(options=list(spec), value=default, description=name, style=style)


def validate(record, ranges: dict):
    """Check the fields of ``record`` named in ``ranges`` and return the record.

    Raises ``ValueError`` naming the field when a value lies outside its range (this is how a
    plot function called from a widget, or by hand, refuses out-of-range values).
    """
    for name, spec in ranges.items():
        value = getattr(record, name)
        kind, low, high = _range(spec)
        if kind == "options":
            if value not in list(spec):
                raise ValueError(f"{name} must be one of {list(spec)}, got {value!r}")
        elif not low <= value <= high:
            raise ValueError(f"{name} must lie in [{low:g}, {high:g}], got {value!r}")
    return record


def static_build() -> bool:
    """True while the static site is built (``MBS_STATIC_BUILD=1``, set by ``notebooks/conf.py``)."""
    return os.environ.get("MBS_STATIC_BUILD", "0") == "1"


STATIC_POINTS = 3  # pre-rendered values of the static panel's parameter, the default among them


def static_values(default, spec, points: int = STATIC_POINTS) -> list:
    """Values at which the static site pre-renders a panel: ``points`` values of the range
    ``spec`` (see :func:`control`) around and including ``default``.

    For a slider the values lie halfway (geometrically for a log slider) between the default
    and the ends of the range, so no picture shows the costliest extreme; for a dropdown they
    are the first ``points`` options, the default among them.
    """
    if points < 1:
        raise ValueError(f"points must be at least 1, got {points}")
    kind, low, high = _range(spec)
    if kind == "options":
        options = list(spec)
        chosen = [default] + [o for o in options if o != default][: points - 1]
        return sorted(chosen, key=options.index)
    if points == 1:
        return [default]
    mid = (lambda a, b: float(np.sqrt(a * b))) if kind == "log" else (lambda a, b: (a + b) / 2)
    below = [low] if points > 3 else []
    above = [high] if points > 3 else []
    values = below + [mid(low, default), default, mid(default, high)] + above
    if isinstance(default, int) and not isinstance(default, bool) and kind == "lin":
        values = [int(round(v)) for v in values]
    unique = []
    for v in values:
        if v not in unique:
            unique.append(v)
    return unique


def _range(spec):
    """``("log", low, high)``, ``("lin", low, high)`` or ``("options", None, None)``."""
    if isinstance(spec, (list, tuple)) and spec and spec[0] == "log":
        return "log", spec[1], spec[2]
    if isinstance(spec, tuple) and len(spec) == 2 and all(isinstance(v, (int, float)) for v in spec):
        return "lin", spec[0], spec[1]
    return "options", None, None


def _label(name, value) -> str:
    return f"{name} = {value:.3g}" if isinstance(value, float) else f"{name} = {value}"


def render_static(plot: Callable, record, name: str, values: Sequence, note: str = "") -> str:
    """HTML of a static panel: ``plot`` drawn at each of ``values`` of field ``name`` (the other
    fields as in ``record``), one PNG each, and a slider that shows one of them.

    The images are embedded in the page and the slider is a plain HTML range input with a line
    of inline JavaScript, so the panel works offline and without a kernel. ``plt.show`` is
    suppressed while drawing; whatever the plot function prints is shown under its image.
    """
    import base64
    import contextlib
    import html
    import io

    import matplotlib.pyplot as plt

    frames = []
    show = plt.show
    plt.show = lambda *args, **kwargs: None
    try:
        for value in values:
            before = set(plt.get_fignums())
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                plot(record._replace(**{name: value}))
            images = []
            for number in [n for n in plt.get_fignums() if n not in before]:
                figure = plt.figure(number)
                buffer = io.BytesIO()
                figure.savefig(buffer, format="png", dpi=72, bbox_inches="tight")
                plt.close(figure)
                images.append(base64.b64encode(buffer.getvalue()).decode())
            frames.append((_label(name, value), images, printed.getvalue().strip()))
    finally:
        plt.show = show
    default = values.index(getattr(record, name)) if getattr(record, name) in values else 0
    parts = ['<div class="mbs-static-panel">']
    labels = [html.escape(label) for label, _, _ in frames]
    if len(frames) > 1:
        script = ("var p=this.closest('.mbs-static-panel');"
                  "p.querySelectorAll('.mbs-frame').forEach(function(f,i){f.hidden=(i!=this.value);},this);"
                  "p.querySelector('output').textContent=p.querySelectorAll('.mbs-frame')[this.value].dataset.label;")
        parts.append(f'<label class="mbs-static-control">{html.escape(name)} '
                     f'<input type="range" min="0" max="{len(frames) - 1}" step="1" value="{default}" '
                     f'aria-label="{html.escape(name)}" oninput="{html.escape(script)}"> '
                     f'<output>{labels[default]}</output></label>')
    for k, (label, images, printed) in enumerate(frames):
        hidden = "" if k == default else " hidden"
        parts.append(f'<div class="mbs-frame" data-label="{html.escape(label)}"{hidden}>')
        parts += [f'<img src="data:image/png;base64,{image}" alt="{html.escape(label)}">' for image in images]
        if printed:
            parts.append(f"<pre>{html.escape(printed)}</pre>")
        parts.append("</div>")
    shown = ", ".join(labels)
    text = f"Static panel, pre-rendered at {shown}; the other controls stay at their defaults."
    parts.append(f'<p class="mbs-static-note">{html.escape(text)} {html.escape(note)} '
                 "Open the chapter in JupyterLab for the live panel.</p></div>")
    return "\n".join(parts)


def panel(plot: Callable, record, ranges: dict, *, static: tuple | None = None,
          static_note: str = "") -> w.VBox | None:
    """A panel of controls for the fields of ``record`` named in ``ranges``, and the plot output.

    ``plot(record)`` is called once at construction (so the panel is never blank) and again when
    a control is released, with ``record._replace(**values)``.

    In the static site build no kernel is left to answer a slider: the panel is pre-rendered
    (:func:`render_static`) over the values of one parameter, ``static = (name, values)``; by
    default the first slider of ``ranges`` at :func:`static_values`. ``static = (name, [])``
    renders the default only (for a panel whose recomputation is too costly; say why in
    ``static_note``). No kernel-side widget is created there: it would only cost time, and
    notebook execution with widget comms has been seen to hang (nbclient #312).
    """
    for name, spec in ranges.items():
        _check_default(name, getattr(record, name), spec)
    if static_build():
        from IPython.display import HTML, display

        validate(record, ranges)
        if static is None:
            sliders = [n for n, spec in ranges.items() if _range(spec)[0] != "options"]
            name = sliders[0] if sliders else next(iter(ranges))
            values = static_values(getattr(record, name), ranges[name])
        else:
            name, values = static
            if name not in ranges:
                raise ValueError(f"static: {name!r} is not one of the panel's controls {list(ranges)}")
            values = list(values) or [getattr(record, name)]
            for value in values:
                validate(record._replace(**{name: value}), ranges)
        display(HTML(render_static(plot, record, name, values, static_note)))
        return None
    controls = {name: control(name, getattr(record, name), spec) for name, spec in ranges.items()}

    def update(**values):
        plot(validate(record._replace(**values), ranges))

    out = w.interactive_output(update, controls)
    return w.VBox([w.HBox(list(controls.values()), layout=w.Layout(flex_flow="row wrap")), out])
