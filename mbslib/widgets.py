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


def control(name: str, default, spec):
    """One control for field ``name``.

    ``spec`` is ``(low, high)`` for a linear slider, ``("log", low, high)`` for a logarithmic slider
    or a list of options for a dropdown. Raises ``ValueError`` naming the field when the default lies
    outside the range or is not among the options.
    """
    style = {"description_width": "initial"}
    if isinstance(spec, (list, tuple)) and spec and spec[0] == "log":
        _, low, high = spec
        if not (low > 0 and low <= default <= high):
            raise ValueError(f"{name}: default {default!r} is outside the log range [{low}, {high}]")
        return w.FloatLogSlider(value=default, base=10, min=np.log10(low), max=np.log10(high), step=0.1,
                                description=name, continuous_update=False, readout_format=".2e", style=style)
    if isinstance(spec, tuple) and len(spec) == 2 and all(isinstance(v, (int, float)) for v in spec):
        low, high = spec
        if not low <= default <= high:
            raise ValueError(f"{name}: default {default!r} is outside the range [{low}, {high}]")
        if isinstance(default, int) and isinstance(low, int) and isinstance(high, int):
            return w.IntSlider(value=default, min=low, max=high, description=name,
                               continuous_update=False, style=style)
        return w.FloatSlider(value=default, min=low, max=high, step=(high - low) / 100, description=name,
                             continuous_update=False, style=style)
    if isinstance(spec, Sequence):
        options = list(spec)
        if default not in options:
            raise ValueError(f"{name}: default {default!r} is not one of {options}")
        return w.Dropdown(options=options, value=default, description=name, style=style)
    raise ValueError(f"{name}: unsupported control spec {spec!r}")


def validate(record, ranges: dict):
    """Check the fields of ``record`` named in ``ranges`` and return the record.

    Raises ``ValueError`` naming the field when a value lies outside its range (this is how a
    plot function called from a widget, or by hand, refuses out-of-range values).
    """
    for name, spec in ranges.items():
        value = getattr(record, name)
        if isinstance(spec, (list, tuple)) and spec and spec[0] == "log":
            low, high = spec[1], spec[2]
        elif isinstance(spec, tuple) and len(spec) == 2 and all(isinstance(v, (int, float)) for v in spec):
            low, high = spec
        else:
            if value not in list(spec):
                raise ValueError(f"{name} must be one of {list(spec)}, got {value!r}")
            continue
        if not low <= value <= high:
            raise ValueError(f"{name} must lie in [{low:g}, {high:g}], got {value!r}")
    return record


def static_build() -> bool:
    """True while the static site is built (``MBS_STATIC_BUILD=1``, set by ``notebooks/conf.py``)."""
    return os.environ.get("MBS_STATIC_BUILD", "0") == "1"


def panel(plot: Callable, record, ranges: dict) -> w.VBox | None:
    """A panel of controls for the fields of ``record`` named in ``ranges``, and the plot output.

    ``plot(record)`` is called once at construction (so the panel is never blank) and again when
    a control is released, with ``record._replace(**values)``.

    In the static site build no kernel is left to answer a slider, so the panel only validates
    the ranges and runs ``plot(record)`` once (the code path is still exercised) and returns
    None: creating kernel-side widgets there only costs time, and notebook execution with
    widget comms has been seen to hang (nbclient #312).
    """
    controls = {name: control(name, getattr(record, name), spec) for name, spec in ranges.items()}
    if static_build():
        plot(validate(record, ranges))
        return None

    def update(**values):
        plot(validate(record._replace(**values), ranges))

    out = w.interactive_output(update, controls)
    return w.VBox([w.HBox(list(controls.values()), layout=w.Layout(flex_flow="row wrap")), out])
