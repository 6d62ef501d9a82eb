import json

import pytest

from mbslib.checks import Scorecard, evaluate, load_records, slack


def test_evaluate_forms():
    assert evaluate(1e-15, upper=1e-12) == (True, "≤ 1e-12")
    assert evaluate(2.05, expected=2.0, tol=0.1)[0]
    assert not evaluate(2.3, expected=2.0, tol=0.1)[0]
    assert evaluate(101.0, expected=100.0, rtol=0.02)[0]
    assert evaluate(True, expected=True)[0]
    assert not evaluate(0.5, lower=1.0)[0]
    assert not evaluate(float("nan"), upper=1.0)[0]


@pytest.mark.parametrize("kwargs", [{}, {"expected": 1.0}, {"expected": 1.0, "tol": 0.1, "rtol": 0.1},
                                    {"expected": 1.0, "upper": 2.0}, {"expected": True, "tol": 0.1}])
def test_malformed_checks_raise(kwargs):
    with pytest.raises(ValueError):
        evaluate(1.0, **kwargs)


def test_check_records_passes_and_fails(tmp_path, monkeypatch):
    monkeypatch.setenv("MBS_CHECKS_DIR", str(tmp_path))
    monkeypatch.setenv("MBS_QUICK", "1")
    card = Scorecard("demo")
    card.check("Fig. 1", "energy conserved", 3e-15, upper=1e-12)
    with pytest.raises(AssertionError, match="does not hold"):
        card.check("Fig. 2", "order two", 1.2, expected=2.0, tol=0.1)
    records = load_records(tmp_path, ["demo", "missing"])
    assert records["missing"] is None
    assert [(r.figure, r.status, r.mode) for r in records["demo"]] == [("Fig. 1", "pass", "quick"),
                                                                      ("Fig. 2", "fail", "quick")]


def test_discrepancy_is_recorded_and_cannot_go_stale(tmp_path, monkeypatch):
    monkeypatch.setenv("MBS_CHECKS_DIR", str(tmp_path))
    card = Scorecard("demo")
    record = card.check("Table 3", "paper value", 0.7, expected=0.5, tol=0.01, discrepancy="typo in the paper",
                        whose="paper")
    assert (record.status, record.kind, record.source) == ("discrepancy", "discrepancy", "paper")
    with pytest.raises(AssertionError, match="now holds"):
        card.check("Table 4", "paper value", 0.5, expected=0.5, tol=0.01, discrepancy="typo", whose="ours")


@pytest.mark.parametrize("kwargs", [{"discrepancy": "why"}, {"discrepancy": "why", "whose": "theirs"},
                                    {"whose": "paper"}, {"discrepancy": "why", "whose": "ours", "reference": "x"},
                                    {"reference": " "}])
def test_kind_arguments_validated(kwargs):
    with pytest.raises(ValueError, match="whose|reference"):
        Scorecard("demo").check("Fig. 1", "a", 1.0, upper=2.0, **kwargs)


def test_reference_checks_fail_like_claims(tmp_path, monkeypatch):
    monkeypatch.setenv("MBS_CHECKS_DIR", str(tmp_path))
    card = Scorecard("demo")
    record = card.check("Fig. 1", "error vs exact", 1e-13, upper=1e-10, reference="exact solution")
    assert (record.kind, record.source, record.status) == ("reference", "exact solution", "pass")
    with pytest.raises(AssertionError, match="does not hold"):
        card.check("Fig. 1", "error vs Exudyn", 1e-3, upper=1e-10, reference="Exudyn")


def test_timing_records_never_fail(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MBS_CHECKS_DIR", str(tmp_path))
    card = Scorecard("demo")
    held = card.timing("Fig. 4", "CPU(RV)/CPU(Rxyz)", 0.4, upper=1.0)
    missed = card.timing("Fig. 4", "CPU(EP)/CPU(RV)", 3.0, upper=1.0)
    assert (held.kind, held.status, missed.status) == ("timing", "held", "not held")
    assert "timing on this machine" in capsys.readouterr().out
    assert [r["status"] for r in json.loads((tmp_path / "demo.json").read_text())] == ["held", "not held"]


def test_slack_shows_how_far_a_value_is_from_its_bound():
    assert slack(1e-14, upper=1e-10) == "×1e+04"
    assert slack(4.0, lower=2.0) == "×2"
    assert slack(2.05, expected=2.0, tol=0.1) == "×2"
    assert slack(2.0, expected=2.0, tol=0.1) == "exact"
    assert slack(-0.5, lower=-1.0, upper=1.0) == "±0.5"
    assert slack(True, expected=True) == ""


def test_rerunning_a_chapter_resets_its_records(tmp_path, monkeypatch):
    monkeypatch.setenv("MBS_CHECKS_DIR", str(tmp_path))
    Scorecard("demo").check("Fig. 1", "a", 1.0, upper=2.0)
    card = Scorecard("demo")
    card.check("Fig. 1", "a", 1.5, upper=2.0)
    card.check("Fig. 1", "a", 1.0, upper=2.0)  # re-running a cell replaces, not duplicates
    data = json.loads((tmp_path / "demo.json").read_text())
    assert len(data) == 1 and data[0]["measured"] == 1.0


def test_chapter_name_validated():
    with pytest.raises(ValueError, match="chapter"):
        Scorecard("a/b")


def test_a_cell_ending_with_a_check_prints_its_line_once(tmp_path, monkeypatch, capsys):
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.setenv("MBS_CHECKS_DIR", str(tmp_path))
    shell = InteractiveShell.instance()
    shell.user_ns["card"] = Scorecard("demo")
    shell.run_cell('card.check("Fig. 1", "a", 1.0, upper=2.0)')
    out = capsys.readouterr().out
    assert out.count("Fig. 1: a: measured 1") == 1
    assert "CheckRecord" not in out
