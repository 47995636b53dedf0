"""The numba kernels (pydpowl.engine.kernels) against the numpy path, which uses the same loss definitions."""

import os
import shutil

import numpy as np
import pytest

from pydpowl.engine.kernels import numba_available, use_kernels, warm_up
from pydpowl.engine.losses import HuberHingeLoss, LogisticLoss
from pydpowl.engine.solver import objective_gradient, solve_weighted_erm

pytestmark = pytest.mark.skipif(not numba_available(), reason="numba not installed")


def _problem(seed, n, d):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, d)) * rng.uniform(0.2, 2.0, d)
    Z /= np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None]
    y = np.where(rng.uniform(size=n) < 0.5, 1.0, -1.0)
    w = rng.exponential(size=n) * (rng.uniform(size=n) < 0.9)
    return Z, y, w


@pytest.mark.parametrize("loss", [HuberHingeLoss(0.5), HuberHingeLoss(0.05), LogisticLoss()], ids=str)
@pytest.mark.parametrize("n, d, gamma", [(3000, 1, 3.0), (3000, 4, 0.01), (3000, 20, 50.0), (120_000, 4, 1.0)])
def test_numba_and_numpy_paths_reach_the_same_minimiser(loss, n, d, gamma):  # 120k: subsample warm start
    Z, y, w = _problem(n + d, n, d)
    a = solve_weighted_erm(Z, y, w, gamma=gamma, loss=loss, backend="numpy")
    b = solve_weighted_erm(Z, y, w, gamma=gamma, loss=loss, backend="numba")
    assert (a.backend, b.backend) == ("numpy", "numba")
    for res in (a, b):
        g = np.linalg.norm(objective_gradient(res.x, Z, y, w, gamma=gamma, loss=loss))
        assert g <= 1e-10, f"{res.backend}: certified gradient norm {g:.2e} > 1e-10"
    # both within tol of the unique minimiser: ||x - x*|| <= ||grad F|| / mu, mu = gamma / n
    assert np.linalg.norm(a.x - b.x) <= 2e-10 / (gamma / n)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_feature_scaling_kernel_is_bit_identical_to_numpy(fit_intercept):
    from pydpowl.engine.preprocessing import FeatureScaler

    rng = np.random.default_rng(4)
    X = rng.normal(size=(5000, 3)) * [10.0, 1.0, 3.0]
    scaler = FeatureScaler.from_bounds((np.array([-12.0, -0.5, 0.0]), np.array([8.0, 2.0, 4.0])), 3, fit_intercept)
    Zk, nk = scaler.transform_checked(X, backend="numba")
    Zn, nn = scaler.transform_checked(X, backend="numpy")
    assert np.array_equal(Zk, Zn)
    assert nk == nn == int(np.count_nonzero(np.clip(X, scaler.lower, scaler.upper) != X)) > 0


def test_backend_rule():
    assert not use_kernels(10**9, "numpy") and use_kernels(1, "numba")
    from pydpowl.engine import kernels

    assert use_kernels(kernels.AUTO_MIN_ROWS, "auto") and not use_kernels(kernels.AUTO_MIN_ROWS - 1, "auto")
    with pytest.raises(ValueError, match="backend must be one of"):
        use_kernels(10, "gpu")


def test_auto_keeps_the_logistic_loss_on_numpy():
    """The logistic loss is faster vectorised in numpy at every n (measured), so "auto" never picks the kernels
    for it, while the Huber hinge gets them from AUTO_MIN_ROWS rows; backend="numba" still forces them."""
    from pydpowl.engine import kernels
    from pydpowl.engine.losses import HuberHingeLoss, LogisticLoss
    from pydpowl.engine.solver import solve_weighted_erm

    n = kernels.AUTO_MIN_ROWS
    assert use_kernels(n, "auto", HuberHingeLoss(0.5)) and not use_kernels(n, "auto", LogisticLoss())
    assert use_kernels(n, "numba", LogisticLoss())
    rng = np.random.default_rng(8)
    Z = rng.uniform(-0.5, 0.5, size=(n, 2))
    y = np.where(Z[:, 0] + 0.2 * rng.normal(size=n) > 0, 1.0, -1.0)
    auto = solve_weighted_erm(Z, y, np.ones(n), gamma=1.0, loss=LogisticLoss())
    forced = solve_weighted_erm(Z, y, np.ones(n), gamma=1.0, loss=LogisticLoss(), backend="numba")
    assert (auto.backend, forced.backend) == ("numpy", "numba")
    np.testing.assert_allclose(auto.x, forced.x, rtol=0, atol=1e-9)


def test_warm_up_compiles_every_kernel():
    assert warm_up() is True


# ---- a service account (no writable HOME, a package installed by root) -------------------------------------

_AUTO_FIT = """
import json
import os
import shutil

import numpy as np
from pydpowl.engine.kernels import AUTO_MIN_ROWS
from pydpowl.engine.losses import HuberHingeLoss
from pydpowl.engine.solver import solve_weighted_erm

rng = np.random.default_rng(1)
n = AUTO_MIN_ROWS
Z = rng.uniform(-0.5, 0.5, size=(n, 3))
y = np.where(Z[:, 0] + 0.2 * rng.normal(size=n) > 0, 1.0, -1.0)
out = {}
for backend in BACKENDS:
    res = solve_weighted_erm(Z, y, np.ones(n), gamma=1.0, loss=HuberHingeLoss(0.5), backend=backend)
    out[backend] = {"backend": res.backend, "x": res.x.tolist()}
import sys
if "numba" in sys.modules:
    from numba.core.dispatcher import Dispatcher
    from pydpowl.engine.kernels import feature_scaling, margin_losses, row_sweeps
    kernels = [f for m in (feature_scaling, margin_losses, row_sweeps) for f in vars(m).values()
               if isinstance(f, Dispatcher)]
    out["compiled"] = sum(sum(k.stats.cache_misses.values()) for k in kernels)
    out["loaded"] = sum(sum(k.stats.cache_hits.values()) for k in kernels)
print(json.dumps(out))
"""


def _run_auto_fit(unprivileged, backends, home=None):
    import json

    code = f"BACKENDS = {list(backends)!r}\n" + _AUTO_FIT
    proc = unprivileged.run([unprivileged.python, "-c", code], env={"HOME": home})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("home", [None, "writable"], ids=["HOME unset", "a new user's empty HOME"])
def test_a_service_account_loads_the_kernels_from_the_setup_cache_without_compiling(unprivileged, home):
    """Run as ``nobody`` on a package it cannot write (installed by root) with HOME unset, numba found no
    cache location and every kernel import failed ("cannot cache function ... no locator available"); with
    a writable but empty HOME it compiled every kernel in the fit (14 s here). The kernels compiled at set-up
    are read where they are, and nothing is compiled."""
    runner = unprivileged()
    if home == "writable":
        home = os.path.join(runner.root, "home")
        os.makedirs(home)
        shutil.chown(home, "nobody")
    out = _run_auto_fit(runner, ["auto"], home)
    assert out["auto"]["backend"] == "numba"
    assert out["compiled"] == 0 and out["loaded"] > 0
    if home:
        assert not os.listdir(home)  # nothing written in the user's home either


def test_without_a_usable_cache_auto_uses_numpy_and_nothing_fails(unprivileged):
    """No compiled kernels where the package lies (a copy without them, read-only to the user): "auto" keeps
    to numpy rather than compile for seconds in a fit, and gives what backend="numpy" gives."""
    out = _run_auto_fit(unprivileged(with_kernel_cache=False), ["auto", "numpy"])
    assert out["auto"]["backend"] == "numpy"
    assert out["auto"]["x"] == out["numpy"]["x"]
    assert "compiled" not in out  # numba not even imported


def test_a_kernel_with_no_cache_location_at_all_runs_uncached(unprivileged):
    """A kernel whose source lies where the user cannot write, with no ``__pycache__`` there and no HOME:
    compiled for the process instead of numba's "cannot cache function ... no locator available"."""
    runner = unprivileged(with_kernel_cache=False)
    with open(os.path.join(runner.root, "tiny_kernel.py"), "w") as f:
        f.write("from pydpowl.engine.kernels.caching import kernel\n\n\n@kernel\ndef twice(x):\n    return 2.0 * x\n")
    code = "import tiny_kernel; print(tiny_kernel.twice(21.0), tiny_kernel.twice.stats.cache_path)"
    proc = runner.run([runner.python, "-c", code])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["42.0", "None"]  # no cache: nothing to save to, nothing to fail


@pytest.mark.slow
def test_backend_numba_without_any_cache_compiles_in_the_process(unprivileged):
    """backend="numba" asked explicitly with no cache anywhere: the kernels are compiled (seconds) and run."""
    out = _run_auto_fit(unprivileged(with_kernel_cache=False), ["numba", "numpy"])
    assert out["numba"]["backend"] == "numba" and out["compiled"] > 0 and out["loaded"] == 0
    np.testing.assert_allclose(out["numba"]["x"], out["numpy"]["x"], rtol=0, atol=1e-8)


def test_the_kernel_sources_list_every_file_the_kernels_compile():
    """setup_cache_current() looks at the caches beside KERNEL_SOURCES: every compiled function's file is there."""
    from numba.core.dispatcher import Dispatcher

    from pydpowl.engine import kernels
    from pydpowl.engine.kernels import feature_scaling, margin_losses, row_sweeps

    engine = os.path.dirname(os.path.dirname(kernels.__file__))
    files = {os.path.relpath(f.py_func.__code__.co_filename, engine)
             for m in (feature_scaling, margin_losses, row_sweeps) for f in vars(m).values()
             if isinstance(f, Dispatcher)}
    assert files == set(kernels.KERNEL_SOURCES)
    assert kernels.setup_cache_current()  # make setup (warm_up) ran


def test_warm_up_refreshes_the_caches_after_a_kernel_source_changes(tmp_path):
    """Seen failing before the fix: after an edit (or a checkout) of margin_losses.py, set-up's warm_up loaded the
    callers from their caches, the losses' own index stayed older than the source and backend='auto' fell back to
    numpy (setup_cache_current False) while the cached callers kept the old loss code. Run on a copy of the package
    (compiles from scratch: about 9 s)."""
    import subprocess
    import sys
    import time
    from pathlib import Path

    import pydpowl

    shutil.copytree(Path(pydpowl.__file__).resolve().parent, tmp_path / "pydpowl",
                    ignore=shutil.ignore_patterns("__pycache__"))
    code = ("import sys; from pydpowl.engine.kernels import warm_up, setup_cache_current; "
            "warm_up(); print(setup_cache_current())")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = str(tmp_path)

    def run() -> str:
        return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                              check=True).stdout.strip()

    assert run() == "True"
    time.sleep(0.05)
    (tmp_path / "pydpowl" / "engine" / "kernels" / "margin_losses.py").touch()
    assert run() == "True"
