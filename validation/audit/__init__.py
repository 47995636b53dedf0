"""Privacy audit of pydpowl and DPpack (``python -m validation.audit --out DIR``).

* :mod:`.sensitivity` searches for the neighbouring datasets that move the exact
  minimiser most and checks ``||theta_hat(D) - theta_hat(D')|| <= Delta``;
* :mod:`.blackbox` bounds the epsilon that releases on those datasets reveal
  (Clopper-Pearson, selection and evaluation halves) and compares it with the
  claimed epsilon, for pydpowl and for DPpack through R;
* :mod:`.floating` looks at the least significant bits of the releases;
* :mod:`.exact` computes the exact law of discrete samplers (the exponential
  mechanism) and checks the floating-point steps of the releases on adversarial inputs;
* :mod:`.report` writes the markdown section, a PNG and the numbers as JSON.
"""

from .blackbox import EpsilonBound, clopper_pearson_lower, clopper_pearson_upper, epsilon_lower_bound
from .configs import AuditConfig, Dataset, default_configs, quick_configs
from .run import AuditResult, run_audit
from .sensitivity import SensitivityResult, evaluate_pair, sensitivity_search

__all__ = [
    "AuditConfig",
    "AuditResult",
    "Dataset",
    "EpsilonBound",
    "SensitivityResult",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "default_configs",
    "epsilon_lower_bound",
    "evaluate_pair",
    "quick_configs",
    "run_audit",
    "sensitivity_search",
]
