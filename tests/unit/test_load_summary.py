"""The load test's figures (``tests/load/load_summary.py``): what its verdicts rest on."""

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "load"))

# tests/load is not a package: its modules are imported from its folder, as the script does.
from load_summary import (
    answers_table,
    baseline_window,
    growth,
    health_target,
    memory_targets,
    percentile,
    server_errors,
    targets_table,
)

MIB = 1024 * 1024


def test_percentiles_are_nearest_rank():
    ordered = [float(value) for value in range(1, 101)]
    assert percentile(ordered, 0.50) == 50.0
    assert percentile(ordered, 0.99) == 99.0
    assert percentile([7.0], 0.99) == 7.0
    assert percentile([1.0, 2.0, 3.0], 0.99) == 3.0


def test_a_health_check_over_200_ms_in_one_sample_of_a_hundred_passes_but_two_miss():
    fast = [10.0] * 98
    assert health_target([*fast, 10.0, 900.0], failed=0).met
    assert not health_target([*fast, 900.0, 900.0], failed=0).met


def test_a_failed_health_check_misses_the_target_however_fast_the_others():
    assert not health_target([5.0] * 100, failed=1).met
    assert not health_target([], failed=0).met


def test_growth_is_the_peak_over_the_median_of_the_first_minute():
    series = [(0.0, 100.0), (5.0, 300.0), (10.0, 100.0), (70.0, 140.0), (300.0, 160.0)]
    found = growth(series, window=60.0)
    assert found is not None
    assert (found.baseline, found.peak, found.last) == (100.0, 300.0, 160.0)
    assert found.ratio == 3.0


def test_a_process_first_seen_after_the_first_minute_takes_its_first_sample_as_baseline():
    found = growth([(120.0, 80.0), (125.0, 100.0)], window=60.0)
    assert found is not None
    assert found.baseline == 80.0
    assert growth([], window=60.0) is None


def test_a_short_run_takes_its_first_quarter_as_the_baseline():
    assert baseline_window(60.0) == 15.0
    assert baseline_window(600.0) == 60.0


def test_memory_that_grows_past_one_and_a_half_times_misses_its_target():
    series = {
        "flat": [(0.0, 100.0 * MIB), (30.0, 140.0 * MIB)],
        "growing": [(0.0, 100.0 * MIB), (30.0, 151.0 * MIB)],
    }
    verdicts = {t.what: t.met for t in memory_targets(series, window=10.0)}
    assert verdicts == {"RSS flat": True, "RSS growing": False}


def test_only_5xx_answers_count_as_server_errors():
    counts = {
        "over-cap body": Counter({"413": 3, "closed": 2}),
        "agent file": Counter({"400": 1, "500": 2, "503": 1}),
    }
    assert server_errors(counts) == 3


def test_the_tables_show_every_attack_and_every_verdict():
    counts = {"flood": Counter({"429": 5, "200": 2, "no answer": 1})}
    shown = answers_table(counts)
    assert "flood" in shown
    assert "200: 2, 429: 5, no answer: 1" in shown
    verdicts = targets_table([health_target([500.0], failed=0)])
    assert "MISSED" in verdicts
    assert "p99 500.0" in verdicts
