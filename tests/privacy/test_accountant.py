import json
import math

import numpy as np
import pytest

from pydpowl import DPOWL
from pydpowl.privacy.accountant import (BudgetAccountant, Release, compose, dataset_fingerprint, fingerprint_key_path,
                                        rounded_release_spent)
from pydpowl.exceptions import BudgetExceededError


def test_basic_composition_adds_and_refuses_the_release_that_exceeds():
    acc = BudgetAccountant(total_epsilon=1.0)
    acc.spend(0.5, label="a")
    acc.spend(0.25, label="b")
    assert acc.spent == 0.75 and acc.remaining == 0.25
    with pytest.raises(BudgetExceededError, match=r"^c: epsilon=0.5 exceeds the remaining privacy budget 0.25"):
        acc.spend(0.5, label="c")
    assert acc.releases == (Release("a", 0.5), Release("b", 0.25))  # the refused one is not recorded
    acc.spend(0.25, label="d")  # exactly the rest is fine
    assert acc.remaining == 0.0
    with pytest.raises(BudgetExceededError):
        acc.check(1e-9)


def test_rounding_does_not_refuse_an_exact_split():
    acc = BudgetAccountant(total_epsilon=0.3)
    acc.spend(0.1)
    acc.spend(0.2)  # 0.1 + 0.2 = 0.30000000000000004 in floats
    assert acc.remaining == 0.0
    ten = BudgetAccountant(total_epsilon=1.0)
    for _ in range(10):
        ten.spend(0.1)
    assert len(ten.releases) == 10


def test_check_spends_nothing_and_release_spends_only_after_success():
    acc = BudgetAccountant(total_epsilon=2.0)
    assert acc.check(1.5) == 1.5 and acc.spent == 0.0
    with pytest.raises(RuntimeError, match="fit failed"):
        with acc.release(1.0, label="failing fit"):
            raise RuntimeError("fit failed")
    assert acc.spent == 0.0
    with acc.release(1.0, label="fit") as eps:
        assert eps == 1.0 and acc.spent == 0.0  # not yet spent inside the block
    assert acc.releases == (Release("fit", 1.0),)


def test_budget_is_checked_before_the_data_are_touched():
    acc = BudgetAccountant(total_epsilon=1.0)
    acc.spend(0.8)
    touched = []

    class Spy:
        def __array__(self, dtype=None):
            touched.append(True)
            return np.zeros((3, 1))

    with pytest.raises(BudgetExceededError):
        with acc.release(0.5, label="fit"):
            DPOWL(epsilon=0.5, gamma=1.0, weights_upper_bound=2.0, feature_bounds=([-1.0], [1.0])).fit(
                Spy(), [1, -1, 1], [1.0, 1.0, 1.0])
    assert touched == [], "the data were read although the budget was exceeded"


def test_with_a_real_fit():
    rng = np.random.default_rng(0)
    X, A, B = rng.uniform(-1, 1, (30, 2)), rng.choice([-1.0, 1.0], 30), rng.uniform(0, 1, 30)
    acc = BudgetAccountant(total_epsilon=1.0, dataset="toy")
    for k in range(2):
        with acc.release(0.5, label=f"fit {k}") as eps:
            DPOWL(epsilon=eps, gamma=1.0, weights_upper_bound=2.0, feature_bounds=([-1, -1], [1, 1]),
                  random_state=k).fit(X, A, B)
    with pytest.raises(BudgetExceededError):
        with acc.release(0.5, label="third fit"):
            pytest.fail("the block must not run when the budget is exceeded")
    assert acc.spent == 1.0


def test_infinite_epsilon_needs_an_infinite_budget():
    with pytest.raises(BudgetExceededError):
        BudgetAccountant(total_epsilon=10.0).check(math.inf)
    acc = BudgetAccountant(total_epsilon=math.inf)
    acc.spend(math.inf, label="non-private reference")
    acc.spend(3.0)
    assert acc.remaining == math.inf


def test_split_is_checked_as_a_whole():
    acc = BudgetAccountant(total_epsilon=1.0)
    assert acc.check_split([0.3, 0.7]) == (0.3, 0.7)
    with pytest.raises(BudgetExceededError, match="tuning"):
        acc.check_split([0.5, 0.6], label="tuning")
    with pytest.raises(ValueError, match=r"^epsilons\[1\] must be in \(0, inf\]"):
        acc.check_split([0.5, 0.0])
    assert acc.spent == 0.0


@pytest.mark.parametrize("bad, exc, match", [
    ("1.0", TypeError, r"^epsilon must be a real number, got str"),
    (True, TypeError, r"^epsilon must be a real number, got bool"),
    (0.0, ValueError, r"^epsilon must be in \(0, inf\], got epsilon=0.0"),
    (-1.0, ValueError, r"^epsilon must be in \(0, inf\], got epsilon=-1.0"),
    (float("nan"), ValueError, r"^epsilon must be in \(0, inf\], got epsilon=nan"),
])
def test_bad_epsilon_is_named(bad, exc, match):
    acc = BudgetAccountant(total_epsilon=1.0)
    with pytest.raises(exc, match=match):
        acc.spend(bad)
    assert acc.spent == 0.0


@pytest.mark.parametrize("bad", [0.0, -2.0, float("nan"), "3"])
def test_bad_total_is_named(bad):
    with pytest.raises((TypeError, ValueError), match=r"^total_epsilon must be"):
        BudgetAccountant(total_epsilon=bad)


def test_preexisting_releases_cannot_exceed_the_total():
    with pytest.raises(BudgetExceededError, match="more than total_epsilon=1"):
        BudgetAccountant(total_epsilon=1.0, releases=[("a", 0.6), ("b", 0.6)])


def test_file_round_trip(tmp_path):
    acc = BudgetAccountant(total_epsilon=2.0, dataset="sha256:abc")
    acc.spend(0.5, label="fit gamma=75")
    acc.spend(1.0, label="fit gamma=100")
    path = acc.save(tmp_path / "budget.json")
    back = BudgetAccountant.load(path, dataset="sha256:abc")
    assert back.releases == acc.releases and back.total_epsilon == 2.0 and back.dataset == "sha256:abc"
    with pytest.raises(BudgetExceededError):
        back.spend(0.6)
    inf = BudgetAccountant(total_epsilon=math.inf)
    inf.spend(math.inf)
    assert json.loads(inf.save(tmp_path / "inf.json").read_text())["total_epsilon"] == "inf"
    assert BudgetAccountant.load(tmp_path / "inf.json").releases[0].epsilon == math.inf


def _good():
    return {"format": "pydpowl-budget", "version": 2, "dataset": None, "total_epsilon": 1.0, "total_delta": None,
            "releases": [{"label": "a", "epsilon": 0.5, "delta": 0.0}]}


@pytest.mark.parametrize("edit, match", [
    (lambda d: d.update(version=3), r"version must be 1 or 2, got 3"),
    (lambda d: d.update(total_delta=2.0), r"total_delta must be in \[0, 1\]"),
    (lambda d: (d.update(total_delta=1e-9), d["releases"][0].update(delta=1e-8)),
     r"releases spend delta=1e-08, more than total_delta=1e-09"),
    (lambda d: d["releases"].append({"label": "b", "epsilon": 0.1, "delta": -1}), r"delta must be in \[0, 1\]"),
    (lambda d: d.update(format="other"), r"format must be 'pydpowl-budget'"),
    (lambda d: d.update(extra=1), r"unexpected \['extra'\]"),
    (lambda d: d.pop("releases"), r"missing \['releases'\]"),
    (lambda d: d.update(total_epsilon=-1), r"total_epsilon must be in \(0, inf\]"),
    (lambda d: d.update(total_epsilon="1"), r"total_epsilon must be a number"),
    (lambda d: d["releases"].append({"label": "b", "epsilon": 0.6, "delta": 0}), r"more than total_epsilon=1"),
    (lambda d: d["releases"].append({"label": "b"}), r"releases\[1\] must be an object"),
    (lambda d: d.update(dataset=3), r"dataset must be a string or null"),
])
def test_tampered_budget_files_are_refused(tmp_path, edit, match):
    data = _good()
    edit(data)
    path = tmp_path / "b.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=match):
        BudgetAccountant.load(path)


def test_budget_file_for_another_dataset_or_not_json(tmp_path):
    path = BudgetAccountant(total_epsilon=1.0, dataset="one").save(tmp_path / "b.json")
    with pytest.raises(ValueError, match=r"is for dataset 'one', not 'two'"):
        BudgetAccountant.load(path, dataset="two")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="is not valid JSON"):
        BudgetAccountant.load(tmp_path / "bad.json")
    (tmp_path / "nan.json").write_text(json.dumps(_good()).replace('"total_epsilon": 1.0', '"total_epsilon": NaN'))
    with pytest.raises(ValueError, match="NaN is not allowed"):
        BudgetAccountant.load(tmp_path / "nan.json")


def test_dataset_fingerprint_is_keyed_not_the_plain_sha256(tmp_path, monkeypatch):
    """Issue 21.6: an unkeyed SHA-256 lets whoever holds a budget file test a candidate dataset."""
    path = tmp_path / "d.csv"
    path.write_bytes(b"abc")
    plain = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"  # SHA-256("abc"), FIPS 180-2 B.1
    first = dataset_fingerprint(path)
    assert first.startswith("hmac-sha256:") and plain not in first and first == dataset_fingerprint(path)
    budget = BudgetAccountant(total_epsilon=1.0, dataset=first).save(tmp_path / "b.json")
    assert plain not in budget.read_text()
    key = fingerprint_key_path()
    assert key.is_file() and (key.stat().st_mode & 0o777) == 0o600 and len(key.read_bytes()) == 32
    monkeypatch.setenv("PYDPOWL_KEY_FILE", str(tmp_path / "other" / "k"))  # another secret: another fingerprint
    assert dataset_fingerprint(path) != first and (tmp_path / "other").stat().st_mode & 0o777 == 0o700


def test_fingerprint_key_in_the_config_folder_and_refused_when_readable_by_others(tmp_path, monkeypatch):
    monkeypatch.delenv("PYDPOWL_KEY_FILE")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert fingerprint_key_path() == tmp_path / "cfg" / "pydpowl" / "fingerprint.key"
    (tmp_path / "d.csv").write_bytes(b"x")
    dataset_fingerprint(tmp_path / "d.csv")
    fingerprint_key_path().chmod(0o644)
    with pytest.raises(ValueError, match=r"can be read by other users \(mode 644\); run: chmod 600"):
        dataset_fingerprint(tmp_path / "d.csv")


def test_an_unkeyed_budget_file_is_recognised_and_re_keyed(tmp_path):
    path = tmp_path / "d.csv"
    path.write_bytes(b"abc")
    old = {"format": "pydpowl-budget", "version": 1, "total_epsilon": 2.0, "releases": [{"label": "a", "epsilon": 1.5}],
           "dataset": "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}
    (tmp_path / "b.json").write_text(json.dumps(old))
    acc = BudgetAccountant.load(tmp_path / "b.json", data_file=path)
    assert acc.dataset == dataset_fingerprint(path) and acc.spent == 1.5  # the tally carries over
    assert "ba7816bf" not in acc.save(tmp_path / "b.json").read_text()
    path.write_bytes(b"abd")
    with pytest.raises(ValueError, match="is for dataset"):
        BudgetAccountant.load(tmp_path / "b.json", data_file=path)


def test_deltas_compose_sequentially_and_in_parallel():
    assert compose([(0.5, 2.0 ** -30), (0.25, 2.0 ** -31), (0.25, 0.0)]) == (1.0, 3 * 2.0 ** -31)
    assert compose([(0.5, 1e-9), (0.75, 2e-9)], how="parallel") == (0.75, 2e-9)
    with pytest.raises(ValueError, match="how must be"):
        compose([(1.0, 0.0)], how="advanced")
    acc = BudgetAccountant(total_epsilon=2.0, total_delta=1e-6)
    acc.spend(1.0, label="a", delta=4e-7)
    with pytest.raises(BudgetExceededError, match=r"^b: delta=7e-07 exceeds the remaining delta budget 6e-07"):
        acc.spend(0.5, label="b", delta=7e-7)
    acc.spend(0.5, label="c", delta=6e-7)
    assert acc.privacy_spent == (1.5, 1e-6) and acc.releases[1] == Release("c", 0.5, 6e-7)
    uncapped = BudgetAccountant(total_epsilon=1.0)
    uncapped.spend(1.0, delta=0.5)
    assert uncapped.spent_delta == 0.5 and uncapped.total_delta is None


def test_file_round_trip_keeps_deltas(tmp_path):
    acc = BudgetAccountant(total_epsilon=2.0, total_delta=1e-5, dataset="x")
    acc.spend(0.5, label="fit", delta=5.5e-9)
    back = BudgetAccountant.load(acc.save(tmp_path / "b.json"), dataset="x")
    assert back.releases == acc.releases and back.total_delta == 1e-5 and back.privacy_spent == (0.5, 5.5e-9)


def test_rounded_release_spent():
    from pydpowl.engine.mechanisms import floating_point_delta

    fp = floating_point_delta(epsilon=1.0, dim=5, grid=2.0 ** -12, noise_scale=1.0)
    assert rounded_release_spent(1.0, dim=5, grid=2.0 ** -12, noise_scale=1.0) == (1.0, fp)
    assert rounded_release_spent(1.0, dim=5, grid=2.0 ** -12, noise_scale=1.0, delta=1e-5) == (1.0, 1e-5 + fp)
    assert rounded_release_spent(math.inf, dim=5, grid=None, noise_scale=0.0) == (math.inf, 0.0)
    assert rounded_release_spent(1.0, dim=5, grid=None, noise_scale=1.0, full_precision=True) == (1.0, 1.0)
    with pytest.raises(ValueError, match="not floating-point safe"):
        rounded_release_spent(1.0, dim=5, grid=None, noise_scale=1.0)
    # 1 + e^epsilon overflows near epsilon = 710: the bound exceeds 1, reported as the trivial 1 (a fit still works)
    assert rounded_release_spent(1e9, dim=5, grid=2.0 ** -40, noise_scale=1e-9) == (1e9, 1.0)
