"""Report tables of the validation harness."""

from validation.checks import CheckRow
from validation.report import format_table, summary_rows


def _row(check, engine, p, verdict):
    return CheckRow("case", check, engine, 0.1, p, "p >= 1e-4", verdict)


def test_summary_keeps_a_failure_and_the_worst_p_value():
    rows = [_row("direction u0 ~ law", "pydpowl", 0.3, "PASS"), _row("direction u1 ~ law", "pydpowl", 1e-6, "FAIL"),
            _row("norm ~ Gamma(5, rate=1)", "pydpowl", 0.5, "PASS")]
    out = summary_rows(rows)
    assert len(out) == 2
    direction = [r for r in out if r.check.startswith("direction")][0]
    assert direction.verdict == "FAIL" and direction.p_value == 1e-6
    assert "2 tests" in direction.check


def test_markdown_escapes_pipes_and_marks_failures():
    rows = [CheckRow("c", "||theta_R - theta_py|| <= bound", "both", 1.0, None, "<= 2", "FAIL")]
    text = format_table(rows)
    line = text.splitlines()[2]
    assert "\\|\\|theta_R" in line and "**FAIL**" in line
    assert line.count(" | ") == 6  # seven cells: the escaped pipes do not split cells
