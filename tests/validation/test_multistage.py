"""The harness's multi-arm check (no R) and the shape of its DTRlearn2 rows."""

from validation.multistage import CrossCheck, multiarm_scipy_rows


def test_multiarm_rows_pass_within_the_certified_bound():
    rows = multiarm_scipy_rows((3,))
    assert [r.verdict for r in rows] == ["PASS"]
    assert rows[0].statistic < 1e-8


def test_cross_check_verdict_needs_every_stage_and_the_value():
    ok = CrossCheck("c", (0.97, 0.99), 1.0, 1.1, 0.1, (10, 20))
    assert ok.passed
    assert not CrossCheck("c", (0.94, 0.99), 1.0, 1.0, 0.1, (10, 20)).passed
    assert not CrossCheck("c", (0.99, 0.99), 1.0, 1.5, 0.1, (10, 20)).passed  # 0.5 > 1.96 sqrt(2) 0.1
