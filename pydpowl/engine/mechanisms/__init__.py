"""The noise mechanisms of the package: one module per mechanism, each sensitivity written once.

* :mod:`.output`: output perturbation (Algorithm 1, DP-wERM): ``Delta = (L (C +
  2W) + 2 n tol) / gamma``, the l2-Laplace noise (Gamma radius, uniform
  direction) and the one output release (:func:`output_mechanism`,
  :func:`release_output_perturbation`, :func:`perturb`).
* :mod:`.objective`: objective perturbation (CMS and KST, DPpack's ERM family,
  and pydpowl's weighted objective perturbation for DP-wERM / DP-OWL) with the
  solver-smoothing noise.
* :mod:`.laplace`: the Laplace mechanism (scalar releases).
* :mod:`.gaussian`: isotropic Gaussian noise (KST with ``delta > 0``, DP-LSW/DP-LSL).
* :mod:`.exponential`: the exponential mechanism (private selection and tuning).
* :mod:`.rounding`: the floating-point-safe release (grid, exact-sum rounding,
  and the ``delta`` it costs: :func:`floating_point_delta`).

Every release of pydpowl is made through this package, so the privacy audit
(validation/audit, docs/privacy_audit.md) audits one place. Functions are
pure: they take the generator as ``rng=`` (a numpy Generator, or an
R-compatible :class:`pydpowl.RRandom` that draws exactly what DPpack draws, in
DPpack's order and arithmetic) and keep nothing.

Every name below is importable from this package; those of ``objective``,
``laplace``, ``gaussian`` and ``exponential`` are loaded on first use, so that a
script releasing by output perturbation loads only ``output`` and ``rounding``.
"""

import importlib
from typing import Any, Dict, List, Tuple

from ._common import derived_generator, is_r_stream, warn_reproduce_dppack
from .output import (
    OutputMechanism,
    OutputRelease,
    check_noise_scale,
    noise_rate,
    output_mechanism,
    output_sensitivity,
    perturb,
    release_output_perturbation,
    sample_output_noise,
    sample_output_noise_batch,
)
from .rounding import (
    NORMAL_ABSOLUTE_ERROR,
    RELEASE_GRID_BITS,
    SAMPLER_FAILURE,
    SAMPLER_RADIUS_ULPS,
    STREAMS,
    coupling_delta,
    finite_release_grid,
    floating_point_delta,
    grid_for_scale,
    release_grid,
    r_gamma_radius_model,
    round_release,
)

__all__ = [
    "perturb",
    "output_sensitivity",
    "noise_rate",
    "check_noise_scale",
    "output_mechanism",
    "OutputMechanism",
    "OutputRelease",
    "release_output_perturbation",
    "sample_output_noise",
    "sample_output_noise_batch",
    "is_r_stream",
    "RELEASE_GRID_BITS",
    "release_grid",
    "finite_release_grid",
    "round_release",
    "floating_point_delta",
    "grid_for_scale",
    "SAMPLER_RADIUS_ULPS",
    "NORMAL_ABSOLUTE_ERROR",
    "SAMPLER_FAILURE",
    "STREAMS",
    "coupling_delta",
    "r_gamma_radius_model",
    "CMSCalibration",
    "cms_calibration",
    "KSTCalibration",
    "kst_calibration",
    "kst_rounding_bound",
    "KST_ROUNDING_SHARE",
    "sample_kst_noise",
    "sample_gaussian",
    "sample_isotropic_gaussian",
    "release_gaussian",
    "gaussian_rounding_delta",
    "sample_laplace",
    "release_laplace",
    "laplace_delta",
    "smoothing_share",
    "smoothing_rate",
    "solver_tolerance",
    "kst_tolerance",
    "TARGET_RADIUS",
    "TOL_FLOOR",
    "KAPPA_MIN",
    "KAPPA_FULL_N",
    "SMOOTHING_DOMAIN",
    "linear_term_shift",
    "objective_coupling_failure",
    "LINEAR_TERM_TAIL",
    "derived_generator",
    "sample_smoothing_noise",
    "exponential_mechanism",
    "exponential_mechanism_delta",
    "PERTURBATIONS",
    "Release",
    "check_perturbation",
    "release_cms",
    "release_kst",
    "JACOBIAN_SHARE",
    "WeightedObjectiveCalibration",
    "weighted_objective_calibration",
    "objective_ridge_floor",
    "loss_curvature",
    "release_weighted_objective",
    "weighted_objective_split",
    "warn_reproduce_dppack",
]


#: the mechanisms a release may not need, by module: imported on first use of one of their names (PEP 562), so
#: that a one-fit script with output perturbation never loads objective perturbation or the others (a test
#: checks that every name of their ``__all__`` is here)
_LAZY: Dict[str, Tuple[str, ...]] = {
    "exponential": ("exponential_mechanism", "exponential_mechanism_delta"),
    "gaussian": ("gaussian_rounding_delta", "release_gaussian", "sample_gaussian", "sample_isotropic_gaussian"),
    "laplace": ("laplace_delta", "release_laplace", "sample_laplace"),
    "objective": (
        "JACOBIAN_SHARE", "PERTURBATIONS", "SMOOTHING_DOMAIN", "CMSCalibration", "KSTCalibration", "Release",
        "check_perturbation", "cms_calibration", "KST_ROUNDING_SHARE", "kst_calibration", "kst_rounding_bound",
        "kst_tolerance", "linear_term_shift", "objective_coupling_failure", "release_cms", "release_kst",
        "sample_kst_noise", "WeightedObjectiveCalibration", "loss_curvature", "objective_ridge_floor",
        "release_weighted_objective", "sample_smoothing_noise", "smoothing_rate", "smoothing_share",
        "solver_tolerance", "KAPPA_FULL_N", "KAPPA_MIN", "LINEAR_TERM_TAIL", "TARGET_RADIUS", "TOL_FLOOR",
        "weighted_objective_calibration", "weighted_objective_split",
    ),
}
_LAZY_NAMES: Dict[str, str] = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str) -> Any:
    if name in _LAZY_NAMES:
        value = getattr(importlib.import_module(f".{_LAZY_NAMES[name]}", __name__), name)
    elif name in _LAZY:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(__all__))
