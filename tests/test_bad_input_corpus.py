"""Bad-input corpus: malformed inputs across the public API, JSON model loading and the CLI.

Every entry must raise the expected exception type with a message that names
the offending argument (the regex), never an unrelated exception and never
silent success. CLI entries run ``pydpowl.cli.main`` in-process and must exit
with status 2 and exactly one ``error:`` line naming the argument, without a
traceback.
"""

import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from pydpowl import DPOWL, DPWeightedERM, FeatureScaler, LogisticPropensity, shift_benefits
from pydpowl.privacy.accountant import BudgetAccountant
from pydpowl.exceptions import NotFittedError
from pydpowl.engine.mechanisms import output_sensitivity, sample_output_noise
from pydpowl.model_io import ModelFileError, canonical_checksum, export_model, load_model

_rng = np.random.default_rng(0)
N = 24
X = _rng.uniform(-1, 1, (N, 2))
Z = X / 2
A = np.tile([1.0, -1.0], N // 2)
B = _rng.uniform(0, 1, N)
BOUNDS = ([-1.0, -1.0], [1.0, 1.0])


def _owl(**kw):
    settings = dict(epsilon=1.0, gamma=1.0, weights_upper_bound=3.0, feature_bounds=BOUNDS, random_state=0)
    settings.update(kw)
    return DPOWL(**settings)


def _lp(**kw):
    settings = dict(feature_bounds=BOUNDS, benefit_bound=1.0, ridge=1.0)
    settings.update(kw)
    return LogisticPropensity(**settings)


def _with(arr, pos, value):
    out = np.array(arr, dtype=float)
    out[pos] = value
    return out


def _sparse(arr):
    from scipy import sparse

    return sparse.csr_matrix(arr)


def _fitted_owl():
    return _owl().fit(X, A, B)


# (id, call, exception, regex naming the argument)
API = [
    ("werm-X-nan", lambda: DPWeightedERM().fit(_with(Z, (0, 0), np.nan), A), ValueError, r"^X must be finite"),
    ("werm-X-inf", lambda: DPWeightedERM().fit(_with(Z, (3, 1), np.inf), A), ValueError, r"^X must be finite"),
    ("werm-X-empty", lambda: DPWeightedERM().fit(Z[:0], A[:0]), ValueError, r"^X must have at least 1 row"),
    ("werm-X-strings", lambda: DPWeightedERM().fit(np.full((N, 2), "a"), A), TypeError, r"^X must hold numbers"),
    ("werm-X-objects", lambda: DPWeightedERM().fit(np.array([[0.1, None]] * N, dtype=object), A), TypeError,
     r"^X must hold numbers only"),
    ("werm-X-1d", lambda: DPWeightedERM().fit(Z[:, 0], A), ValueError, r"^X must be 2-D"),
    ("werm-X-huge", lambda: DPWeightedERM().fit(Z * 1e300, A), ValueError, r"^every row of X must have l2 norm <= 1"),
    ("werm-X-complex", lambda: DPWeightedERM().fit(Z.astype(complex), A), ValueError,
     r"^X must hold real numbers, got dtype complex128: Complex data not supported"),
    ("werm-X-sparse", lambda: DPWeightedERM().fit(_sparse(Z), A), TypeError, r"^X is a sparse matrix .*not supported"),
    ("werm-X-no-columns", lambda: DPWeightedERM().fit(Z[:, :0], A), ValueError,
     r"^X must have at least 1 column: found 0 feature\(s\) \(shape=\(24, 0\)\) while a minimum of 1 is required"),
    ("werm-y-three-labels", lambda: DPWeightedERM().fit(Z, _with(A + 1, 0, 7)), ValueError,
     r"^y must take exactly two distinct values \(a binary classifier\), got more than 2"),
    ("werm-y-one-class", lambda: DPWeightedERM().fit(Z, np.ones(N)), ValueError, r"^y must take .*got 1 class"),
    ("werm-y-none", lambda: DPWeightedERM().fit(Z, None), ValueError, r"^y must be array-like"),
    ("werm-y-regression", lambda: DPWeightedERM().fit(Z, np.linspace(0.1, 2.3, N)), ValueError,
     r"^y must take exactly two .*Unknown label type: 'continuous'"),
    ("werm-y-length", lambda: DPWeightedERM().fit(Z, A[:-1]), ValueError, r"^y must have length 24"),
    ("werm-weight-negative", lambda: DPWeightedERM().fit(Z, A, _with(np.ones(N), 2, -0.1)), ValueError,
     r"^sample_weight must lie in \[0, weights_upper_bound"),
    ("werm-weight-above-W", lambda: DPWeightedERM(weights_upper_bound=1.0).fit(Z, A, np.full(N, 2.0)), ValueError,
     r"^sample_weight must lie in \[0, weights_upper_bound=1.0\]"),
    ("werm-weight-length", lambda: DPWeightedERM().fit(Z, A, np.ones(N + 1)), ValueError,
     r"^sample_weight must have length 24"),
    ("werm-epsilon-string", lambda: DPWeightedERM(epsilon="1.0").fit(Z, A), TypeError,
     r"^epsilon must be a real number, got str"),
    ("werm-epsilon-zero", lambda: DPWeightedERM(epsilon=0).fit(Z, A), ValueError, r"^epsilon must be in \(0, inf\]"),
    ("werm-epsilon-nan", lambda: DPWeightedERM(epsilon=math.nan).fit(Z, A), ValueError,
     r"^epsilon must be in \(0, inf\]"),
    ("werm-epsilon-bool", lambda: DPWeightedERM(epsilon=True).fit(Z, A), TypeError, r"^epsilon must be a real number"),
    ("werm-epsilon-subnormal", lambda: DPWeightedERM(epsilon=1e-320).fit(Z, A), ValueError,
     r"^epsilon=1e-320, .*noise scale"),
    ("werm-gamma-negative", lambda: DPWeightedERM(gamma=-1.0).fit(Z, A), ValueError, r"^gamma must be in \(0, inf\)"),
    ("werm-W-nan", lambda: DPWeightedERM(weights_upper_bound=math.nan).fit(Z, A), ValueError,
     r"^weights_upper_bound must be in \(0, inf\)"),
    ("werm-W-huge", lambda: DPWeightedERM(weights_upper_bound=1e308).fit(Z, A), ValueError,
     r"weights_upper_bound=1e\+308 .*must be finite"),
    ("werm-C-negative", lambda: DPWeightedERM(C=-1.0).fit(Z, A), ValueError, r"^C must be in \[0, inf\)"),
    ("werm-C-huge", lambda: DPWeightedERM(C=1e308, random_state=0).fit(Z, A), ValueError, r"C=1e\+308"),
    ("werm-huber_h-zero", lambda: DPWeightedERM(huber_h=0.0).fit(Z, A), ValueError, r"^huber_h must be in"),
    ("werm-loss-unknown", lambda: DPWeightedERM(loss="hinge").fit(Z, A), ValueError, r"^loss must be one of"),
    ("werm-random_state-string", lambda: DPWeightedERM(random_state="0").fit(Z, A), TypeError,
     r"^random_state must be"),
    ("werm-keep_nonprivate-string", lambda: DPWeightedERM(keep_nonprivate="no").fit(Z, A), TypeError,
     r"^keep_nonprivate must be True or False"),
    ("werm-predict-unfitted", lambda: DPWeightedERM().predict(Z), NotFittedError, r"not fitted yet"),
    ("werm-predict-columns", lambda: DPWeightedERM(random_state=0).fit(Z, A).predict(Z[:, :1]), ValueError,
     r"^X must have 2 columns"),
    ("owl-one-arm", lambda: _owl().fit(X, np.ones(N), B), ValueError, r"^treatment must contain at least two arms"),
    ("owl-one-row", lambda: _owl().fit(X[:1], A[:1], B[:1]), ValueError,
     r"^treatment must contain at least two arms"),
    ("owl-empty", lambda: _owl().fit(X[:0], A[:0], B[:0]), ValueError, r"^X must have at least 1 row"),
    # labels of any kind are arms (0/2, 0/1, strings: issue 25); what is refused is a mix, missing labels, a third
    # arm's propensity given as P(+1)
    ("owl-treatment-mixed", lambda: _owl().fit(X, np.array([1, "G"] * (N // 2) + [1] * (N % 2), dtype=object), B),
     TypeError, r"^treatment must hold numbers or strings, not a mix"),
    ("owl-treatment-nan", lambda: _owl().fit(X, _with(A, 2, np.nan), B), ValueError,
     r"^treatment must be finite; it has 1 NaN and 0 infinite entries of 24 at position\(s\) 2"),
    ("owl-three-arms-scalar-propensity", lambda: _owl().fit(X, np.arange(N) % 3, B, 0.5), ValueError,
     r"^propensity=0.5: a single number means balanced randomisation"),
    ("owl-benefit-negative", lambda: _owl().fit(X, A, _with(B, 4, -1.0)), ValueError,
     r"^benefit must be non-negative"),
    ("owl-benefit-nan", lambda: _owl().fit(X, A, _with(B, 4, np.nan)), ValueError, r"^benefit must be finite"),
    ("owl-benefit-length", lambda: _owl().fit(X, A, B[:-2]), ValueError, r"^benefit must have length 24"),
    ("owl-mismatched-lengths", lambda: _owl().fit(X[:-1], A, B), ValueError, r"^treatment must have length 23"),
    ("owl-X-dataframe-strings", lambda: _owl().fit(pd.DataFrame({"a": ["x"] * N, "b": X[:, 1]}), A, B), TypeError,
     r"^X must hold numbers"),
    ("owl-propensity-zero", lambda: _owl().fit(X, A, B, 0.0), ValueError, r"^propensity .*must be in \(0, 1\)"),
    ("owl-propensity-one", lambda: _owl().fit(X, A, B, 1.0), ValueError, r"^propensity .*must be in \(0, 1\)"),
    ("owl-propensity-negative", lambda: _owl().fit(X, A, B, np.full(N, -0.5)), ValueError,
     r"^propensity must be in \(0, 1\]"),
    ("owl-propensity-zero-entry", lambda: _owl().fit(X, A, B, _with(np.full(N, 0.5), 7, 0.0)), ValueError,
     r"^propensity must be in \(0, 1\] .*; 1 of 24 entries"),
    ("owl-propensity-string", lambda: _owl().fit(X, A, B, "0.5"), TypeError, r"^propensity must be"),
    ("owl-propensity-unfitted-model", lambda: _owl().fit(X, A, B, _lp()), NotFittedError,
     r"LogisticPropensity instance is not fitted"),
    ("owl-bounds-reversed", lambda: _owl(feature_bounds=([1, -1], [-1, 1])).fit(X, A, B), ValueError,
     r"^feature_bounds: lower must be <= upper"),
    ("owl-bounds-length", lambda: _owl(feature_bounds=([-1], [1])).fit(X, A, B), ValueError,
     r"^feature_bounds: lower bounds must have length 2"),
    ("owl-bounds-string", lambda: _owl(feature_bounds="minmax").fit(X, A, B), TypeError,
     r"^feature_bounds must be a pair"),
    ("owl-bounds-nan", lambda: _owl(feature_bounds=([np.nan, -1], [1, 1])).fit(X, A, B), ValueError,
     r"^feature_bounds\[0\] \(lower\) must be finite"),
    ("owl-bounds-zero-scale", lambda: _owl(feature_bounds=([0, -1], [0, 1])).fit(X, A, B), ValueError,
     r"^feature_bounds: max\(\|lower\|, \|upper\|\) must be > 0"),
    ("owl-epsilon-string", lambda: _owl(epsilon="1").fit(X, A, B), TypeError, r"^epsilon must be a real number"),
    ("owl-fit_intercept-string", lambda: _owl(fit_intercept="yes").fit(X, A, B), TypeError,
     r"^fit_intercept must be True or False"),
    ("owl-predict-nan", lambda: _fitted_owl().predict(np.full((2, 2), np.nan)), ValueError, r"^X must be finite"),
    ("owl-predict-columns", lambda: _fitted_owl().predict(X[:, :1]), ValueError, r"^X must have 2 columns"),
    ("propensity-one-arm", lambda: _lp().fit(X, np.ones(N)), ValueError, r"^treatment must contain both arms"),
    ("propensity-constant-feature", lambda: _lp(ridge=0.0, hessian_lower_bound=0.1, assume_hessian_bound=True,
                                                feature_bounds=([-1, 0], [1, 1])).fit(np.c_[X[:, 0], np.ones(N)], A),
     ValueError, r"X and treatment: the maximum-likelihood estimate does not exist"),
    ("propensity-separable", lambda: _lp(ridge=0.0, hessian_lower_bound=0.1, assume_hessian_bound=True).fit(
        X, np.where(X[:, 0] > 0, 1., -1.)),
     ValueError, r"X and treatment: .*use ridge > 0"),
    ("propensity-ridge-string", lambda: _lp(ridge="1").fit(X, A), TypeError, r"^ridge must be a real number"),
    ("propensity-logit_bound-huge", lambda: _lp(logit_bound=1e3).fit(X, A), ValueError, r"^logit_bound must be in"),
    ("propensity-treatment-0-2", lambda: _lp().fit(X, A + 1), ValueError, r"^treatment must take values"),
    ("propensity-fitted_on", lambda: _lp(fitted_on="public").fit(X, A), ValueError,
     r"^fitted_on must be 'private' or 'external'"),
    ("shift-lower-string", lambda: shift_benefits(B, "0"), ValueError, r"^lower_bound must be a real number"),
    ("shift-reversed", lambda: shift_benefits(B, 1.0, 0.0), ValueError, r"^upper_bound must exceed lower_bound"),
    ("scaler-columns", lambda: FeatureScaler.from_bounds(BOUNDS, 2).transform(np.zeros((3, 3))), ValueError,
     r"^X must have 2 columns"),
    ("sensitivity-gamma-zero", lambda: output_sensitivity(gamma=0.0, weights_upper_bound=1.0, n_samples=5, tol=0.0),
     ValueError,
     r"^gamma must be in \(0, inf\)"),
    ("noise-dim-zero", lambda: sample_output_noise(0, 1.0, rng=np.random.default_rng(0)), ValueError,
     r"^dim must be an integer >= 1"),
    ("accountant-epsilon-string", lambda: BudgetAccountant(total_epsilon=1.0).spend("0.5"), TypeError,
     r"^epsilon must be a real number"),
    ("accountant-total-zero", lambda: BudgetAccountant(total_epsilon=0.0), ValueError,
     r"^total_epsilon must be in \(0, inf\]"),
    ("export-nonprivate", lambda: export_model(_owl(epsilon=math.inf).fit(X, A, B), "/nonexistent/m.json"),
     ValueError, r"only private models can be exported"),
]


@pytest.mark.parametrize("call, exc, pattern", [c[1:] for c in API], ids=[c[0] for c in API])
def test_public_api_refuses(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


# --------------------------------------------------------------------------- model files

@pytest.fixture(scope="module")
def model_dict(tmp_path_factory):
    path = export_model(_fitted_owl(), tmp_path_factory.mktemp("model") / "m.json", feature_names=["a", "b"])
    return json.loads(path.read_text())


def _resigned(content):
    content["checksum"] = {"sha256": canonical_checksum(content)}
    return json.dumps(content)


MODEL_FILES = [
    ("wrong-version", lambda c: json.dumps({**c, "format_version": 4}), r"format_version 4 is not supported"),
    ("wrong-version-resigned", lambda c: _resigned({**c, "format_version": 4}), r"format_version 4 is not supported"),
    ("extra-field", lambda c: _resigned({**c, "noise_scaled": [0.1, 0.2, 0.3]}),
     r"unknown field\(s\) \['noise_scaled'\]"),
    ("missing-field", lambda c: _resigned({k: v for k, v in c.items() if k != "coef"}),
     r"missing field\(s\) \['coef'\]"),
    ("tampered-coef", lambda c: json.dumps({**c, "coef": [5.0, c["coef"][1]]}), r"checksum mismatch"),
    ("nan-constant", lambda c: json.dumps(c).replace(str(c["coef"][0]), "NaN", 1), r"non-finite number NaN"),
    ("duplicate-key", lambda c: json.dumps(c)[:-1] + ', "gamma": 2.0}', r"duplicate key 'gamma'"),
    ("not-json", lambda c: "{not json", r"not valid JSON"),
    ("top-level-list", lambda c: json.dumps([c]), r"must hold a JSON object"),
    ("wrong-format", lambda c: _resigned({**c, "format": "sklearn"}), r"format must be 'pydpowl.dpowl-model'"),
    ("reversed-bounds", lambda c: _resigned({**c, "feature_bounds": {"lower": [1.0, -1.0], "upper": [-1.0, 1.0]}}),
     r"feature_bounds lower > upper at position\(s\) \[0\]"),
    ("coef-length", lambda c: _resigned({**c, "coef": [1.0]}), r"coef must have 2 entries"),
    ("epsilon-string", lambda c: _resigned({**c, "epsilon": "1"}), r"epsilon must be a number"),
    ("epsilon-negative", lambda c: _resigned({**c, "epsilon": -1.0, "epsilon_total": 1.0}),
     r"epsilon must be in \(0, inf\)"),
    ("fit_intercept-string", lambda c: _resigned({**c, "fit_intercept": "true"}),
     r"fit_intercept must be true or false"),
]


@pytest.mark.parametrize("edit, pattern", [m[1:] for m in MODEL_FILES], ids=[m[0] for m in MODEL_FILES])
def test_model_files_are_refused(model_dict, tmp_path, edit, pattern):
    path = tmp_path / "bad.json"
    path.write_text(edit(json.loads(json.dumps(model_dict))))
    with pytest.raises(ModelFileError, match=pattern):
        load_model(path)


def test_missing_model_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="model file not found"):
        load_model(tmp_path / "none.json")


# --------------------------------------------------------------------------- CLI

@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(1)
    n = 40
    good = pd.DataFrame({"x1": rng.uniform(0, 1, n), "x2": rng.uniform(0, 1, n), "A": np.tile([-1, 1], n // 2),
                         "B": rng.uniform(0, 1, n)})
    frames = {"good": good}
    frames["nan"] = good.assign(x1=_with(good.x1, 3, np.nan))
    frames["inf"] = good.assign(x2=_with(good.x2, 1, np.inf))
    frames["strings"] = good.astype(object).assign(x2=["abc"] + list(good.x2[1:]))
    frames["onearm"] = good.assign(A=1)
    frames["labels02"] = good.assign(A=np.where(good.A > 0, 2, 0))
    frames["negative"] = good.assign(B=_with(good.B, 0, -1.0))
    frames["onerow"] = good.iloc[:1]
    frames["empty"] = good.iloc[:0]
    paths = {k: d / f"{k}.csv" for k in frames}
    for k, frame in frames.items():
        frame.to_csv(paths[k], index=False)
    paths["dir"] = d
    return paths


def _fit_argv(files, **changes):
    opts = {"--data": str(files["good"]), "--treatment": "A", "--benefit": "B", "--features": "x1,x2",
            "--bounds": "0:1,0:1", "--weights-upper-bound": "3", "--epsilon": "1", "--gamma": "1",
            "--out": str(files["dir"] / "m.json"), "--seed": "1"}
    for k, v in changes.items():
        key = "--" + k.replace("_", "-")
        if v is None:
            opts.pop(key)
        else:
            opts[key] = v
    return ["fit"] + [x for kv in opts.items() for x in kv]


def _data(name):
    return lambda files: _fit_argv(files, data=str(files[name]))


def _model(edit, data="good"):
    def argv(files):
        from pydpowl.cli import main

        path = files["dir"] / "cli_model.json"
        assert main(_fit_argv(files, out=str(path))) == 0
        content = json.loads(path.read_text())
        bad = files["dir"] / "cli_bad_model.json"
        bad.write_text(edit(content))
        return ["predict", "--model", str(bad), "--data", str(files[data]), "--out", str(files["dir"] / "p.csv")]
    return argv


CLI = [
    ("fit-epsilon-string", lambda f: _fit_argv(f, epsilon="abc"), r"argument --epsilon: invalid float value"),
    ("fit-epsilon-zero", lambda f: _fit_argv(f, epsilon="0"), r"--epsilon must be a finite number > 0"),
    ("fit-epsilon-nan", lambda f: _fit_argv(f, epsilon="nan"), r"--epsilon must be a finite number > 0"),
    ("fit-epsilon-inf", lambda f: _fit_argv(f, epsilon="inf"), r"--epsilon must be a finite number > 0"),
    ("fit-gamma-negative", lambda f: _fit_argv(f, gamma="-1"), r"gamma must be in \(0, inf\)"),
    ("fit-W-negative", lambda f: _fit_argv(f, weights_upper_bound="-3"), r"weights_upper_bound must be in"),
    ("fit-bounds-reversed", lambda f: _fit_argv(f, bounds="1:0,0:1"), r"bounds: lower must be <= upper"),
    ("fit-bounds-from-data", lambda f: _fit_argv(f, bounds="data"), r"bounds: 'data' is not of the form"),
    ("fit-bounds-missing", lambda f: _fit_argv(f, bounds=None), r"needs --bounds"),
    ("fit-nan", _data("nan"), r"missing values in \{'x1': 1\}"),
    ("fit-inf", _data("inf"), r"infinite values in feature column\(s\) \{'x2': 1\}"),
    ("fit-strings", _data("strings"), r"feature column\(s\) \['x2'\] are not numeric"),
    ("fit-one-arm", _data("onearm"), r"treatment column must take exactly 2 values, got 1"),
    ("fit-labels-0-2", _data("labels02"), r"treatment values \['0', '2'\] are not -1/1 or 0/1"),
    ("fit-negative-benefit", _data("negative"), r"benefit must be non-negative"),
    ("fit-one-row", _data("onerow"), r"treatment column must take exactly 2 values"),
    ("fit-empty", _data("empty"), r"empty.csv has a header but no data rows"),
    ("fit-missing-file", lambda f: _fit_argv(f, data=str(f["dir"] / "none.csv")), r"data file not found"),
    ("fit-glob-in-memory", lambda f: _fit_argv(f, data=str(f["dir"] / "*.csv")),
     r"data file not found: .*\*\.csv is a pattern of several files; .*--engine dask"),
    ("predict-empty", _model(json.dumps, data="empty"), r"empty.csv has a header but no data rows"),
    ("fit-propensity-zero", lambda f: _fit_argv(f, propensity="0"), r"propensity .* must be in \(0, 1\)"),
    ("fit-propensity-string", lambda f: _fit_argv(f, propensity="abc"), r"propensity must be a probability"),
    ("fit-features-missing", lambda f: _fit_argv(f, features="x1,zz"), r"missing column\(s\) \['zz'\]"),
    ("fit-seed-string", lambda f: _fit_argv(f, seed="x"), r"argument --seed: invalid int value"),
    ("predict-wrong-version", _model(lambda c: _resigned({**c, "format_version": 4})), r"format_version 4"),
    ("predict-extra-field", _model(lambda c: _resigned({**c, "nonprivate_coef": [0.0, 0.0]})),
     r"unknown field\(s\) \['nonprivate_coef'\]"),
    ("predict-tampered", _model(lambda c: json.dumps({**c, "intercept": 9.0})), r"checksum mismatch"),
]


@pytest.mark.parametrize("argv, pattern", [c[1:] for c in CLI], ids=[c[0] for c in CLI])
def test_cli_refuses_with_one_line(files, capsys, argv, pattern):
    from pydpowl.cli import main

    args = argv(files)
    capsys.readouterr()
    try:
        status = main(args)
    except SystemExit as exc:  # argparse's own type errors
        status = exc.code
    err = capsys.readouterr().err
    assert status == 2, f"exit status {status}, expected 2; stderr: {err!r}"
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1, f"expected one error line, got {lines!r}"
    assert re.search(pattern, lines[0]), f"{lines[0]!r} does not match {pattern!r}"


def test_corpus_size():
    total = len(API) + len(MODEL_FILES) + 1 + len(CLI)
    assert total >= 40, f"bad-input corpus has {total} entries, the issue asks for at least 40"
