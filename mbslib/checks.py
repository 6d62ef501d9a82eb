"""The book's scorecard: every claim a chapter checks, with the measured value and its kind.

A chapter opens a :class:`Scorecard` in its first cell and records, after each figure or table,
what the figure shows. Every record says what kind of evidence it is:

``claim``
    the paper's claim reproduced: :meth:`Scorecard.check` compares a measured number with the
    claim (a value within a tolerance, or a bound) and raises ``AssertionError`` when it fails,
    so the notebook test and the book build fail;
``reference``
    a value compared with an independent reference (an exact solution, a closed form, Exudyn,
    the authors' code): ``check(..., reference="exact solution")``; it fails like a claim;
``discrepancy``
    a claim the chapter has shown *not* to reproduce: ``check(..., discrepancy="why",
    whose="paper" | "ours")``. ``whose="paper"`` says the printed paper is at fault (its data,
    a typo, a claim that does not hold); ``whose="ours"`` says it is a finding about this
    implementation. The chapter goes on, but if the claim holds after all the check fails, so
    the reproduction note cannot go stale;
``timing``
    a measured CPU time on this machine: :meth:`Scorecard.timing` records whether the paper's
    ordering held in this build and never fails. Times swing with the machine's load, so no
    verdict rests on them; cost claims are checked on the work the library counts (steps,
    evaluations, Newton iterations, factorisations).

Each record carries the criterion in words and its *slack*: how far the measured value could
move before the verdict flips (a factor for bounds on positive numbers, else a distance), so a
bound far from the value is visible on the scorecard.

Records are written as JSON to the folder named by ``MBS_CHECKS_DIR`` (set by the book build
and by the tests); ``notebooks/scorecard.md`` renders them.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from mbslib import quick

#: Kinds of scorecard records (see the module docstring).
KINDS = ("claim", "reference", "discrepancy", "timing")
WHOSE = ("paper", "ours")


@dataclass(frozen=True)
class CheckRecord:
    """One recorded check.

    ``kind`` is one of :data:`KINDS`. ``status`` is ``"pass"`` or ``"fail"`` for claims and
    references, ``"discrepancy"`` (or ``"fail"`` when it unexpectedly holds) for discrepancies,
    and ``"held"`` or ``"not held"`` for timings. ``criterion`` states the comparison in words,
    e.g. ``"≤ 1e-10"`` or ``"2 ± 0.1"``; ``slack`` is :func:`slack` of the comparison.
    ``source`` names the reference (kind ``reference``) or whose discrepancy it is (kind
    ``discrepancy``: ``"paper"`` or ``"ours"``).
    """

    chapter: str
    figure: str
    claim: str
    measured: float | bool
    criterion: str
    status: str
    note: str
    mode: str
    kind: str = "claim"
    source: str = ""
    slack: str = ""

    def _ipython_display_(self):
        """Show nothing in a notebook: the check has already printed the record's line, and a
        cell that ends with a check would repeat it as a dataclass repr."""


def _as_number(value):
    if isinstance(value, bool):
        return value
    try:
        import numpy as np

        if isinstance(value, np.bool_):
            return bool(value)
    except ImportError:  # pragma: no cover
        pass
    return float(value)


def evaluate(measured, *, expected=None, tol=None, rtol=None, upper=None, lower=None):
    """Compare ``measured`` with a claim; return ``(holds, criterion_text)``.

    Exactly one form is used:

    - ``expected`` with ``tol`` (absolute) or ``rtol`` (relative): ``|m - e| <= tol``;
    - ``expected`` alone for booleans: ``m == e``;
    - ``upper`` and/or ``lower``: ``lower <= m <= upper``.
    """
    m = _as_number(measured)
    if expected is not None:
        if upper is not None or lower is not None:
            raise ValueError("give either expected (with tol/rtol) or bounds, not both")
        e = _as_number(expected)
        if isinstance(e, bool) or isinstance(m, bool):
            if tol is not None or rtol is not None:
                raise ValueError("a boolean claim takes no tolerance")
            return bool(m) == bool(e), f"is {e}"
        if (tol is None) == (rtol is None):
            raise ValueError("a numeric expected value needs exactly one of tol or rtol")
        bound = tol if tol is not None else rtol * abs(e)
        if not bound >= 0:
            raise ValueError(f"tolerance must be non-negative, got {bound}")
        text = f"{e:.6g} ± {tol:.3g}" if tol is not None else f"{e:.6g} ± {100 * rtol:.3g} %"
        return bool(math.isfinite(m) and abs(m - e) <= bound), text
    if upper is None and lower is None:
        raise ValueError("a check needs expected=..., upper=... or lower=...")
    if isinstance(m, bool):
        raise ValueError("bounds need a numeric measured value")
    holds = math.isfinite(m)
    parts = []
    if lower is not None:
        holds = holds and m >= lower
        parts.append(f"≥ {lower:.3g}")
    if upper is not None:
        holds = holds and m <= upper
        parts.append(f"≤ {upper:.3g}")
    return bool(holds), " and ".join(parts)


def slack(measured, *, expected=None, tol=None, rtol=None, upper=None, lower=None) -> str:
    """How far ``measured`` could move before the comparison of :func:`evaluate` flips.

    For a bound on positive numbers it is the factor between value and bound (``"×40"``: the
    value could grow or shrink forty-fold); for a tolerance the factor between the allowed and
    the actual deviation; otherwise the distance to the nearest bound (``"±0.3"``). An empty
    string for booleans and non-finite values.
    """
    m = _as_number(measured)
    if isinstance(m, bool) or not math.isfinite(m):
        return ""
    if expected is not None:
        bound = tol if tol is not None else rtol * abs(_as_number(expected))
        deviation = abs(m - _as_number(expected))
        return "exact" if deviation == 0 else f"×{bound / deviation:.3g}"
    factors, distances = [], []
    for b, side in ((upper, 1), (lower, -1)):
        if b is None:
            continue
        if m > 0 and b > 0:
            factors.append(b / m if side == 1 else m / b)
        else:
            distances.append(side * (b - m))
    if distances:
        return f"±{min(distances):.3g}"
    return f"×{min(factors):.3g}"


def _fmt(value) -> str:
    if isinstance(value, bool):
        return str(value)
    return f"{value:.4g}"


class Scorecard:
    """The checks of one chapter.

    Parameters
    ----------
    chapter : str
        The chapter's file name without extension, e.g. ``"preliminaries"``.
    """

    def __init__(self, chapter: str):
        if not chapter or "/" in chapter:
            raise ValueError(f"chapter must be a plain file stem, got {chapter!r}")
        self.chapter = chapter
        self.records: dict[tuple[str, str], CheckRecord] = {}
        self._write()

    def check(
        self,
        figure: str,
        claim: str,
        measured,
        *,
        expected=None,
        tol=None,
        rtol=None,
        upper=None,
        lower=None,
        reference: str | None = None,
        discrepancy: str | None = None,
        whose: str | None = None,
    ) -> CheckRecord:
        """Check one claim of ``figure`` (e.g. ``"Fig. 3"``, ``"Table 2"``), record and assert it.

        See :func:`evaluate` for the comparison forms. ``reference="what"`` marks a comparison
        with an independent reference (kind ``reference``). ``discrepancy="reason"`` with
        ``whose="paper"`` or ``whose="ours"`` marks a claim expected *not* to hold: it is
        recorded as a discrepancy, and an ``AssertionError`` is raised if it holds after all.
        Never pass a measured time: use :meth:`timing`.
        """
        comparison = dict(expected=expected, tol=tol, rtol=rtol, upper=upper, lower=lower)
        holds, criterion = evaluate(measured, **comparison)
        if discrepancy is not None:
            if whose not in WHOSE:
                raise ValueError(f"a discrepancy needs whose='paper' or whose='ours', got whose={whose!r}")
            if reference is not None:
                raise ValueError("give either reference= or discrepancy=, not both")
            kind, source, status = "discrepancy", whose, "fail" if holds else "discrepancy"
        else:
            if whose is not None:
                raise ValueError("whose= belongs to a discrepancy (discrepancy='why')")
            if reference is not None and not reference.strip():
                raise ValueError("reference must name the reference, e.g. 'exact solution'")
            kind = "claim" if reference is None else "reference"
            source, status = reference or "", "pass" if holds else "fail"
        record = self._record(figure, claim, measured, criterion, status, discrepancy or "", kind, source,
                              slack(measured, **comparison))
        if status == "fail":
            if discrepancy is None:
                raise AssertionError(
                    f"{self.chapter} {figure}: claim '{claim}' does not hold: "
                    f"measured {_fmt(record.measured)}, expected {criterion}"
                )
            raise AssertionError(
                f"{self.chapter} {figure}: '{claim}' was documented as a discrepancy ({discrepancy}) "
                f"but now holds (measured {_fmt(record.measured)}, {criterion}); update the chapter"
            )
        return record

    def timing(self, figure: str, claim: str, measured, *, upper=None, lower=None, note: str = "") -> CheckRecord:
        """Record a claim about measured CPU time: whether it held on this machine in this build.

        ``measured`` is a time or a ratio of times, compared with ``upper``/``lower`` as in
        :func:`evaluate`. The record is of kind ``timing``, status ``"held"`` or ``"not held"``;
        it never raises, whatever the machine's load.
        """
        holds, criterion = evaluate(measured, upper=upper, lower=lower)
        return self._record(figure, claim, measured, criterion, "held" if holds else "not held", note, "timing", "",
                            slack(measured, upper=upper, lower=lower))

    def _record(self, figure, claim, measured, criterion, status, note, kind, source, slack_text) -> CheckRecord:
        record = CheckRecord(
            chapter=self.chapter,
            figure=figure,
            claim=claim,
            measured=_as_number(measured),
            criterion=criterion,
            status=status,
            note=note,
            mode="quick" if quick() else "full",
            kind=kind,
            source=source,
            slack=slack_text,
        )
        self.records[(figure, claim)] = record
        self._write()
        mark = {"pass": "✔", "discrepancy": "≠", "fail": "✘", "held": "⏱", "not held": "⏱"}[status]
        label = {"claim": "", "reference": f" (vs {source})", "discrepancy": f" ({source}'s discrepancy)",
                 "timing": " (timing on this machine)"}[kind]
        print(f"{mark} {figure}: {claim}{label}: measured {_fmt(record.measured)}, claim {criterion} [{status}]")
        return record

    def _write(self) -> None:
        folder = os.environ.get("MBS_CHECKS_DIR")
        if not folder:
            return
        path = Path(folder) / f"{self.chapter}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps([asdict(r) for r in self.records.values()], indent=1, ensure_ascii=False))
        os.replace(tmp, path)


def load_records(folder, chapters) -> dict[str, list[CheckRecord] | None]:
    """Read the records of ``chapters`` from ``folder``; ``None`` for a chapter with no file."""
    out: dict[str, list[CheckRecord] | None] = {}
    for chapter in chapters:
        path = Path(folder) / f"{chapter}.json"
        out[chapter] = [CheckRecord(**r) for r in json.loads(path.read_text())] if path.exists() else None
    return out
