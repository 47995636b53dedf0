"""Tests of ``pydpowl fit`` (pydpowl.cli.fit), end to end on a CSV written here."""

import json

import numpy as np
import pytest

from pydpowl.cli import main
from pydpowl.datasets import make_synthetic_owl
from pydpowl.model_io import load_model

DATA_OPTS = ["--treatment", "arm", "--treated", "new", "--benefit", "B", "--features", "x1,x2,x3,x4",
             "--bounds", "x1=0:1,x2=0:1,x3=0:1,x4=0:1", "--weights-upper-bound", "30"]


@pytest.fixture
def csv(tmp_path):
    d = make_synthetic_owl(400, random_state=3)
    frame = d.X.copy()
    frame["arm"] = np.where(d.treatment > 0, "new", "old")
    frame["B"] = d.benefit
    path = tmp_path / "train.csv"
    frame.to_csv(path, index=False)
    return path


def test_help_has_examples(capsys):
    with pytest.raises(SystemExit) as info:
        main(["fit", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out and "pydpowl fit --data" in out
    for opt in ("--epsilon", "--gamma", "--bounds", "--weights-upper-bound", "--propensity", "--out"):
        assert opt in out


def test_fit_writes_a_private_model(csv, tmp_path, capsys):
    out = tmp_path / "model.json"
    assert main(["fit", "--data", str(csv), *DATA_OPTS, "--epsilon", "2", "--gamma", "40", "--seed", "1",
                 "--out", str(out)]) == 0
    model = load_model(out)
    assert (model.epsilon, model.gamma, model.treatment_labels) == (2.0, 40.0, ("new", "old"))
    text = capsys.readouterr().out
    assert "+1 = new, -1 = old" in text and "warning: seed 1" in text
    assert "noise" not in json.dumps(json.loads(out.read_text()))


@pytest.mark.parametrize("extra, message", [
    (["--epsilon", "0", "--gamma", "40"], "--epsilon must be a finite number > 0"),
    (["--epsilon", "1", "--gamma", "-1"], "gamma must be in"),
])
def test_errors_are_one_line_with_status_2(csv, tmp_path, capsys, extra, message):
    status = main(["fit", "--data", str(csv), *DATA_OPTS, *extra, "--out", str(tmp_path / "m.json")])
    err = capsys.readouterr().err.strip()
    assert status == 2 and message in err and len(err.splitlines()) == 1, err


def test_missing_public_settings_are_named(csv, tmp_path, capsys):
    status = main(["fit", "--data", str(csv), "--treatment", "arm", "--treated", "new", "--benefit", "B",
                   "--features", "x1,x2", "--epsilon", "1", "--gamma", "5", "--out", str(tmp_path / "m.json")])
    err = capsys.readouterr().err.strip()
    assert status == 2 and "--bounds, --weights-upper-bound" in err and len(err.splitlines()) == 1
