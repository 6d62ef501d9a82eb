"""The book's scorecard: every claim a chapter checks, with the measured value.

A chapter opens a :class:`Scorecard` in its first cell and calls :meth:`Scorecard.check` after
each figure or table. A check compares a measured number with the paper's claim (a value within
a tolerance, or a bound), prints one line, records it and raises ``AssertionError`` when the
claim fails, so the notebook test and the book build fail.

A claim that the chapter has shown *not* to reproduce is checked with ``discrepancy="why"``:
it is recorded as a discrepancy and the chapter goes on, but if the claim unexpectedly holds,
the check fails, so the reproduction note cannot go stale.

Records are written as JSON to the folder named by ``MBS_CHECKS_DIR`` (set by the book build
and by the tests); ``notebooks/scorecard.md`` renders them as one table.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from mbslib import quick


@dataclass(frozen=True)
class CheckRecord:
    """One checked claim.

    ``status`` is ``"pass"``, ``"fail"`` or ``"discrepancy"`` (a documented non-reproduction).
    ``criterion`` states the comparison in words, e.g. ``"≤ 1e-10"`` or ``"2 ± 0.1"``.
    """

    chapter: str
    figure: str
    claim: str
    measured: float | bool
    criterion: str
    status: str
    note: str
    mode: str

    def _ipython_display_(self):
        """Show nothing in a notebook: :meth:`Scorecard.check` has already printed the record's
        line, and a cell that ends with a check would repeat it as a dataclass repr."""


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
        discrepancy: str | None = None,
    ) -> CheckRecord:
        """Check one claim of ``figure`` (e.g. ``"Fig. 3"``, ``"Table 2"``), record and assert it.

        See :func:`evaluate` for the comparison forms. With ``discrepancy="reason"`` the claim
        is expected *not* to hold: it is recorded as a discrepancy, and an ``AssertionError``
        is raised if it holds after all.
        """
        holds, criterion = evaluate(measured, expected=expected, tol=tol, rtol=rtol, upper=upper, lower=lower)
        if discrepancy is None:
            status = "pass" if holds else "fail"
        else:
            status = "fail" if holds else "discrepancy"
        record = CheckRecord(
            chapter=self.chapter,
            figure=figure,
            claim=claim,
            measured=_as_number(measured),
            criterion=criterion,
            status=status,
            note=discrepancy or "",
            mode="quick" if quick() else "full",
        )
        self.records[(figure, claim)] = record
        self._write()
        mark = {"pass": "✔", "discrepancy": "≠", "fail": "✘"}[status]
        print(f"{mark} {figure}: {claim}: measured {_fmt(record.measured)}, claim {criterion} [{status}]")
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
