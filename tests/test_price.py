"""attnlab.price prices what a Snakemake call would train: in CPU-hours, or CPU-minutes below an hour, so a short
quick-profile ablation is never priced at 0.0."""

import pytest

from attnlab import price


@pytest.mark.parametrize("hours, said", [(0.0001, "1 CPU-minute"), (0.03, "2 CPU-minutes"), (0.999, "60 CPU-minutes"),
                                         (2.34, "2.3 CPU-hours")])
def test_a_call_is_priced_in_minutes_below_an_hour(hours, said):
    assert price.cpu_time(hours) == said


def test_one_quick_run_is_priced_above_zero():
    rates = price.hours_per_run("quick")
    assert rates["ladder"] > 0 and price.cpu_time(rates["ladder"]) != "0 CPU-minutes"
