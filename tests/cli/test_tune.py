"""Tests of ``pydpowl tune`` (pydpowl.cli.tune): Algorithm 2 and the two ways without D0."""

import json
import re

import pandas as pd
import pytest

from pydpowl.cli import main
from pydpowl.datasets import make_synthetic_owl
from pydpowl.studies.gamma_table import GammaTable

DATA_OPTS = ["--treatment", "arm", "--benefit", "B", "--features", "x1,x2,x3,x4", "--bounds", "0:1,0:1,0:1,0:1",
             "--weights-upper-bound", "30"]


@pytest.fixture
def private_csv(tmp_path):
    d = make_synthetic_owl(600, random_state=5)
    frame = d.X.copy()
    frame["arm"] = d.treatment.astype(int)
    frame["B"] = d.benefit
    path = tmp_path / "private.csv"
    frame.to_csv(path, index=False)
    return path


def test_help_has_examples(capsys):
    with pytest.raises(SystemExit) as info:
        main(["tune", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out and "split-budget" in out and "--epsilon-select" in out


def test_public_d0_writes_curves_and_table(tmp_path, capsys):
    out = tmp_path / "tune"
    assert main(["tune", "--n", "200,500", "--eps", "1,inf", "--gammas", "1,10,100", "--r", "10", "--seed", "3",
                 "--out", str(out)]) == 0
    curves = pd.read_csv(out / "tuning_curves.csv")
    assert len(curves) == 2 * 2 * 3 and curves.groupby(["n", "epsilon"]).selected.sum().eq(1).all()
    table = GammaTable.from_csv(out / "gamma_table.csv")
    assert len(table.cells) == 4
    assert (out / "tuning.png").is_file()
    text = capsys.readouterr().out
    assert "no privacy budget spent" in text and "resampling without replacement" in text


def test_split_budget_states_the_charges(private_csv, tmp_path, capsys):
    out = tmp_path / "nod0"
    assert main(["tune", "--method", "split-budget", "--data", str(private_csv), *DATA_OPTS,
                 "--epsilon-select", "0.5", "--epsilon-fit", "1.5", "--gammas", "10,50,200", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "split the budget epsilon1 + epsilon2" in text and "total epsilon = 2" in text
    model = json.loads((out / "model.json").read_text())
    assert model["epsilon"] == 1.5 and model["epsilon_total"] == 2.0 and "split-budget" in model["tuning"]
    assert "total epsilon = 2" in (out / "tuning.txt").read_text()


def test_split_data_is_parallel(private_csv, tmp_path, capsys):
    out = tmp_path / "nod0"
    assert main(["tune", "--method", "split-data", "--data", str(private_csv), *DATA_OPTS, "--epsilon", "1",
                 "--gammas", "10,50", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "split the data" in text and "parallel composition" in text
    assert json.loads((out / "model.json").read_text())["epsilon_total"] == 1.0


@pytest.mark.parametrize("args, message", [
    (["--method", "split-data"], "needs the private data"),
    (["--n", "200", "--eps", "1", "--m", "5000"], "m must be in"),
    (["--n", "200", "--eps", "1", "--gammas", "1,1"], "must not repeat"),
])
def test_errors_are_one_line(tmp_path, capsys, args, message):
    status = main(["tune", "--r", "3", "--no-progress", "--out", str(tmp_path), *args])
    err = capsys.readouterr().err.strip()
    assert status == 2 and message in err and len(err.splitlines()) == 1, err


def test_split_budget_needs_both_budgets(private_csv, tmp_path, capsys):
    status = main(["tune", "--method", "split-budget", "--data", str(private_csv), *DATA_OPTS,
                   "--epsilon-select", "1", "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert status == 2 and "--epsilon-select and --epsilon-fit" in err


@pytest.mark.parametrize("neighbour", ["arm", "weight"])
def test_a_neighbour_that_changes_a_count_changes_nothing_the_user_sees(neighbour, tmp_path):
    """Issue 21.1: the no-D0 methods run on the private data; a neighbour invisible to the mechanism but not to
    the arm or clip counts must change nothing printed or written (same seed: identical releases)."""
    from validation.audit.disclosure import first_difference, seen_pair

    differs, detail = first_difference(*seen_pair("pydpowl tune --method split-data", neighbour, tmp_path))
    assert not differs, detail


def test_split_data_sizes_only_when_n_is_declared_public(private_csv, tmp_path, capsys):
    base = ["tune", "--method", "split-data", "--data", str(private_csv), *DATA_OPTS, "--epsilon", "1",
            "--seed", "3", "--no-progress"]
    assert main([*base, "--out", str(tmp_path / "a")]) == 0
    text = capsys.readouterr().out + (tmp_path / "a" / "tuning.txt").read_text()
    text += (tmp_path / "a" / "model.json").read_text()
    assert "n not released" in text and not re.search(r"\bn = \d|\d rows|n_part = |n_select = |\b600\b", text)
    assert main([*base, "--public-n", "--out", str(tmp_path / "b")]) == 0
    text = capsys.readouterr().out
    assert "n = 600 rows (declared public with --public-n)" in text and "n = 300" in text
