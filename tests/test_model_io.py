"""Tests of pydpowl.model_io: JSON export of a release and strict, tamper-evident import."""

import hashlib
import json
import math

import numpy as np
import pytest

from pydpowl import DPOWL
from pydpowl.datasets import make_synthetic_owl
from pydpowl.model_io import FORMAT_VERSION, ModelFileError, export_model, load_model, model_from_json

PRIVATE_WORDS = ("nonprivate", "noise", "n_samples", "clipped")


@pytest.fixture(scope="module")
def fitted():
    data = make_synthetic_owl(300, random_state=1)
    model = DPOWL(epsilon=2.0, gamma=30.0, weights_upper_bound=30.0, feature_bounds=data.feature_bounds,
                  keep_nonprivate=True, random_state=5).fit(data.X, data.treatment, data.benefit, 0.5)
    return model, data


@pytest.fixture
def content(fitted, tmp_path):
    path = export_model(fitted[0], tmp_path / "m.json", treatment_labels=("new", "old"))
    return json.loads(path.read_text())


def _write(tmp_path, content, *, rehash=True):
    if rehash:
        body = {k: v for k, v in content.items() if k != "checksum"}
        canon = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        content["checksum"] = {"sha256": hashlib.sha256(canon.encode()).hexdigest()}
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(content))
    return path


def test_round_trip_predicts_like_the_model(fitted, tmp_path):
    model, data = fitted
    loaded = load_model(export_model(model, tmp_path / "m.json"))
    # the model's release is already on its floating-point-safe grid: the file holds the same numbers
    np.testing.assert_array_equal(loaded.decision_function(data.X.to_numpy()), model.decision_function(data.X))
    np.testing.assert_array_equal(loaded.predict(data.X), model.predict(data.X))
    assert (loaded.epsilon, loaded.gamma, loaded.weights_upper_bound, loaded.huber_h) == (2.0, 30.0, 30.0,
                                                                                          model.huber_h_)
    assert loaded.mechanism == model.mechanism_description_ and "objective perturbation" in loaded.mechanism
    assert loaded.feature_names == ("x1", "x2", "x3", "x4")
    # columns are matched by name, not position
    np.testing.assert_array_equal(loaded.predict(data.X[["x4", "x3", "x2", "x1"]]), model.predict(data.X))


def test_file_holds_only_the_release_and_public_settings(content, fitted):
    text = json.dumps(content)
    for word in PRIVATE_WORDS:
        assert word not in text, f"model file mentions {word!r}"
    assert content["format_version"] == FORMAT_VERSION
    model = fitted[0]
    grid = model.release_grid_  # a power of two (public: from the settings)
    assert grid == 2.0 ** round(math.log2(grid))
    rounded = np.round(model.scaled_coef_ / grid) * grid  # the release on the public grid, by hand
    scale = model.scaler_.column_scale * model.scaler_.dimension_scale
    np.testing.assert_array_equal(content["coef"], rounded[1:] / scale[1:])
    assert content["intercept"] == rounded[0] / scale[0]
    assert np.all(np.abs(np.array(content["coef"]) - model.coef_) <= 0.5 * grid / scale[1:])
    # the file's checksum is SHA-256 of the canonical content, recomputed independently
    body = {k: v for k, v in content.items() if k != "checksum"}
    canon = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert content["checksum"]["sha256"] == hashlib.sha256(canon.encode()).hexdigest()


def test_tampered_content_is_rejected(content, tmp_path):
    content["coef"][0] += 0.5
    with pytest.raises(ModelFileError, match="checksum mismatch"):
        load_model(_write(tmp_path, content, rehash=False))


@pytest.mark.parametrize("edit, message", [
    (lambda c: c.update(format_version=4), "format_version 4 is not supported"),
    (lambda c: c.update(extra=1), r"unknown field\(s\) \['extra'\]"),
    (lambda c: c.pop("gamma"), r"missing field\(s\) \['gamma'\]"),
    (lambda c: c.update(epsilon="2"), "epsilon must be a number"),
    (lambda c: c.update(epsilon=-1.0), r"epsilon must be in \(0, inf\)"),
    (lambda c: c.update(epsilon_total=0.5), "epsilon_total"),
    (lambda c: c.update(coef=c["coef"][:3]), "coef must have 4 entries"),
    (lambda c: c["feature_bounds"].update(lower=[0, 0, 2, 0]), "lower > upper"),
    (lambda c: c.update(feature_names=["x1", "x1", "x3", "x4"]), "distinct"),
    (lambda c: c.update(fit_intercept="yes"), "fit_intercept must be true or false"),
    (lambda c: c.update(format="other"), "format must be"),
])
def test_invalid_files_are_rejected_with_one_line(content, tmp_path, edit, message):
    edit(content)
    with pytest.raises(ModelFileError, match=message) as info:
        load_model(_write(tmp_path, content))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("text, message", [
    ("{not json", "not valid JSON"),
    ('{"epsilon": NaN}', "non-finite number NaN"),
    ('{"a": 1, "a": 2}', "duplicate key 'a'"),
    ("[1, 2]", "must hold a JSON object"),
])
def test_malformed_json_is_rejected(text, message):
    with pytest.raises(ModelFileError, match=message):
        model_from_json(text)


def test_overflowing_number_is_rejected(content, tmp_path):
    text = json.dumps(content).replace(json.dumps(content["coef"][0]), "1e999", 1)
    with pytest.raises(ModelFileError, match=r"coef\[0\] must be finite"):
        model_from_json(text)


def test_non_private_model_is_not_exported(tmp_path):
    data = make_synthetic_owl(100, random_state=2)
    model = DPOWL(epsilon=math.inf, gamma=5.0, weights_upper_bound=30.0, feature_bounds=data.feature_bounds).fit(
        data.X, data.treatment, data.benefit, 0.5)
    with pytest.raises(ValueError, match="only private models can be exported"):
        export_model(model, tmp_path / "m.json")


def test_missing_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="model file not found"):
        load_model(tmp_path / "nope.json")


def test_export_holds_the_floating_point_safe_release(fitted, content):
    """Review item 7: the file holds the model's own grid values, mapped to the original space."""
    model, _ = fitted
    grid = model.release_grid_
    np.testing.assert_array_equal(np.round(model.scaled_coef_ / grid) * grid, model.scaled_coef_)
    assert content["intercept"] == model.intercept_ and content["coef"] == list(model.coef_)


def test_a_validation_fit_reproducing_dppack_is_not_exported(tmp_path):
    from pydpowl import PrivacyLeakWarning

    data = make_synthetic_owl(100, random_state=2)
    with pytest.warns(PrivacyLeakWarning, match="reproduce_dppack"):
        model = DPOWL(epsilon=1.0, gamma=5.0, weights_upper_bound=30.0, feature_bounds=data.feature_bounds,
                      reproduce_dppack=True, random_state=1).fit(data.X, data.treatment, data.benefit, 0.5)
    with pytest.raises(ValueError, match="not floating-point safe"):
        export_model(model, tmp_path / "m.json")


# ---- keyed signature (issue 22.8): the checksum detects accidents, an HMAC with the user's key detects forgery ----

KEY = b"0123456789abcdef-a-user-held-secret"


def test_a_recomputed_checksum_accepts_forged_coefficients(content, tmp_path):
    """What the checksum is not: anyone can recompute it, so forged numbers load without a key."""
    forged = _write(tmp_path, {**content, "coef": [9.0] * len(content["coef"])})
    assert load_model(forged).coef == (9.0,) * len(content["coef"])


def test_a_signed_model_loads_with_its_key_and_refuses_forgery(fitted, tmp_path):
    import hmac

    path = export_model(fitted[0], tmp_path / "signed.json", key=KEY)
    content = json.loads(path.read_text())
    body = {k: v for k, v in content.items() if k not in ("checksum", "signature")}
    canon = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert content["signature"] == {"hmac-sha256": hmac.new(KEY, canon.encode(), hashlib.sha256).hexdigest()}
    whole = {k: v for k, v in content.items() if k != "checksum"}  # the checksum covers the signature too
    assert content["checksum"]["sha256"] == hashlib.sha256(
        json.dumps(whole, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()
    model = load_model(path, key=KEY)
    assert model.signature_verified and model.coef == tuple(content["coef"])
    assert load_model(path, key=KEY.decode()).signature_verified  # a text key is its UTF-8 bytes
    unverified = load_model(path)  # without the key the signature cannot be checked (the checksum still is)
    assert not unverified.signature_verified and unverified.coef == model.coef
    forged = _write(tmp_path, {**content, "coef": [9.0] * len(content["coef"])})  # checksum recomputed
    with pytest.raises(ModelFileError, match="signature mismatch: the content was modified after it was signed, "
                                             "or the key is not the one it was signed with"):
        load_model(forged, key=KEY)
    with pytest.raises(ModelFileError, match="signature mismatch"):
        load_model(path, key=b"another key of 16+ bytes")
    unsigned = export_model(fitted[0], tmp_path / "unsigned.json")
    with pytest.raises(ModelFileError, match="not signed: a key was given"):
        load_model(unsigned, key=KEY)
    with pytest.raises(ModelFileError, match="not signed"):  # removing the signature does not help
        load_model(_write(tmp_path, {k: v for k, v in content.items() if k != "signature"}), key=KEY)


@pytest.mark.parametrize("key, error, match", [
    (b"short", ValueError, r"key must have at least 16 bytes \(a random secret"),
    ("", ValueError, "key must have at least 16 bytes"),
    (12345, TypeError, "key must be bytes or str, got int"),
])
def test_bad_keys_are_refused(fitted, tmp_path, key, error, match):
    with pytest.raises(error, match=match):
        export_model(fitted[0], tmp_path / "m.json", key=key)
    path = export_model(fitted[0], tmp_path / "ok.json", key=KEY)
    with pytest.raises(error, match=match):
        load_model(path, key=key)


def test_signature_field_is_checked(fitted, tmp_path):
    content = json.loads(export_model(fitted[0], tmp_path / "s.json", key=KEY).read_text())
    with pytest.raises(ModelFileError, match="signature must be an object with exactly one field 'hmac-sha256'"):
        load_model(_write(tmp_path, {**content, "signature": "abc"}), key=KEY)
    with pytest.raises(ModelFileError, match="64 hexadecimal digits"):
        load_model(_write(tmp_path, {**content, "signature": {"hmac-sha256": "\u00e9" * 64}}), key=KEY)


def test_version_1_files_are_still_read_as_output_perturbation(content):
    """Files written before the mechanism field (all output perturbation with OWL weights) load unchanged."""
    from pydpowl.model_io import VERSION_1_MECHANISM, canonical_checksum

    old = {k: v for k, v in content.items() if k not in ("mechanism", "checksum")}
    old["format_version"] = 1
    old["checksum"] = {"sha256": canonical_checksum(old)}
    loaded = model_from_json(json.dumps(old))
    assert loaded.mechanism == VERSION_1_MECHANISM
    with pytest.raises(ModelFileError, match="unknown field"):  # a version 1 file has no mechanism
        model_from_json(json.dumps(dict(old, mechanism="x")))
