import pickle

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone

from pydpowl import DPOWL, DPWeightedERM, LogisticPropensity
from pydpowl._base import DPEstimator, check_is_fitted, is_fitted
from pydpowl.exceptions import NotFittedError


class _Toy(DPEstimator):
    def __init__(self, *, alpha=1.0, random_state=None):
        self.alpha = alpha
        self.random_state = random_state

    def fit(self):
        self.value_ = self.alpha
        return self


@pytest.mark.parametrize("cls", [DPWeightedERM, DPOWL, LogisticPropensity])
def test_every_estimator_is_a_scikit_learn_estimator(cls):
    assert issubclass(cls, BaseEstimator) and issubclass(cls, DPEstimator)


def test_clone_keeps_parameters_and_drops_fitted_state():
    m = DPOWL(epsilon=0.5, gamma=3.0, weights_upper_bound=2.0, feature_bounds=([0.0], [1.0]), random_state=4)
    c = clone(m)
    assert c is not m and c.get_params() == m.get_params()
    assert c.epsilon == 0.5 and c.random_state == 4


def test_pickle_drops_the_seed_only_once_fitted():
    unfitted = pickle.loads(pickle.dumps(_Toy(random_state=7)))
    assert unfitted.random_state == 7  # a configuration, not yet tied to any noise
    fitted = pickle.loads(pickle.dumps(_Toy(random_state=7).fit()))
    assert fitted.random_state is None and fitted.value_ == 1.0


def test_is_fitted_and_check_is_fitted():
    toy = _Toy()
    assert not is_fitted(toy)
    with pytest.raises(NotFittedError, match="not fitted yet"):
        check_is_fitted(toy, "value_")
    toy.fit()
    assert is_fitted(toy)
    check_is_fitted(toy, "value_")


def test_repr_is_scikit_learns():
    assert repr(_Toy(alpha=2.0)) == "_Toy(alpha=2.0)"
    assert "random_state=Generator" in repr(_Toy(random_state=np.random.default_rng(0)))


def test_other_column_names_are_listed_one_a_line():
    """The lines scikit-learn's check_dataframe_column_names_consistency reads, at most five names each."""
    from pydpowl._base import _feature_names_mismatch_message as message

    fitted = np.array(["a", "b", "c"], dtype=object)
    assert message(fitted, fitted[::-1]) == ("The feature names should match those that were passed during fit.\n"
                                             "Feature names must be in the same order as they were in fit.\n")
    assert message(fitted, np.array(["a", "b", "z"], dtype=object)).endswith(
        "Feature names unseen at fit time:\n- z\nFeature names seen at fit time, yet now missing:\n- c\n")
    many = np.array([f"x{j}" for j in range(7)], dtype=object)
    assert message(fitted, many).count("\n- ") == 6 + 3 and "- x4\n- ...\n" in message(fitted, many)
