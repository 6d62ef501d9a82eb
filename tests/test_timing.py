import pytest

from mbslib.timing import Timing, time_interleaved


def test_interleaved_timing_orders_unequal_work():
    def work(n):
        return lambda: sum(i * i for i in range(n))

    times = time_interleaved({"small": work(1_000), "large": work(100_000)}, rounds=3, min_time=0.01)
    assert set(times) == {"small", "large"}
    assert all(t.rounds == 3 and t.low <= t.median <= t.high for t in times.values())
    assert f"{times['small']:.2g}".endswith(")")


def test_spread_and_validation():
    assert Timing(2.0, 1.0, 3.0, 3).spread == 1.0
    with pytest.raises(ValueError, match="rounds"):
        time_interleaved({"a": lambda: None}, rounds=0)
    with pytest.raises(ValueError, match="min_time"):
        time_interleaved({"a": lambda: None}, min_time=0)
