"""Measured CPU time, robustly: interleaved repetitions, median and spread.

A paper's cost claim is checked on the work the library counts (steps, evaluations, Newton
iterations, factorisations); the CPU time a chapter shows beside it is measured here and goes on
the scorecard as *timing on this machine* (:meth:`mbslib.checks.Scorecard.timing`), never as a
verdict. The machine may be busy: every candidate is run in turn, round after round, so a burst
of load hits all of them alike, and the median over the rounds with its spread is reported.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Timing:
    """CPU seconds of one call: ``median`` over the rounds, ``low``/``high`` their extremes."""

    median: float
    low: float
    high: float
    rounds: int

    @property
    def spread(self) -> float:
        """``(high − low) / median``: how much the rounds disagree."""
        return (self.high - self.low) / self.median if self.median > 0 else 0.0

    def __format__(self, spec: str) -> str:
        spec = spec or ".3g"
        return f"{self.median:{spec}} s (range {self.low:{spec}}–{self.high:{spec}})"


def time_interleaved(calls: Mapping[str, Callable[[], object]], *, rounds: int = 5,
                     min_time: float = 0.05) -> dict[str, Timing]:
    """CPU time of each ``calls[name]()``, measured in ``rounds`` interleaved rounds.

    A call shorter than ``min_time`` seconds is repeated within a round until the round lasts
    that long, and its time per call is reported. Every call is made once before timing (to
    compile and warm caches).
    """
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    if not min_time > 0:
        raise ValueError(f"min_time must be positive, got {min_time}")
    repeats = {}
    for name, call in calls.items():
        start = time.process_time()
        call()
        once = time.process_time() - start
        repeats[name] = max(1, int(np.ceil(min_time / once))) if once > 0 else 100
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            start = time.process_time()
            for _ in range(repeats[name]):
                call()
            samples[name].append((time.process_time() - start) / repeats[name])
    return {name: Timing(float(np.median(s)), float(min(s)), float(max(s)), rounds) for name, s in samples.items()}
