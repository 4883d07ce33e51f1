"""The statistics bench/perf_calibration.py reports (bench/calibration_stats.py), on hand-computed
cases: ranks with ties, Spearman's correlation, the tuner's loss, the error summary."""
import math
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from calibration_stats import abs_log_error, percentile, ranks, spearman, summary, time_scale, tuner_loss  # noqa: E402


def test_equal_values_share_the_mean_of_their_ranks():
    assert ranks([3.0, 1.0, 3.0, 2.0]) == [3.5, 1.0, 3.5, 2.0]


def test_values_within_the_tie_factor_of_a_run_tie():
    # 1600 and 1610 are 0.6 % apart: with a 5 % tie they share ranks 1 and 2; 2340 stays apart.
    assert ranks([2340.0, 1610.0, 1600.0], tie=1.05) == [3.0, 1.5, 1.5]
    assert ranks([2340.0, 1610.0, 1600.0]) == [3.0, 2.0, 1.0]


def test_spearman_of_a_tie_in_one_sequence_only():
    # Measured 2340, 1610, 1600; predicted 2110, 1594, 1623: without ties the last two swap
    # (rho 0.5); tied, both are rank 1.5 on the measured side and on the predicted side.
    pred, meas = [2110.0, 1594.0, 1623.0], [2340.0, 1610.0, 1600.0]
    assert spearman(pred, meas) == pytest.approx(0.5)
    assert spearman(pred, meas, tie=1.05) == pytest.approx(1.0)
    assert spearman([1.0, 2.0, 3.0], [30.0, 20.0, 10.0]) == pytest.approx(-1.0)
    assert spearman([1.0, 1.0], [1.0, 2.0]) is None
    with pytest.raises(ValueError):
        spearman([1.0], [1.0])


def test_the_tuner_loses_the_measured_ratio_of_its_pick_to_the_best():
    assert tuner_loss([5.0, 1.0, 3.0], [2.0, 8.0, 4.0]) == pytest.approx(4.0)
    assert tuner_loss([1.0, 2.0], [1.0, 2.0]) == 1.0


def test_the_summary_is_count_median_p90_and_max_of_the_log_errors():
    errs = [abs_log_error(p, 1.0) for p in (1.0, math.e, 1 / math.e, math.e ** 2)]
    assert errs == pytest.approx([0.0, 1.0, 1.0, 2.0])
    n, med, p90, worst = summary(errs)
    assert (n, worst) == (4, pytest.approx(2.0))
    assert med == pytest.approx(1.0)
    assert p90 == pytest.approx(percentile(errs, 90)) == pytest.approx(1.7)


def test_a_time_scale_is_the_median_ratio_in_logs():
    # ln(measured / predicted): ln 2, ln 2, ln 1 -> median ln 2, whatever the order
    assert time_scale([4.0, 1.0, 2.0], [4.0, 2.0, 4.0]) == pytest.approx(2.0)
    # an even count takes the geometric mean of the middle two: ln 0.5 and ln 2 -> 1
    assert time_scale([2.0, 1.0, 1.0, 1.0], [1.0, 2.0, 0.25, 8.0]) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        time_scale([1.0, 2.0], [1.0])
