from typing import NamedTuple

import ipywidgets as w
import pytest

from mbslib.widgets import control, panel, validate


class Params(NamedTuple):
    h: float = 0.01
    n: int = 3
    scheme: str = "EML"


RANGES = {"h": ("log", 1e-4, 1e-1), "n": (1, 10), "scheme": ["EML", "MPL"]}


def test_panel_calls_plot_once_with_the_record():
    calls = []
    ui = panel(calls.append, Params(), RANGES)
    assert isinstance(ui, w.VBox)
    controls = ui.children[0].children
    assert [type(c).__name__ for c in controls] == ["FloatLogSlider", "IntSlider", "Dropdown"]
    assert all(not getattr(c, "continuous_update", False) for c in controls)
    controls[2].value = "MPL"
    assert calls[-1] == Params(scheme="MPL")


def test_out_of_range_values_name_the_parameter():
    with pytest.raises(ValueError, match="h must lie"):
        validate(Params(h=1.0), RANGES)
    with pytest.raises(ValueError, match="scheme must be one of"):
        validate(Params(scheme="RK4"), RANGES)
    with pytest.raises(ValueError, match="n: default"):
        control("n", 20, (1, 10))


def test_static_build_runs_the_plot_once_without_widgets(monkeypatch):
    monkeypatch.setenv("MBS_STATIC_BUILD", "1")
    calls = []
    assert panel(calls.append, Params(), RANGES) is None
    assert calls == [Params()]
    with pytest.raises(ValueError, match="h: default"):
        panel(calls.append, Params(h=1.0), RANGES)
