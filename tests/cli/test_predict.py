"""Tests of ``pydpowl predict`` (pydpowl.cli.predict): fit, predict, and a tampered model rejected."""

import json

import numpy as np
import pandas as pd
import pytest

from pydpowl.cli import main
from pydpowl.datasets import make_synthetic_owl

DATA_OPTS = ["--treatment", "arm", "--benefit", "B", "--features", "x1,x2,x3,x4", "--bounds", "0:1,0:1,0:1,0:1",
             "--weights-upper-bound", "30"]


@pytest.fixture
def files(tmp_path):
    d = make_synthetic_owl(500, random_state=4)
    frame = d.X.copy()
    frame["arm"] = d.treatment.astype(int)  # -1 / 1 coding
    frame["B"] = d.benefit
    frame["id"] = [f"p{i}" for i in range(500)]
    train = tmp_path / "train.csv"
    frame.to_csv(train, index=False)
    new = tmp_path / "new.csv"
    frame[["id", "x4", "x3", "x2", "x1"]].head(50).to_csv(new, index=False)  # other column order
    model = tmp_path / "model.json"
    assert main(["fit", "--data", str(train), *DATA_OPTS, "--epsilon", "50", "--gamma", "30", "--seed", "2",
                 "--out", str(model)]) == 0
    return frame, new, model


def test_help_has_examples(capsys):
    with pytest.raises(SystemExit) as info:
        main(["predict", "--help"])
    assert info.value.code == 0
    assert "examples:" in capsys.readouterr().out


def test_predict_end_to_end(files, tmp_path, capsys):
    frame, new, model = files
    out = tmp_path / "assignments.csv"
    capsys.readouterr()
    assert main(["predict", "--model", str(model), "--data", str(new), "--id-column", "id", "--out", str(out)]) == 0
    pred = pd.read_csv(out)
    assert list(pred.columns) == ["id", "decision_value", "recommended", "recommended_label"]
    content = json.loads(model.read_text())
    expect = frame[["x1", "x2", "x3", "x4"]].head(50).to_numpy() @ np.array(content["coef"]) + content["intercept"]
    np.testing.assert_allclose(pred.decision_value, expect, rtol=1e-12)
    assert (pred.recommended == np.where(expect > 0, 1, -1)).all()
    assert pred.id.tolist() == frame.id.head(50).tolist()


def test_tampered_model_is_rejected(files, tmp_path, capsys):
    _, new, model = files
    content = json.loads(model.read_text())
    content["coef"][1] = -content["coef"][1]
    model.write_text(json.dumps(content))
    capsys.readouterr()
    status = main(["predict", "--model", str(model), "--data", str(new), "--out", str(tmp_path / "a.csv")])
    err = capsys.readouterr().err.strip()
    assert status == 2 and "checksum mismatch" in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "a.csv").exists()


def test_missing_feature_column_is_named(files, tmp_path, capsys):
    _, new, model = files
    pd.read_csv(new).drop(columns=["x3"]).to_csv(new, index=False)
    capsys.readouterr()
    status = main(["predict", "--model", str(model), "--data", str(new), "--out", str(tmp_path / "a.csv")])
    err = capsys.readouterr().err.strip()
    assert status == 2 and "['x3']" in err and len(err.splitlines()) == 1


def test_signed_model_with_a_key_file(files, tmp_path, capsys):
    """Issue 22.8: fit --key-file signs the model; predict --key-file refuses a forged one (checksum recomputed)."""
    from pydpowl.model_io import canonical_checksum

    frame, new, _ = files
    train = tmp_path / "train.csv"
    key = tmp_path / "model.key"
    key.write_text("3f6c0d5e9a8b7c6d5e4f3a2b1c0d9e8f\n")  # a trailing newline, as `openssl rand -hex 16 >` writes
    model = tmp_path / "signed.json"
    assert main(["fit", "--data", str(train), *DATA_OPTS, "--epsilon", "50", "--gamma", "30", "--seed", "2",
                 "--key-file", str(key), "--out", str(model)]) == 0
    assert "signature" in json.loads(model.read_text())
    capsys.readouterr()
    out = tmp_path / "a.csv"
    assert main(["predict", "--model", str(model), "--data", str(new), "--key-file", str(key), "--out",
                 str(out)]) == 0
    assert "signature verified with the key in" in capsys.readouterr().out
    content = json.loads(model.read_text())
    content["coef"][0] += 1.0
    content["checksum"] = {"sha256": canonical_checksum(content)}
    model.write_text(json.dumps(content))
    assert main(["predict", "--model", str(model), "--data", str(new), "--out", str(out)]) == 0  # no key: loads
    status = main(["predict", "--model", str(model), "--data", str(new), "--key-file", str(key), "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2 and "signature mismatch" in err
    status = main(["predict", "--model", str(model), "--data", str(new), "--key-file", str(tmp_path / "nokey"),
                   "--out", str(out)])
    assert status == 2 and "--key-file" in capsys.readouterr().err


def test_out_in_a_missing_directory_is_created_and_said(files, tmp_path, capsys):
    """Issue 22.5: predict --out made missing directories silently; like the other commands it creates them,
    and now says so; a path through a file is refused by name."""
    _, new, model = files
    out = tmp_path / "results" / "today" / "a.csv"
    capsys.readouterr()
    assert main(["predict", "--model", str(model), "--data", str(new), "--out", str(out)]) == 0
    assert out.is_file() and f"created directory {out.parent}" in capsys.readouterr().out
    assert main(["predict", "--model", str(model), "--data", str(new), "--out", str(out)]) == 0
    assert "created directory" not in capsys.readouterr().out  # only when it was missing
    status = main(["predict", "--model", str(model), "--data", str(new), "--out", str(out / "b.csv")])
    assert status == 2 and "is not a directory" in capsys.readouterr().err
