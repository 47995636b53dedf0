"""Tests of ``pydpowl analyze`` (pydpowl.cli.analyze), end to end on CSVs written here."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pydpowl.cli import main
from pydpowl.datasets import make_synthetic_owl

OPTS = ["--treatment", "arm", "--treated", "new", "--benefit", "B", "--features", "x1,x2,x3,x4",
        "--bounds", "x1=0:1,x2=0:1,x3=0:1,x4=0:1", "--benefit-bounds=-10:10", "--weights-upper-bound", "40"]


@pytest.fixture
def csv(tmp_path):
    d = make_synthetic_owl(800, random_state=3, shift=None)
    frame = d.X.copy()
    frame["arm"] = np.where(d.treatment > 0, "new", "old")
    frame["B"] = d.benefit
    path = tmp_path / "trial.csv"
    frame.to_csv(path, index=False)
    return path


def test_help_has_examples(capsys):
    with pytest.raises(SystemExit) as info:
        main(["analyze", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out and "pydpowl analyze --data" in out
    for opt in ("--total-epsilon", "--benefit-bounds", "--propensity-model", "--budget-split", "--out"):
        assert opt in out


def test_analyze_writes_everything_and_predict_reads_the_model(csv, tmp_path, capsys):
    out = tmp_path / "res"
    assert main(["analyze", "--data", str(csv), *OPTS, "--propensity", "0.5", "--total-epsilon", "2", "--seed", "1",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "value of the rule" in text and "warning: seed 1" in text
    for name in ("model.json", "ledger.json", "value.json", "report.md", "value.png", "coefficients.png"):
        assert (out / name).is_file(), name
    ledger = json.loads((out / "ledger.json").read_text())
    assert ledger["total_epsilon"] == 2.0 and ledger["spent"] <= 2.0
    assert main(["predict", "--model", str(out / "model.json"), "--data", str(csv), "--out",
                 str(tmp_path / "pred.csv")]) == 0
    assert "recommended +1 (new)" in capsys.readouterr().out


def test_analyze_with_a_propensity_model_and_a_split(csv, tmp_path):
    out = tmp_path / "res"
    assert main(["analyze", "--data", str(csv), *OPTS, "--propensity-model", "logistic", "--logit-bound", "1.5",
                 "--total-epsilon", "1", "--budget-split", "propensity=0.1,evaluation_fraction=0.4", "--gamma", "300",
                 "--seed", "2", "--public-n", "--out", str(out)]) == 0
    ledger = json.loads((out / "ledger.json").read_text())
    eps = {r["name"].split(" (")[0]: r["epsilon"] for r in ledger["releases"]}
    assert eps["propensity model"] == pytest.approx(0.1 * 0.6) and "choice of gamma" not in eps  # of the learning part
    rows = {p["name"]: p["rows"] for p in ledger["parts"]}
    assert rows == {"learning": 480, "evaluation": 320}


def _err(argv, capsys):
    try:
        code = main(["analyze", *argv])
    except SystemExit as exc:  # argparse usage errors
        code = exc.code
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    return code, lines


def test_errors_are_one_line_in_a_fresh_process(csv, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pydpowl.cli", "analyze", "--data", str(csv), *OPTS, "--propensity",
                           "0.5", "--total-epsilon", "-1", "--out", str(tmp_path / "o")],
                          capture_output=True, text=True)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and lines == [
        "pydpowl analyze: error: --total-epsilon must be in (0, inf), got --total-epsilon -1.0."], lines


@pytest.mark.parametrize("extra, message", [
    (["--propensity", "0.5", "--total-epsilon", "0"], "--total-epsilon must be in (0, inf), got --total-epsilon 0.0."),
    (["--propensity", "1.5", "--total-epsilon", "1"], "--propensity must be in (0, 1), got --propensity 1.5."),
    (["--propensity", "0.5", "--total-epsilon", "1", "--level", "95"], "--level must be in (0, 1), got --level 95.0."),
    (["--propensity", "0.5", "--total-epsilon", "1", "--gammas", "10,-3"],
     "--gammas must hold numbers in (0, inf), got -3.0 in '10,-3'."),
    (["--propensity", "0.5", "--total-epsilon", "1", "--budget-split", "selection=2"],
     "--budget-split 'selection=2': selection must be in (0, 1), got selection=2.0."),
])
def test_bad_values_give_one_line_naming_the_argument_value_and_bound(csv, tmp_path, capsys, extra, message):
    code, lines = _err(["--data", str(csv), *OPTS, *extra, "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and lines == [f"pydpowl analyze: error: {message}"], lines


def test_bad_benefit_bounds_and_missing_settings(csv, tmp_path, capsys):
    opts = [o for o in OPTS]
    opts[opts.index("--benefit-bounds=-10:10")] = "--benefit-bounds=10:-10"
    code, lines = _err(["--data", str(csv), *opts, "--propensity", "0.5", "--total-epsilon", "1", "--out",
                        str(tmp_path / "o")], capsys)
    assert code == 2 and lines == ["pydpowl analyze: error: --benefit-bounds must satisfy LO < HI (finite), "
                                   "got '10:-10'."], lines
    code, lines = _err(["--data", str(csv), "--benefit-bounds", "0:1", "--propensity", "0.5", "--total-epsilon", "1",
                        "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and len(lines) == 1
    assert "needs --treatment, --benefit, --features, --bounds, --weights-upper-bound" in lines[0]
    code, lines = _err(["--data", str(csv), *OPTS, "--total-epsilon", "1", "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and len(lines) == 1 and "one of the arguments --propensity --propensity-model is required" \
        in lines[0]


CYP_FILE = Path(__file__).resolve().parents[3] / "shared" / "data" / "cyp_guides_clinical.csv"
#: made-up rows in the public file's layout (tests/reference/cyp_guides_schema.py): 144 randomised patients
SCHEMA_FILE = Path(__file__).resolve().parents[1] / "reference" / "cyp_guides_schema.csv"


@pytest.mark.allow_skip("the public trial file is outside the repository; the 'layout' case runs the same command "
                        "on the made-up file in its layout, which every checkout has")
@pytest.mark.parametrize("path, n", [(SCHEMA_FILE, 144), (CYP_FILE, 1459)], ids=["layout", "public"])
def test_public_cyp_guides_file_if_present(path, n, tmp_path, capsys):
    if not path.exists():
        pytest.skip("the public CYP-GUIDES file is not next to this checkout")
    out = tmp_path / "cyp"
    assert main(["analyze", "--data", str(path), "--data-format", "cyp-guides", "--benefit-bounds",
                 f"0:{math.log(8760):.6f}", "--propensity", "0.6667", "--total-epsilon", "1", "--seed", "1",
                 "--public-n", "--out", str(out)]) == 0
    value = json.loads((out / "value.json").read_text())
    assert value["ci_low"] < value["estimate"] < value["ci_high"]
    ledger = json.loads((out / "ledger.json").read_text())
    assert {p["name"]: p["rows"] for p in ledger["parts"]} == {"learning": n - n // 2, "evaluation": n // 2}
    # issue 22.5: the benefit's definition and the length of stay in hours next to every value
    hours = 24 * 365 * math.exp(-value["estimate"])
    assert value["benefit"].startswith("benefit = log(24*365) - log(length of stay in hours)")
    assert value["clinical"]["value"].startswith(f"geometric-mean length of stay {hours:.3g} hours")
    report = (out / "report.md").read_text()
    assert f"geometric-mean length of stay {hours:.3g} hours" in report and "length of stay x " in report
    assert "public rule" in report and "in mean benefit" in report  # gamma: the public rule by default
    with pytest.raises(ValueError, match="codes the columns itself"):
        main(["--debug", "analyze", "--data", str(path), "--data-format", "cyp-guides", "--treatment", "x",
              "--benefit-bounds", "0:9", "--propensity", "0.6667", "--total-epsilon", "1", "--out", str(out)])


def test_default_gamma_is_the_public_rule_and_the_mechanism_is_named(csv, tmp_path, capsys):
    from pydpowl.analysis import DEFAULT_GAMMAS
    from pydpowl.model_io import load_model

    out = tmp_path / "res"
    assert main(["analyze", "--data", str(csv), *OPTS, "--propensity", "0.5", "--total-epsilon", "1", "--seed", "3",
                 "--out", str(out)]) == 0
    model = load_model(out / "model.json")
    assert "public rule" in model.tuning and "objective perturbation" in model.mechanism
    assert "rule released by weighted objective perturbation" in capsys.readouterr().out
    assert "Released by weighted objective perturbation" in (out / "report.md").read_text()
    out2 = tmp_path / "res2"
    assert main(["analyze", "--data", str(csv), *OPTS, "--propensity", "0.5", "--total-epsilon", "1", "--seed", "3",
                 "--gammas", ",".join(f"{g:g}" for g in DEFAULT_GAMMAS), "--out", str(out2)]) == 0
    model = load_model(out2 / "model.json")
    assert "/".join(f"{g:g}" for g in DEFAULT_GAMMAS) in model.tuning and "output perturbation" in model.mechanism


@pytest.mark.parametrize("neighbour", ["arm", "benefit", "feature"])
def test_a_neighbour_that_changes_a_count_changes_nothing_the_user_sees(neighbour, tmp_path):
    """Issue 21.1: D and D' differ in one record that the mechanism cannot see (weight 0, or clipped to the same
    value) but that changes an arm or clip count; with the same seed every release is bit-identical, so stdout,
    stderr, warnings and every file written must be too."""
    from validation.audit.disclosure import first_difference, seen_pair

    differs, detail = first_difference(*seen_pair("pydpowl analyze", neighbour, tmp_path))
    assert not differs, detail


def test_diagnostics_print_the_non_private_counts_labelled_as_such(tmp_path):
    from validation.audit.disclosure import first_difference, seen_pair

    D, D1 = seen_pair("pydpowl analyze", "benefit", tmp_path, diagnostics=True)
    differs, _ = first_difference(D, D1)
    assert differs == ("stdout",)  # the files are the same: diagnostics are never written
    assert "NON-PRIVATE DIAGNOSTICS" in D.stdout and "benefits clipped to the bounds: 0" in D.stdout
    assert "benefits clipped to the bounds: 1" in D1.stdout and "rows read: 240" in D.stdout


def test_n_is_printed_only_when_declared_public(csv, tmp_path, capsys, mentions):
    base = ["analyze", "--data", str(csv), *OPTS, "--propensity", "0.5", "--total-epsilon", "2", "--gamma", "100",
            "--seed", "1"]
    assert main([*base, "--out", str(tmp_path / "a")]) == 0
    text = capsys.readouterr().out
    report = (tmp_path / "a" / "report.md").read_text()
    ledger = json.loads((tmp_path / "a" / "ledger.json").read_text())
    assert not mentions(text, 800) and not mentions(text, 400) and "n not released" in text
    assert not mentions(report, 800) and not mentions(report, 400) and "n not released" in report
    assert all("rows" not in p for p in ledger["parts"]) and all("rows" not in r for r in ledger["releases"])
    assert main([*base, "--public-n", "--out", str(tmp_path / "b")]) == 0
    text = capsys.readouterr().out
    ledger = json.loads((tmp_path / "b" / "ledger.json").read_text())
    assert "n = 800 rows (declared public with --public-n)" in text
    assert {p["name"]: p["rows"] for p in ledger["parts"]} == {"learning": 400, "evaluation": 400}


def test_a_lowered_weight_bound_is_printed(csv, tmp_path, capsys):
    # benefit range 20, P = 0.5: every weight is at most 40, so W = 100 is lowered to 40, and stdout says so
    argv = [a if a != "40" else "100" for a in OPTS]
    assert main(["analyze", "--data", str(csv), *argv, "--propensity", "0.5", "--total-epsilon", "2",
                 "--out", str(tmp_path / "o")]) == 0
    assert ("weights_upper_bound: 100 given; 40 used = (U - L) / smallest public propensity (the weights cannot "
            "exceed it)") in capsys.readouterr().out
