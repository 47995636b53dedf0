"""The former name of :mod:`pydpowl.evaluation.empirical` (the empirical value, accuracy and concordance of
a rule), kept because earlier versions and docs import from it. New code imports :mod:`pydpowl.evaluation`.
"""

from .evaluation.empirical import (
    empirical_value, ipw_value, accuracy, concordance, AssociationTest, association_test, allocation_test,
    received_propensity, received_propensity_outside, received_propensity_error, arm_propensity, ipw_values,
)

__all__ = [
    "empirical_value",
    "ipw_value",
    "accuracy",
    "concordance",
    "AssociationTest",
    "association_test",
    "allocation_test",
    "received_propensity",
    "received_propensity_outside",
    "received_propensity_error",
    "arm_propensity",
    "ipw_values",
]
