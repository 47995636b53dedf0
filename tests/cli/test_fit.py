"""Tests of ``pydpowl fit`` (pydpowl.cli.fit), end to end on a CSV written here."""

import hashlib
import json
import math

import numpy as np
import pytest

from pydpowl.cli import main
from pydpowl.estimators.summary import delta_text
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


def test_budget_file_refuses_a_release_beyond_the_total(csv, tmp_path, capsys):
    budget = tmp_path / "budget.json"
    common = ["fit", "--data", str(csv), *DATA_OPTS, "--gamma", "40", "--budget-file", str(budget)]
    assert main([*common, "--epsilon", "0.6", "--total-epsilon", "1.0", "--out", str(tmp_path / "m1.json")]) == 0
    assert json.loads(budget.read_text())  # the tally was written
    capsys.readouterr()
    # 0.6 + 0.6 > 1.0: refused before the data are read, no model written, nothing spent
    assert main([*common, "--epsilon", "0.6", "--out", str(tmp_path / "m2.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "error:" in err[0], err
    assert not (tmp_path / "m2.json").exists()
    assert main([*common, "--epsilon", "0.4", "--out", str(tmp_path / "m3.json")]) == 0
    out = capsys.readouterr().out
    # issue 21.5: the tally records each fit's delta and states the composed (epsilon, delta)
    tally = json.loads(budget.read_text())
    deltas = [r["delta"] for r in tally["releases"]]
    assert tally["version"] == 2 and len(deltas) == 2 and all(0 < d < 1e-7 for d in deltas)
    assert f"spent (1, {delta_text(math.fsum(deltas))})-DP of total epsilon 1 in 2 release(s)" in out
    # issue 21.6: the data file is named by a keyed fingerprint, not its plain SHA-256
    assert tally["dataset"].startswith("hmac-sha256:") and hashlib.sha256(csv.read_bytes()).hexdigest() not in \
        budget.read_text()


def test_budget_file_total_cannot_be_raised(csv, tmp_path, capsys):
    budget = tmp_path / "budget.json"
    common = ["fit", "--data", str(csv), *DATA_OPTS, "--gamma", "40", "--budget-file", str(budget)]
    assert main([*common, "--epsilon", "0.5", "--total-epsilon", "1.0", "--out", str(tmp_path / "a.json")]) == 0
    assert main([*common, "--epsilon", "0.5", "--total-epsilon", "5.0", "--out", str(tmp_path / "b.json")]) == 2
    assert "cannot be raised" in capsys.readouterr().err


def test_a_propensity_column_needs_a_stated_weight_sensitivity(csv, tmp_path, capsys):
    """Review item 6: per-subject propensities do not silently mean C = 0."""
    import pandas as pd

    frame = pd.read_csv(csv)
    frame["ps"] = 0.5
    frame.to_csv(csv, index=False)
    args = ["fit", "--data", str(csv), *DATA_OPTS, "--propensity", "column:ps", "--epsilon", "1", "--gamma", "40",
            "--out", str(tmp_path / "m.json")]
    assert main(args) == 2
    assert "weight_sensitivity" in capsys.readouterr().err
    assert main(args + ["--weight-sensitivity", "0"]) == 0
    assert load_model(tmp_path / "m.json").weight_sensitivity == 0.0
    assert main(args + ["--weight-sensitivity", "trivial"]) == 0
    assert load_model(tmp_path / "m.json").weight_sensitivity == 400 * 30.0


@pytest.mark.parametrize("neighbour", ["arm", "feature", "weight"])
def test_a_neighbour_that_changes_a_count_changes_nothing_the_user_sees(neighbour, tmp_path):
    """Issue 21.1: a neighbour invisible to the mechanism (weight 0, a feature or weight clipped to the same value)
    changes an arm or clip count; with the same seed the release is identical, so must be all the user sees."""
    from validation.audit.disclosure import first_difference, seen_pair

    differs, detail = first_difference(*seen_pair("pydpowl fit", neighbour, tmp_path))
    assert not differs, detail


def test_diagnostics_are_an_opt_in_labelled_non_private(tmp_path):
    from validation.audit.disclosure import first_difference, seen_pair

    D, D1 = seen_pair("pydpowl fit", "weight", tmp_path, diagnostics=True)
    assert first_difference(D, D1)[0] == ("stdout",)
    assert "NON-PRIVATE DIAGNOSTICS" in D.stdout and "weights clipped at W: 0" in D.stdout
    assert "weights clipped at W: 1" in D1.stdout and "Newton iterations" in D.stdout
    assert "NON-PRIVATE" not in (tmp_path / "fit-weight-1-D" / "model.json").read_text()


def test_n_is_printed_only_when_declared_public(csv, tmp_path, capsys, mentions):
    base = ["fit", "--data", str(csv), *DATA_OPTS, "--epsilon", "2", "--gamma", "40", "--seed", "1"]
    assert main([*base, "--out", str(tmp_path / "a.json")]) == 0
    text = capsys.readouterr().out
    assert not mentions(text, 400) and "n not released" in text
    assert main([*base, "--public-n", "--out", str(tmp_path / "b.json")]) == 0
    assert "n = 400 rows (declared public with --public-n)" in capsys.readouterr().out


def test_bounds_with_a_negative_lower_bound_need_no_equals_sign(csv, tmp_path):
    """Issue 22.5: '--bounds -1:1,...' was taken for an option by argparse (it needed '--bounds=-1:1,...')."""
    opts = [o if o != "x1=0:1,x2=0:1,x3=0:1,x4=0:1" else "-1:1,0:1,0:1,0:1" for o in DATA_OPTS]
    out = tmp_path / "model.json"
    assert main(["fit", "--data", str(csv), *opts, "--epsilon", "2", "--gamma", "40", "--seed", "1",
                 "--out", str(out)]) == 0
    assert load_model(out).lower == (-1.0, 0.0, 0.0, 0.0)


def test_fit_names_the_mechanism_and_takes_the_papers(tmp_path, capsys):
    """Defaults: objective perturbation (known propensities), residual weights with --benefit-upper-bound, the
    public gamma; --mechanism output --residual no --huber-h 0.5 --gamma G is the paper's Algorithm 1."""
    import numpy as np
    import pandas as pd

    from pydpowl.cli import main
    from pydpowl.datasets import make_synthetic_owl
    from pydpowl.model_io import load_model

    d = make_synthetic_owl(400, shift=None, random_state=2)
    frame = d.X.assign(A=d.treatment, B=d.benefit)
    csv = tmp_path / "d.csv"
    frame.to_csv(csv, index=False)
    common = ["fit", "--data", str(csv), "--treatment", "A", "--benefit", "B", "--features", "x1,x2,x3,x4",
              "--bounds", "0:1,0:1,0:1,0:1", "--weights-upper-bound", "30", "--benefit-lower-bound", "-7.5",
              "--epsilon", "1", "--seed", "3"]
    assert main(common + ["--benefit-upper-bound", "7.5", "--out", str(tmp_path / "a.json")]) == 0
    out = capsys.readouterr().out
    assert "mechanism: weighted objective perturbation with residual weights" in out
    assert "objective perturbation" in load_model(tmp_path / "a.json").mechanism
    assert main(common + ["--mechanism", "output", "--residual", "no", "--huber-h", "0.5", "--gamma", "60",
                          "--out", str(tmp_path / "b.json")]) == 0
    paper = load_model(tmp_path / "b.json")
    assert paper.mechanism.startswith("output perturbation") and paper.gamma == 60 and paper.huber_h == 0.5
    assert np.isfinite(pd.read_json(tmp_path / "b.json", typ="series")["intercept"])
