"""A corpus of seeded releases, frozen before the engine rebuild and replayed after it.

``python tests/reference/engine_corpus.py`` runs every case below and writes
``engine_corpus.json`` beside this file: for each case the released
coefficients (and the exact non-private minimiser where the estimator can keep
it) as exact decimal ``repr`` floats, plus a digest of the random stream's state after
the fit (numpy Generator state or R's ``.Random.seed``).

The reference file was written by this script at commit c8f95eb (the engine
before the rebuild: three Newton drivers, generated numba source). The test
``tests/engine/test_engine_corpus.py`` runs the same cases on the current code and
compares: a rebuild of the solver must not change what users get beyond
rounding, and must not change how many random numbers a fit draws.

The cases only use public entry points (``DPWeightedERM``, ``DPOWL``) and
data drawn from fixed seeds, so the script runs unchanged on both sides of the
rebuild. Since the privacy fixes (Delta gains ``2 n tol / gamma``, releases
are rounded to a floating-point-safe grid), the estimators reproduce the old
arithmetic only with ``reproduce_dppack=True``; the cases pass it (and state
``weight_sensitivity=0`` for a trial's propensities) wherever the estimator
accepts it, which keeps the script runnable at the old commit. The study
cases of the first corpus (``run_simulation``, ``tune_gamma_table``,
``tune_split_data``) were dropped then: their simulated releases changed by
design, and they have no switch back to the old arithmetic.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Callable, Dict, Iterator, Tuple

import numpy as np

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "engine_corpus.json"

WERM_NS = (20, 200, 1459, 5000, 20_000, 200_000)
OWL_NS = (20, 200, 1459, 5000, 20_000, 100_000, 200_000)


def _werm_data(n: int, d: int, seed: int):
    rng = np.random.default_rng([seed, n, d])
    Z = rng.normal(size=(n, d)) * rng.uniform(0.3, 2.0, size=d)
    Z /= np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None]
    y = np.where(rng.uniform(size=n) < 0.5, -1.0, 1.0)
    w = rng.uniform(0.0, 2.0, size=n)
    return Z, y, w


def _stream(kind: str, seed: int):
    from pydpowl import RRandom

    return RRandom(seed) if kind == "rrandom" else np.random.default_rng(seed)


def _stream_state(rng) -> str:
    """SHA-256 of the stream's full state (PCG64 state and increment, or R's ``.Random.seed``)."""
    if isinstance(rng, np.random.Generator):
        st = rng.bit_generator.state["state"]
        raw = f"{st['state']}:{st['inc']}".encode()
    else:
        raw = np.asarray(rng.get_state(), dtype=np.int32).tobytes()
    return hashlib.sha256(raw).hexdigest()


def _compat(cls, **kwargs) -> Dict:
    """The keyword arguments ``cls`` accepts among ``kwargs`` (newer settings, absent at the old commit)."""
    import inspect

    names = inspect.signature(cls.__init__).parameters
    return {k: v for k, v in kwargs.items() if k in names}


def _werm_case(loss: str, h: float, n: int, d: int, gamma: float, kind: str) -> Callable[[], Dict]:
    def run() -> Dict:
        from pydpowl import DPWeightedERM

        Z, y, w = _werm_data(n, d, 1)
        rng = _stream(kind, 17)
        est = DPWeightedERM(epsilon=1.0, gamma=gamma, weights_upper_bound=2.0, loss=loss, huber_h=h,
                            keep_nonprivate=True, random_state=rng,
                            **_compat(DPWeightedERM, reproduce_dppack=True)).fit(Z, y, w)
        return {"coef": est.coef_.tolist(), "nonprivate": est.nonprivate_coef_.tolist(),
                "stream": _stream_state(rng)}
    return run


def _owl_case(n: int, gamma: float, epsilon: float, kind: str) -> Callable[[], Dict]:
    def run() -> Dict:
        from pydpowl import DPOWL
        from pydpowl.datasets import make_synthetic_owl

        data = make_synthetic_owl(n, random_state=np.random.default_rng([2, n]))
        rng = _stream(kind, 23)
        est = DPOWL(epsilon=epsilon, gamma=gamma, weights_upper_bound=data.weights_upper_bound,
                    feature_bounds=data.feature_bounds, keep_nonprivate=True, random_state=rng,
                    **_compat(DPOWL, reproduce_dppack=True, weight_sensitivity=0.0))
        est.fit(data.X, data.treatment, data.benefit, data.propensity)
        return {"coef": est.dppack_coeff_.tolist(), "nonprivate": est.nonprivate_scaled_coef_.tolist(),
                "stream": _stream_state(rng)}
    return run


def cases() -> Iterator[Tuple[str, Callable[[], Dict]]]:
    """Every case of the corpus, by name."""
    for kind in ("generator", "rrandom"):
        for n in WERM_NS:
            yield f"werm-huber-n{n}-{kind}", _werm_case("huber", 0.5, n, 5, 1.0, kind)
            yield f"werm-logistic-n{n}-{kind}", _werm_case("logistic", 0.5, n, 5, 1.0, kind)
        for n in (200, 20_000):
            yield f"werm-huber-h0.1-gamma0.05-n{n}-{kind}", _werm_case("huber", 0.1, n, 5, 0.05, kind)
            yield f"werm-huber-d20-n{n}-{kind}", _werm_case("huber", 0.5, n, 20, 2.0, kind)
            yield f"werm-logistic-d20-n{n}-{kind}", _werm_case("logistic", 0.5, n, 20, 2.0, kind)
        for n in OWL_NS:
            for gamma in (1.0, 30.0):
                yield f"owl-n{n}-gamma{gamma:g}-{kind}", _owl_case(n, gamma, 1.0, kind)
        yield f"owl-n2000-eps-inf-{kind}", _owl_case(2000, 10.0, np.inf, kind)


def main() -> int:
    sys.path.insert(0, str(HERE.parent.parent))
    out = {name: run() for name, run in cases()}
    REFERENCE.write_text(json.dumps(out, indent=0, sort_keys=True) + "\n")
    print(f"wrote {len(out)} cases to {REFERENCE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
