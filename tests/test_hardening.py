"""What a fitted model, its repr, pickle and JSON export reveal: only the release and public settings.

Secrets are the training data, the exact (non-private) minimiser, the noise,
and anything that regenerates the noise (the seed or generator). The checks
walk every attribute recursively and search the serialised bytes for every
secret float in both byte orders; the same detector finds the secrets when
the documented opt-in ``keep_nonprivate=True`` is set, so it can fail.
"""

import dataclasses
import inspect
import json
import math
import pickle
import struct
import warnings

import numpy as np
import pytest

from pydpowl import (
    DPOWL,
    DPWeightedERM,
    FeatureScaler,
    LogisticPropensity,
    PrivacyLeakWarning,
    bounds_from_data,
    min_shift_benefits,
)
from pydpowl.engine.mechanisms import noise_rate
from pydpowl.model_io import model_to_dict

N = 37  # prime, so no public array shape coincides with the number of rows
BOUNDS = ([-2.0, 0.0, -1.0], [1.0, 5.0, 1.0])


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(42)
    X = np.column_stack([rng.uniform(-2, 1, N), rng.uniform(0, 5, N), rng.uniform(-1, 1, N)])
    A = np.where(rng.uniform(size=N) < 0.5, 1.0, -1.0)
    A[:2] = (1.0, -1.0)
    B = rng.uniform(0.1, 2.0, N)
    return X, A, B


# --------------------------------------------------------------------------- the detector

def _walk(obj, path="model", seen=None):
    """Yield (path, value) for every leaf reachable from obj's attributes."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        yield path, obj
    elif isinstance(obj, (bool, int, float, str, bytes, type(None), np.generic)):
        yield path, obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _walk(v, f"{path}[{k!r}]", seen)
    elif isinstance(obj, (list, tuple)):
        for k, v in enumerate(obj):
            yield from _walk(v, f"{path}[{k}]", seen)
    elif dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            yield from _walk(getattr(obj, f.name), f"{path}.{f.name}", seen)
    elif hasattr(obj, "__dict__"):
        yield path, obj  # the object itself (e.g. a Generator or a propensity model)
        for k, v in vars(obj).items():
            yield from _walk(v, f"{path}.{k}", seen)
    else:
        yield path, obj


def _floats(value):
    if isinstance(value, (bool, np.bool_)):
        return np.empty(0)
    if isinstance(value, (int, float, np.number)):
        return np.array([float(value)])
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiu":
        return value.astype(float).ravel()
    return np.empty(0)


def _secret_hits(model, secrets):
    """Attribute paths holding a value equal to a secret float (to 1e-12), or an array sized like the data."""
    hits = []
    for path, value in _walk(model):
        if isinstance(value, np.ndarray) and N in value.shape:
            hits.append(f"{path}: array of shape {value.shape} (training-sized)")
        vals = _floats(value)
        for name, sec in secrets.items():
            if vals.size and sec.size and np.any(np.isclose(vals[:, None], sec[None, :], rtol=0, atol=1e-12)):
                hits.append(f"{path}: holds a value of {name}")
        if isinstance(value, np.random.Generator) or (hasattr(value, "rgamma") and hasattr(value, "rnorm")):
            hits.append(f"{path}: a random generator (can regenerate the noise)")
    return hits


def _bytes_hits(blob, secrets):
    hits = []
    for name, sec in secrets.items():
        for v in sec:
            if v in (0.0, 1.0, -1.0):
                continue  # too common to be evidence
            if struct.pack("<d", v) in blob or struct.pack(">d", v) in blob:
                hits.append(f"bytes of {name} value {v!r}")
                break
    return hits


def _text_hits(text, secrets):
    hits = []
    for name, sec in secrets.items():
        for v in sec:
            if v in (0.0, 1.0, -1.0):
                continue
            if repr(float(v)) in text or f"{v:.6g}" in text:
                hits.append(f"text of {name} value {v!r}")
                break
    return hits


def _owl_secrets(data, seed):
    X, A, B = data
    twin = DPOWL(epsilon=1.0, gamma=2.0, weights_upper_bound=6.0, feature_bounds=BOUNDS, keep_nonprivate=True,
                 random_state=seed).fit(X, A, B)
    return twin, {"X": X.ravel(), "benefit": B, "owl weights": np.minimum(B / 0.5, 6.0),
                  "non-private scaled coef": twin.nonprivate_scaled_coef_,
                  "non-private coef": np.r_[twin.nonprivate_intercept_, twin.nonprivate_coef_],
                  "noise": twin.noise_scaled_}


# --------------------------------------------------------------------------- attributes

#: classes_: the two labels of y (the label coding; documented to be treated as public)
DPWERM_FITTED = {"coef_", "sensitivity_", "release_grid_", "n_features_in_", "n_iter_", "n_samples_", "loss_name_",
                 "classes_", "n_clipped_rows_"}
#: DPOWL's classes_: the treatment labels (arm names, public like a classifier's classes_)
DPOWL_FITTED = {"classes_", "coef_", "intercept_", "scaled_coef_", "scaler_", "sensitivity_", "release_grid_",
                "weight_sensitivity_", "n_iter_", "n_samples_", "n_features_in_", "n_clipped_weights_",
                "n_clipped_features_", "n_clipped_logits_", "n_clipped_benefits_"}
#: computed from the data without noise: counts for the analyst, documented as not released
DIAGNOSTICS = {"n_iter_", "n_clipped_weights_", "n_clipped_features_", "n_clipped_logits_", "n_clipped_benefits_"}


def test_fitted_attributes_are_exactly_the_documented_ones(data):
    X, A, B = data
    werm = DPWeightedERM(epsilon=1.0, random_state=0).fit(X / 6, A)
    params = set(werm.get_params())
    assert set(vars(werm)) - params == DPWERM_FITTED, "a new fitted attribute must be reviewed for privacy"
    owl = DPOWL(epsilon=1.0, gamma=2.0, weights_upper_bound=6.0, feature_bounds=BOUNDS, random_state=0).fit(X, A, B)
    assert set(vars(owl)) - set(owl.get_params()) == DPOWL_FITTED, "a new fitted attribute must be reviewed"
    doc = DPOWL.__doc__
    assert all(name in doc for name in DIAGNOSTICS - {"n_iter_"}), "data-derived counts must be documented"
    assert "n_clipped_rows_" in DPWeightedERM.__doc__ and "classes_" in DPWeightedERM.__doc__


@pytest.mark.parametrize("random_state", [None, 11, "generator"])
def test_dpowl_attributes_repr_and_pickle_hold_no_secret(data, random_state):
    X, A, B = data
    twin, secrets = _owl_secrets(data, seed=11)
    rs = np.random.default_rng(11) if random_state == "generator" else random_state
    model = DPOWL(epsilon=1.0, gamma=2.0, weights_upper_bound=6.0, feature_bounds=BOUNDS, random_state=rs)
    model.fit(X, A, B)
    if random_state is not None:  # same noise as the twin: the secrets are this model's secrets
        np.testing.assert_array_equal(model.scaled_coef_, twin.scaled_coef_)
    hits = [h for h in _secret_hits(model, secrets) if not h.startswith("model.random_state")]
    assert hits == [], f"fitted DPOWL leaks: {hits}"
    blob = pickle.dumps(model)
    assert _bytes_hits(blob, secrets) == []
    restored = pickle.loads(blob)
    assert restored.random_state is None, "the pickle must not carry the seed or generator"
    assert _secret_hits(restored, secrets) == []
    np.testing.assert_array_equal(restored.predict(X), model.predict(X))
    text = repr(model) + str(model.summary())
    assert _text_hits(text, secrets) == []
    # the detector is not blind: the opt-in exposes what it must find
    assert any("non-private" in h for h in _secret_hits(twin, secrets))
    assert any("noise" in h for h in _secret_hits(twin, secrets))
    assert _bytes_hits(pickle.dumps(twin), secrets) != []


def test_dpweightederm_attributes_and_pickle_hold_no_secret(data):
    X, A, B = data
    Z = X / 6.0
    w = B
    twin = DPWeightedERM(epsilon=1.0, weights_upper_bound=2.0, keep_nonprivate=True, random_state=3).fit(Z, A, w)
    secrets = {"X": Z.ravel(), "weights": w, "non-private coef": twin.nonprivate_coef_, "noise": twin.noise_}
    model = DPWeightedERM(epsilon=1.0, weights_upper_bound=2.0, random_state=np.random.default_rng(3)).fit(Z, A, w)
    np.testing.assert_array_equal(model.coef_, twin.coef_)
    assert [h for h in _secret_hits(model, secrets) if not h.startswith("model.random_state")] == []
    blob = pickle.dumps(model)
    assert _bytes_hits(blob, secrets) == [] and pickle.loads(blob).random_state is None
    assert _text_hits(repr(model) + str(model.summary()), secrets) == []
    assert _bytes_hits(pickle.dumps(twin), secrets) != []


def test_a_pickled_generator_would_have_revealed_the_noise(data):
    """Why the pickle drops random_state: a fitted model's Generator can be rewound to the noise draws."""
    X, A, _ = data
    Z = X / 6.0
    rng = np.random.default_rng()  # fresh entropy, as a real release
    model = DPWeightedERM(epsilon=1.0, random_state=rng).fit(Z, A)
    exact = DPWeightedERM(epsilon=math.inf).fit(Z, A).coef_
    rate = noise_rate(epsilon=1.0, gamma=1.0, weights_upper_bound=1.0, n_samples=N, tol=1e-10)

    def attack(generator):
        for back in range(1, 12):
            bg = pickle.loads(pickle.dumps(generator.bit_generator))
            bg.advance(-back % 2 ** 128)  # PCG64 steps backwards modulo its period
            g = np.random.Generator(bg)
            radius, z = g.gamma(shape=3, scale=1 / rate), g.standard_normal(3)
            # the release is rounded to its grid: the regenerated noise recovers the exact solution to a grid step
            if np.allclose(model.coef_ - radius * z / np.linalg.norm(z), exact, rtol=0, atol=model.release_grid_):
                return True
        return False

    assert attack(model.random_state), "the live generator should be rewindable (the attack must work)"
    assert pickle.loads(pickle.dumps(model)).random_state is None  # so the pickle cannot be attacked


def test_json_export_holds_release_and_public_settings_only(data):
    X, A, B = data
    twin, secrets = _owl_secrets(data, seed=5)
    model = DPOWL(epsilon=1.0, gamma=2.0, weights_upper_bound=6.0, feature_bounds=BOUNDS, random_state=5).fit(X, A, B)
    content = model_to_dict(model)
    text = json.dumps(content)
    assert _text_hits(text, secrets) == []
    assert "random_state" not in text and "seed" not in text
    grid = model.release_grid_  # the release lies on this grid in the scaled space; the file maps it back
    scale = model.scaler_.column_scale * model.scaler_.dimension_scale
    exported = np.concatenate([[content["intercept"]], content["coef"]]) * scale
    np.testing.assert_allclose(exported, np.round(model.scaled_coef_ / grid) * grid, rtol=1e-15, atol=0)
    numbers = np.array([v for _, v in _walk(content) if isinstance(v, (int, float)) and not isinstance(v, bool)])
    released = [content["intercept"], *content["coef"]]  # checked above: the release on the public grid
    public = {1.0, 2.0, 6.0, 0.5, 0.0, *BOUNDS[0], *BOUNDS[1], *released}
    assert set(numbers.tolist()) <= public | {model.weight_sensitivity_, content["format_version"]}, \
        "every number in the export is the release or a public setting"
    for name in ("n_samples", "n_clipped", "n_iter", "noise", "nonprivate"):
        assert name not in text


def test_propensity_model_keeps_no_training_rows_and_dpowl_keeps_no_propensity_model(data):
    X, A, B = data
    prop = LogisticPropensity(feature_bounds=BOUNDS, benefit_bound=2.0, ridge=1.0).fit(X, A)
    secrets = {"X": X.ravel(), "treatment-as-0/1": (A + 1) / 2 + 0.25}
    assert _secret_hits(prop, secrets) == []
    assert _bytes_hits(pickle.dumps(prop), {"X": X.ravel()}) == []
    model = DPOWL(epsilon=1.0, gamma=2.0, weights_upper_bound=6.0, feature_bounds=BOUNDS, random_state=0)
    model.fit(X, A, B, prop)
    kinds = {type(v).__name__ for _, v in _walk(model)}
    assert "LogisticPropensity" not in kinds
    # the propensity coefficients are an unnoised fit on the private data: never inside the release
    assert _bytes_hits(pickle.dumps(model), {"propensity coef": prop.coef_}) == []
    assert model.weight_sensitivity_ == pytest.approx(prop.weight_sensitivity(N))


# --------------------------------------------------------------------------- public bounds

@pytest.mark.parametrize("make", [
    lambda X, A, B: DPOWL(epsilon=1.0, gamma=1.0, weights_upper_bound=6.0, feature_bounds="data").fit(X, A, B),
    lambda X, A, B: bounds_from_data(X),
    lambda X, A, B: min_shift_benefits(B - 1.0),
    lambda X, A, B: LogisticPropensity(feature_bounds=BOUNDS, benefit_bound=2.0, hessian_lower_bound="data").fit(X, A),
], ids=["DPOWL-feature_bounds-data", "bounds_from_data", "min_shift_benefits", "propensity-b_x-from-data"])
def test_data_derived_bounds_warn_that_the_guarantee_is_void(data, make):
    X, A, B = data
    with pytest.warns(PrivacyLeakWarning, match=r"(void|no guarantee)"):
        make(X, A, B)
    with warnings.catch_warnings():  # and a strict caller can refuse them outright
        warnings.simplefilter("error", PrivacyLeakWarning)
        with pytest.raises(PrivacyLeakWarning):
            make(X, A, B)


def test_public_bounds_are_required_by_default():
    sig = inspect.signature(DPOWL)
    for name in ("epsilon", "gamma", "weights_upper_bound", "feature_bounds"):
        assert sig.parameters[name].default is inspect.Parameter.empty, f"{name} must have no default"
    lp = inspect.signature(LogisticPropensity)
    assert lp.parameters["feature_bounds"].default is inspect.Parameter.empty
    assert lp.parameters["benefit_bound"].default is inspect.Parameter.empty


def test_fits_with_public_settings_raise_no_privacy_warning(data):
    X, A, B = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        prop = LogisticPropensity(feature_bounds=BOUNDS, benefit_bound=2.0, ridge=0.5).fit(X, A)
        DPOWL(epsilon=1.0, gamma=1.0, weights_upper_bound=6.0, feature_bounds=BOUNDS, random_state=0).fit(X, A, B, prop)
        DPWeightedERM(epsilon=1.0, random_state=0).fit(X / 6, A)
        FeatureScaler.from_bounds(BOUNDS, 3).transform(X)


def test_no_default_reads_a_bound_off_the_data(data):
    X, A, _ = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        with pytest.raises(ValueError, match="needs a public lower bound b_x"):
            LogisticPropensity(feature_bounds=BOUNDS, benefit_bound=2.0).fit(X, A)
