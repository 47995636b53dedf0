"""Tests of validation.audit.disclosure: the default output channels on neighbours that change only a count."""

import numpy as np
import pytest

from validation.audit.disclosure import (NEIGHBOURS, Seen, api_rows, audited_commands, disclosure_rows,
                                         disclosure_table, first_difference, neighbour_frames)


def test_neighbours_differ_in_record_0_only_and_are_invisible_to_the_mechanism():
    for kind in NEIGHBOURS:
        D, D1 = neighbour_frames(kind)
        changed = [c for c in D.columns if D.loc[0, c] != D1.loc[0, c]]
        assert len(changed) == 1 and D.iloc[1:].equals(D1.iloc[1:]), kind
    D, D1 = neighbour_frames("arm")
    assert D.loc[0, "B"] == D1.loc[0, "B"] == 0.0  # weight 0 in both: its arm changes nothing the mechanism uses
    D, D1 = neighbour_frames("weight")
    assert D.loc[0, "B"] / 0.5 == 10.0 and D1.loc[0, "B"] / 0.5 > 10.0  # W, then clipped to W
    assert (np.r_[D["B"].to_numpy()[1:]] / 0.5 < 10.0).all()


def test_first_difference_names_the_channel_and_the_line():
    a = Seen(stdout="x\ny 1\n", stderr="", warnings=(), files={"out/report.md": b"same"})
    b = Seen(stdout="x\ny 2\n", stderr="", warnings=(), files={"out/report.md": b"same"})
    assert first_difference(a, a) == ((), "")
    assert first_difference(a, b) == (("stdout",), "stdout: 'y 1' vs 'y 2'")


@pytest.mark.slow
def test_every_default_output_is_identical_and_the_controls_differ(tmp_path):
    """The audit configuration of issue 21.1 as ``make audit`` runs it (the per-command pairs are in the default
    suite: tests/cli/test_analyze.py, tests/cli/test_fit.py, tests/cli/test_tune.py)."""
    rows = disclosure_rows(tmp_path) + api_rows()
    assert all(r.passed for r in rows), disclosure_table(rows)
    controls = [r for r in rows if r.control]
    commands = audited_commands()
    assert len(controls) == len(commands) and all(r.differs == ("stdout",) for r in controls)
    assert len(rows) == sum(len(kinds) for _, _, kinds in commands) + len(controls) + 2
