"""Tests of ``pydpowl casestudy`` (pydpowl.cli.casestudy): default data, the public file, a user's CSV."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pydpowl.cli import main
from pydpowl.datasets import make_cyp_guides_style

PUBLIC_FILE = Path(__file__).resolve().parents[3] / "shared" / "data" / "cyp_guides_clinical.csv"
SCHEMA_FILE = Path(__file__).resolve().parents[1] / "reference" / "cyp_guides_schema.csv"
FAST = ["--runs", "10", "--sensitivity-runs", "5", "--sensitivity-gammas", "10,75", "--eps", "1,5,inf"]


def test_help_has_examples(capsys):
    with pytest.raises(SystemExit) as info:
        main(["casestudy", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out and "--treatment" in out and "--sensitivity-gammas" in out


def test_default_run_writes_table_and_figures(tmp_path, capsys):
    out = tmp_path / "cs"
    assert main(["casestudy", *FAST, "--out", str(out)]) == 0
    table = pd.read_csv(out / "table1.csv")
    assert sorted(table.epsilon) == [1.0, 5.0, math.inf]
    sens = pd.read_csv(out / "gamma_sensitivity.csv")
    assert set(sens.gamma) == {10.0, 75.0}
    for png in ("value_by_epsilon.png", "gamma_sensitivity.png"):
        assert (out / png).read_bytes()[:4] == b"\x89PNG"
    captured = capsys.readouterr()
    assert "built-in CYP-GUIDES-style data" in captured.out and "case study [" in captured.err


def test_users_csv(tmp_path, capsys):
    d = make_cyp_guides_style(500, random_state=3)
    frame = d.X.copy()
    frame["arm"] = np.where(d.treatment > 0, "guided", "standard")
    frame["score"] = d.benefit
    path = tmp_path / "mine.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "cs"
    assert main(["casestudy", *FAST, "--no-progress", "--data", str(path), "--treatment", "arm", "--treated",
                 "guided", "--benefit", "score", "--features", "age,male", "--bounds", "age=18:89,male=0:1",
                 "--propensity", "0.6667", "--weights-upper-bound", "28", "--no-sensitivity", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "your data" in text and "coding: treatment 'arm': +1 = guided, -1 = standard" in text
    assert not (out / "gamma_sensitivity.csv").exists()


@pytest.mark.allow_skip("the public trial file is outside the repository; the 'layout' case runs the same command "
                        "on a made-up file in its layout (tests/reference/cyp_guides_schema.csv), which every "
                        "checkout has")
@pytest.mark.parametrize("path, kept, dropped", [(SCHEMA_FILE, 144, 6), (PUBLIC_FILE, 1459, 41)],
                         ids=["layout", "public"])
def test_public_file_states_the_paper_coding(path, kept, dropped, tmp_path, capsys):
    if not path.is_file():
        pytest.skip("the public CYP-GUIDES file is not in this checkout's share")
    assert main(["casestudy", *FAST, "--no-progress", "--no-sensitivity", "--data", str(path),
                 "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert f"randomised (kept) {kept}" in text and "mdd = 1 if the diagnosis mentions MDD" in text
    assert f"not randomised (dropped) {dropped}" in text and "data counts (not private" in text


def test_column_options_without_data_are_an_error(tmp_path, capsys):
    status = main(["casestudy", "--treatment", "arm", "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert status == 2 and "--data" in err and len(err.splitlines()) == 1
