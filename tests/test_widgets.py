from typing import NamedTuple

import ipywidgets as w
import pytest

from mbslib.widgets import control, panel, render_static, static_values, validate


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


def test_static_build_prerenders_the_first_slider_without_widgets(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.setenv("MBS_STATIC_BUILD", "1")
    calls = []

    def plot(p):
        calls.append(p)
        plt.plot([0, 1], [0, p.h])
        print(f"h was {p.h}")
        plt.show()

    shell = InteractiveShell.instance()
    shell.user_ns.update(panel=panel, plot=plot, Params=Params, RANGES=RANGES)
    result = shell.run_cell("panel(plot, Params(), RANGES)")
    assert result.result is None and not plt.get_fignums()
    assert [p.h for p in calls] == pytest.approx([1e-3, 1e-2, 10 ** -1.5])
    assert all(p._replace(h=0.01) == Params() for p in calls)
    with pytest.raises(ValueError, match="h: default"):
        panel(plot, Params(h=1.0), RANGES)
    with pytest.raises(ValueError, match="static: 'x'"):
        panel(plot, Params(), RANGES, static=("x", [1]))
    with pytest.raises(ValueError, match="scheme must be one of"):
        panel(plot, Params(), RANGES, static=("scheme", ["RK4"]))


def test_static_html_has_one_frame_per_value_and_a_slider():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def plot(p):
        plt.plot([0, 1], [0, p.n])
        print("ran", p.n)

    page = render_static(plot, Params(), "n", [2, 3, 6], note="Costly.")
    assert page.count('class="mbs-frame"') == 3 and page.count("data:image/png;base64,") == 3
    assert 'type="range"' in page and 'value="1"' in page and "<output>n = 3</output>" in page
    assert page.count(" hidden>") == 2 and "ran 6" in page and "Costly." in page
    single = render_static(plot, Params(), "n", [3])
    assert 'type="range"' not in single and " hidden" not in single


def test_static_values_straddle_the_default():
    assert static_values(0.01, ("log", 1e-4, 1e-1)) == pytest.approx([1e-3, 1e-2, 10 ** -1.5])
    assert static_values(3, (1, 10)) == [2, 3, 6]
    assert static_values(5.0, (0.0, 10.0), points=5) == [0.0, 2.5, 5.0, 7.5, 10.0]
    assert static_values("MPL", ["EML", "MPL", "EMH", "MPH"]) == ["EML", "MPL", "EMH"]
    assert static_values(1.0, (1.0, 2.0)) == [1.0, 1.5]


def test_no_chapter_hides_the_output_of_a_panel():
    """In the static site a panel's output is its pre-rendered figure: a ``remove-output`` tag
    on the cell would leave the reader only the ``panel(...)`` code."""
    import re
    import tomllib
    from pathlib import Path

    import jupytext

    root = Path(__file__).resolve().parents[1]
    chapters = tomllib.loads((root / "book.toml").read_text())["chapters"]
    hidden = []
    for chapter in chapters:
        for cell in jupytext.read(root / "notebooks" / f"{chapter}.md").cells:
            tags = cell.metadata.get("tags", [])
            if cell.cell_type == "code" and re.search(r"(^|\W)panel\(", cell.source) and (
                    "remove-output" in tags or "remove-cell" in tags):
                hidden.append(f"{chapter}: {cell.source.splitlines()[0]}")
    assert hidden == [], "panels whose output the site would drop:\n" + "\n".join(hidden)
