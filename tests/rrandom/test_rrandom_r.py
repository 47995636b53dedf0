"""RRandom against R itself, bit for bit (needs R through rpy2).

Each test makes one R call per batch (``r_reference.rng.r_streams``): R seeds
or loads a state, runs the batch on one stream and returns the draws and its
final ``.Random.seed``; the same calls are made on an ``RRandom``. Doubles are
compared exactly (``numpy.array_equal``, with ``float.hex`` in messages).
"""

from __future__ import annotations

import numpy as np
import pytest

from pydpowl.rrandom import RRandom
from pydpowl.rrandom._normal import qnorm_vec

pytestmark = pytest.mark.r


@pytest.fixture(scope="module", autouse=True)
def _needs_r(require_r):
    require_r()


def _rs():
    from r_reference.rng import r_literal, r_streams

    return r_streams, r_literal


def _assert_bitwise(got, ref, label=""):
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    assert got.shape == ref.shape, f"{label}: shape {got.shape} != R's {ref.shape}"
    same = (got == ref) | (np.isnan(got) & np.isnan(ref))
    if not same.all():
        i = int(np.flatnonzero(~same)[0])
        raise AssertionError(
            f"{label}: {int((~same).sum())} of {ref.size} values differ from R; first at {i}: "
            f"{float(got[i]).hex()} != R {float(ref[i]).hex()}"
        )


def _check_batch(rng, calls, exprs, *, seed=None, state=None):
    """Run R's expressions and the matching Python calls; compare draws and state."""
    r_streams, _ = _rs()
    ref, ref_state = r_streams(exprs, seed=seed, state=state)
    for (label, call), r_val in zip(calls, ref):
        _assert_bitwise(call(rng), r_val, label)
    np.testing.assert_array_equal(rng.get_state(), ref_state, err_msg=".Random.seed differs")
    return ref


# ---------------------------------------------------------------------------- seeding
SEEDS = [0, 1, -1, 2, 42, 123, 1234, 99999, -123456, 20240101, 2**31 - 1, -(2**31) + 1,
         1_000_000_007, -987654321, 7.9, -7.9]


@pytest.mark.parametrize("seed", SEEDS)
def test_seed_state_and_mixed_draws(seed):
    r_streams, _ = _rs()
    _, state0 = r_streams([], seed=seed)
    np.testing.assert_array_equal(RRandom(seed).get_state(), state0)
    calls = [
        ("runif", lambda r: r.runif(7)),
        ("rnorm", lambda r: r.rnorm(9)),
        ("rexp", lambda r: r.rexp(6)),
        ("rgamma", lambda r: r.rgamma(5, 2.0)),
        ("rgamma<1", lambda r: r.rgamma(4, 0.3)),
        ("sample", lambda r: r.sample(10)),
        ("sample.int", lambda r: r.sample_int(1000, 5, replace=True)),
    ]
    exprs = ["runif(7)", "rnorm(9)", "rexp(6)", "rgamma(5, 2)", "rgamma(4, 0.3)",
             "sample(10)", "sample.int(1000, 5, TRUE)"]
    _check_batch(RRandom(seed), calls, exprs, seed=seed)


def test_many_random_seeds_first_draws():
    r_streams, _ = _rs()
    seeds = np.random.default_rng(20240607).integers(-(2**31) + 1, 2**31 - 1, size=40)
    for s in seeds.tolist():
        ref, ref_state = r_streams(["runif(3)", "rnorm(3)"], seed=s)
        rng = RRandom(s)
        _assert_bitwise(rng.runif(3), ref[0], f"seed {s} runif")
        _assert_bitwise(rng.rnorm(3), ref[1], f"seed {s} rnorm")
        np.testing.assert_array_equal(rng.get_state(), ref_state)


@pytest.mark.parametrize("bad", [2**31, -(2**31)])
def test_out_of_range_seed_fails_in_both(bad):
    from r_reference import RError

    r_streams, _ = _rs()
    with pytest.raises(RError, match="not a valid integer"):
        r_streams([], seed=bad)
    with pytest.raises(ValueError, match="^seed must be in"):
        RRandom(bad)


# ------------------------------------------------------------------------ long streams
def test_long_streams_each_kind():
    n = 200_000
    calls = [
        ("runif(-3, 7)", lambda r: r.runif(n, -3, 7)),
        ("rnorm(10, 2)", lambda r: r.rnorm(n, 10, 2)),
        ("rexp(3)", lambda r: r.rexp(n, 3)),
        ("rgamma 1", lambda r: r.rgamma(n, 1)),
        ("rgamma 2 rate 1.5", lambda r: r.rgamma(n, 2, rate=1.5)),
        ("rgamma 5 rate 2", lambda r: r.rgamma(n, 5, rate=2)),
        ("rgamma 20", lambda r: r.rgamma(n, 20)),
        ("rgamma 0.5", lambda r: r.rgamma(n, 0.5)),
        ("rgamma 0.1 rate 4", lambda r: r.rgamma(n, 0.1, rate=4)),
        ("rgamma cycling", lambda r: r.rgamma(n, [0.7, 3, 3, 15, 1.5])),
        ("sample.int 1e6", lambda r: r.sample_int(10**6, n, replace=True)),
    ]
    exprs = [f"runif({n}, -3, 7)", f"rnorm({n}, 10, 2)", f"rexp({n}, 3)", f"rgamma({n}, 1)",
             f"rgamma({n}, 2, rate = 1.5)", f"rgamma({n}, 5, rate = 2)", f"rgamma({n}, 20)",
             f"rgamma({n}, 0.5)", f"rgamma({n}, 0.1, rate = 4)",
             f"rgamma({n}, c(0.7, 3, 3, 15, 1.5))", f"sample.int(1e6, {n}, TRUE)"]
    _check_batch(RRandom(42), calls, exprs, seed=42)


def test_one_million_normals():
    calls = [("rnorm 1e6", lambda r: r.rnorm(1_000_000))]
    _check_batch(RRandom(123), calls, ["rnorm(1e6)"], seed=123)


def test_rgamma_shapes_at_branch_edges_and_vectors():
    # GD constants change at 3.686 and 13.022; shape 1 uses GD; recycled scale and rate
    calls = [
        ("3.686", lambda r: r.rgamma(20_000, 3.686)),
        ("3.687", lambda r: r.rgamma(20_000, 3.687)),
        ("13.022", lambda r: r.rgamma(20_000, 13.022)),
        ("13.03", lambda r: r.rgamma(20_000, 13.03)),
        ("0.999", lambda r: r.rgamma(20_000, 0.999)),
        ("1e-3", lambda r: r.rgamma(20_000, 1e-3)),
        ("scale 0.3", lambda r: r.gamma(2.5, 0.3, size=20_000)),
        ("rate vec", lambda r: r.rgamma(20_001, 4.0, rate=[0.5, 3.0, 7.0])),
        ("specials", lambda r: r.rgamma(12, [2.0, 0.0, np.inf, -1.0, 0.5, np.nan])),
    ]
    exprs = ["rgamma(20000, 3.686)", "rgamma(20000, 3.687)", "rgamma(20000, 13.022)",
             "rgamma(20000, 13.03)", "rgamma(20000, 0.999)", "rgamma(20000, 1e-3)",
             "rgamma(20000, 2.5, scale = 0.3)", "rgamma(20001, 4, rate = c(0.5, 3, 7))",
             "suppressWarnings(rgamma(12, c(2, 0, Inf, -1, 0.5, NaN)))"]
    _check_batch(RRandom(2024), calls, exprs, seed=2024)


def test_recycled_parameters_and_special_values():
    calls = [
        ("runif vec", lambda r: r.runif(1001, [0, 2, 5], [1, 2, 9])),
        ("rnorm vec", lambda r: r.rnorm(1001, [0, np.inf, 3], [1, 0.5, 0, 2])),
        ("rexp vec", lambda r: r.rexp(1001, [1, np.inf, 0.25])),
        ("rnorm nan", lambda r: r.rnorm(6, [0, np.nan], [1, -1, 1])),
    ]
    exprs = ["runif(1001, c(0, 2, 5), c(1, 2, 9))", "rnorm(1001, c(0, Inf, 3), c(1, 0.5, 0, 2))",
             "rexp(1001, c(1, Inf, 0.25))", "suppressWarnings(rnorm(6, c(0, NaN), c(1, -1, 1)))"]
    _check_batch(RRandom(77), calls, exprs, seed=77)


def test_interleaved_calls_and_state():
    calls = []
    exprs = []
    kinds = [
        ("rgamma(1, 5, rate = 3)", lambda r: r.rgamma(1, 5, rate=3)),
        ("rnorm(5)", lambda r: r.rnorm(5)),
        ("runif(3, 1, 2)", lambda r: r.runif(3, 1, 2)),
        ("rexp(40)", lambda r: r.rexp(40)),
        ("rgamma(50, 0.4)", lambda r: r.rgamma(50, 0.4)),
        ("sample(7)", lambda r: r.sample(7)),
        ("rgamma(37, 9)", lambda r: r.rgamma(37, 9)),
        ("sample(c(-1, 1), 9, TRUE, prob = c(.5, .5))",
         lambda r: r.sample(np.array([-1, 1]), 9, True, prob=[0.5, 0.5])),
        ("rnorm(1, sd = 0)", lambda r: r.rnorm(1, sd=0)),
    ]
    for rep in range(6):
        for e, f in kinds:
            exprs.append(e)
            calls.append((f"{e} #{rep}", f))
    _check_batch(RRandom(31337), calls, exprs, seed=31337)


# --------------------------------------------------------------------------- sample
def test_sample_variants():
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    w300 = np.random.default_rng(5).gamma(1.0, size=300)
    w50 = np.random.default_rng(6).random(50)
    ties = np.array([0.1, 0.2, 0.2, 0.0, 0.2, 0.1, 0.1, 0.05, 0.05] * 3)
    _, lit = _rs()

    def rvec(a):
        return "c(" + ", ".join(lit(v) for v in a) + ")"

    calls = [
        ("sample(100)", lambda r: r.sample(100)),
        ("sample(1e6, 1000)", lambda r: r.sample(10**6, 1000)),
        ("sample(1e6, 1000, TRUE)", lambda r: r.sample(10**6, 1000, True)),
        ("sample(3e9, 100, TRUE)", lambda r: r.sample(3e9, 100, True)),
        ("sample(2e7, 50) hash", lambda r: r.sample(2e7, 50)),
        ("sample(5e9, 20) hash", lambda r: r.sample(5e9, 20)),
        ("65536", lambda r: r.sample_int(65536, 2000, True)),
        ("65537", lambda r: r.sample_int(65537, 2000, True)),
        ("65536 no replace", lambda r: r.sample_int(65536, 300)),
        ("n = 1", lambda r: r.sample_int(1, 5, True)),
        ("sample(1)", lambda r: r.sample(1)),
        ("letters", lambda r: np.searchsorted(letters, r.sample(letters, 10)) + 1),
        ("walker 300", lambda r: r.sample_int(300, 5000, True, prob=w300)),
        ("inversion 50", lambda r: r.sample_int(50, 3000, True, prob=w50)),
        ("no replace prob", lambda r: r.sample_int(27, 20, False, prob=ties)),
        ("pm1", lambda r: r.sample(np.array([-1, 1]), 20_000, True, prob=[0.5, 0.5])),
        ("integers", lambda r: r.integers(5, 17, size=500)),
        ("choice", lambda r: r.choice(8, size=30, replace=True, p=[1, 2, 3, 4, 4, 3, 2, 1])),
    ]
    exprs = [
        "sample(100)", "sample(1e6, 1000)", "sample(1e6, 1000, TRUE)", "sample(3e9, 100, TRUE)",
        "sample(2e7, 50)", "sample(5e9, 20)", "sample.int(65536, 2000, TRUE)",
        "sample.int(65537, 2000, TRUE)", "sample.int(65536, 300)", "sample.int(1, 5, TRUE)",
        "sample(1)", "match(sample(letters, 10), letters)",
        f"sample.int(300, 5000, TRUE, prob = {rvec(w300)})",
        f"sample.int(50, 3000, TRUE, prob = {rvec(w50)})",
        f"sample.int(27, 20, FALSE, prob = {rvec(ties)})",
        "sample(c(-1, 1), 20000, TRUE, prob = c(0.5, 0.5))",
        "5 - 1 + sample.int(12, 500, TRUE)",
        "sample.int(8, 30, TRUE, prob = c(1, 2, 3, 4, 4, 3, 2, 1)) - 1",
    ]
    _check_batch(RRandom(8), calls, exprs, seed=8)


# -------------------------------------------------------------- numpy-style mapping
def test_generator_subset_against_r():
    calls = [
        ("standard_normal", lambda r: r.standard_normal((3, 4)).ravel()),
        ("normal", lambda r: r.normal(2.0, 0.7, size=50)),
        ("uniform", lambda r: r.uniform(-1.0, 0.3, size=50)),
        ("random", lambda r: r.random(7)),
        ("exponential", lambda r: r.exponential(0.3, size=500)),
        ("standard_exponential", lambda r: r.standard_exponential(50)),
        ("gamma", lambda r: r.gamma(3.3, 0.3, size=500)),
        ("standard_gamma", lambda r: r.standard_gamma(0.8, size=50)),
    ]
    exprs = ["rnorm(12)", "rnorm(50, 2, 0.7)", "runif(50, -1, 0.3)", "runif(7)",
             ".Call(stats:::C_rexp, 500, 0.3)", "rexp(50)", "rgamma(500, 3.3, scale = 0.3)",
             "rgamma(50, 0.8)"]
    _check_batch(RRandom(11), calls, exprs, seed=11)


# --------------------------------------------------------------------- loaded states
def _seed_state(seed):
    return RRandom(seed).get_state()


@pytest.mark.parametrize("case", ["zero word", "mti 0", "mti 625", "mti 700", "mid stream"])
def test_loaded_states(case):
    state = _seed_state(5).astype(np.int64)
    if case == "zero word":
        state[1], state[2 + 5] = 5, 0
    elif case == "mti 0":
        state[1] = 0
    elif case == "mti 625":
        state[1] = 625
    elif case == "mti 700":
        state[1] = 700
    else:
        rng = RRandom(5)
        rng.rnorm(1234)
        state = rng.get_state().astype(np.int64)
    calls = [("runif", lambda r: r.runif(700)), ("rnorm", lambda r: r.rnorm(10))]
    _check_batch(RRandom.from_r_state(state), calls, ["runif(700)", "rnorm(10)"], state=state)


# ------------------------------------------------------------------------------ qnorm
def test_qnorm_matches_r_including_far_tails():
    from r_reference._session import call_r

    rng = np.random.default_rng(3)
    p = np.concatenate([
        rng.random(20_000),
        10.0 ** -rng.uniform(1, 18, 20_000),        # lower tail, r up to ~6.4
        1.0 - 10.0 ** -rng.uniform(1, 15, 10_000),  # upper tail
        np.array([0.5, 0.075, 0.925, 1e-300, 2.0**-60]),
    ])
    ref = np.array(call_r("function(p) qnorm(p)", p), dtype=np.float64)
    _assert_bitwise(qnorm_vec(p), ref, "qnorm")


# ------------------------------------------------------------------ rt and permutation
def test_rt_and_permutation_against_r():
    calls = [
        ("rt 8", lambda r: r.rt(20_000, 8)),
        ("rt recycled", lambda r: r.rt(5_001, [0.5, 1.0, 3.0, np.inf, 25.0, 1e-3])),
        ("standard_t", lambda r: r.standard_t(2.5, size=(10, 30)).ravel()),
        ("permutation", lambda r: r.permutation(1459)),
        ("rt specials", lambda r: r.rt(8, [4.0, -1.0, np.nan, 0.0])),
    ]
    exprs = ["rt(20000, 8)", "rt(5001, c(0.5, 1, 3, Inf, 25, 1e-3))", "rt(300, 2.5)",
             "sample.int(1459) - 1", "suppressWarnings(rt(8, c(4, -1, NaN, 0)))"]
    _check_batch(RRandom(909), calls, exprs, seed=909)
