"""The R package's Python worker (rpkg/pydpowl/inst/python/pydpowl_worker.py), driven as R drives it.

A client written here from the protocol's specification (not from the
worker's code) creates the two FIFOs, starts the worker, and exchanges
requests and responses with it: the hello, values in both directions,
Python's exceptions and warnings with their R classes, what a fit imports,
and the worker's exit on end of file or on a malformed request.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

WORKER = Path(__file__).resolve().parents[2] / "rpkg" / "pydpowl" / "inst" / "python" / "pydpowl_worker.py"
pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs need a Unix-like system")


# ---- a client after the specification ----------------------------------------------------------

def i32(*values):
    return struct.pack(f"<{len(values)}i", *values)


def enc_string(s):
    if s is None:
        return i32(-1)
    b = s.encode("utf-8")
    return i32(len(b)) + b


def enc(value, dims=None):
    """R's view of a value: floats are doubles, ints integers, bools logicals, dict a named list."""
    if value is None:
        return i32(0)
    if isinstance(value, dict):
        return i32(5, len(value), 1) + b"".join(enc_string(k) + enc(v) for k, v in value.items())
    if isinstance(value, list) and all(isinstance(s, (str, type(None))) for s in value):
        return i32(4, len(value)) + b"".join(enc_string(s) for s in value)
    if isinstance(value, list):
        return i32(5, len(value), 0) + b"".join(enc(v) for v in value)
    if isinstance(value, str):
        return i32(4, 1) + enc_string(value)
    if isinstance(value, bool):
        return i32(3, 1, 0, int(value))
    if isinstance(value, int):
        return i32(2, 1, 0, value)
    if isinstance(value, float):
        return i32(1, 1, 0) + struct.pack("<d", value)
    arr = np.asarray(value)
    dims = list(arr.shape)
    code = {"f": 1, "i": 2, "b": 3}[arr.dtype.kind]
    data = arr.astype("<f8" if code == 1 else "<i4").tobytes(order="F")
    return i32(code, arr.size, len(dims), *dims) + data


class Decoder:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, n):
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def int32(self, n=1):
        v = struct.unpack(f"<{n}i", self.take(4 * n))
        return v[0] if n == 1 else list(v)

    def string(self):
        n = self.int32()
        return None if n < 0 else self.take(n).decode("utf-8")

    def value(self):
        kind = self.int32()
        if kind == 0:
            return None
        if kind == 4:
            return [self.string() for _ in range(self.int32())]
        if kind == 5:
            n, named = self.int32(2)
            if named:
                return {self.string(): self.value() for _ in range(n)}
            return [self.value() for _ in range(n)]
        n, k = self.int32(2)
        dims = self.int32(k) if k > 1 else ([self.int32()] if k == 1 else [])
        arr = np.frombuffer(self.take(n * (8 if kind == 1 else 4)), dtype="<f8" if kind == 1 else "<i4")
        return (kind, arr.reshape(dims, order="F") if len(dims) > 1 else arr.copy(), k)


class Client:
    def __init__(self, tmp_path, python=sys.executable):
        self.req_path, self.resp_path = tmp_path / "req", tmp_path / "resp"
        os.mkfifo(self.req_path, 0o600)
        os.mkfifo(self.resp_path, 0o600)
        self.proc = subprocess.Popen([python, str(WORKER), str(self.req_path), str(self.resp_path)],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.req = open(self.req_path, "wb")  # the worker opens the request FIFO first, as R does
        self.resp = open(self.resp_path, "rb")

    def receive(self):
        head = self.resp.read(8)
        if len(head) < 8:
            return None
        assert head[:4] == b"PDWS"
        (n,) = struct.unpack("<i", head[4:])
        body = Decoder(self.resp.read(n))
        return body.int32(), body.value()

    def call(self, fun, **args):
        self.req.write(b"PDWQ" + enc_string(fun) + enc(args))
        self.req.flush()
        return self.receive()

    def close(self):
        self.req.close()
        code = self.proc.wait(timeout=30)
        self.resp.close()
        return code


@pytest.fixture
def client(tmp_path):
    c = Client(tmp_path)
    status, hello = c.receive()
    assert status == 0, hello
    c.hello = hello["result"]
    yield c
    if c.proc.poll() is None:
        c.close()


def scalar(decoded):
    kind, arr, k = decoded
    assert k == 0 and arr.shape == (1,)
    return arr[0]


# ---- the tests ------------------------------------------------------------------------------------

def test_hello_says_who_answers(client):
    h = client.hello
    assert scalar(h["protocol"]) == 1
    assert h["python"] == [sys.executable]
    assert scalar(h["pid"]) == client.proc.pid
    import pydpowl

    assert h["pydpowl_version"] == [pydpowl.__version__]


def test_values_cross_both_ways(client):
    m = np.array([[1.5, np.nan, -np.inf], [2.0, 1e-300, 7.0]])
    seed = np.array([10403, 624, -2**31, 2**31 - 1, 5], dtype=np.int32)
    status, out = client.call(
        "echo", none=None, dbl=0.1, int=7, na_int=-2**31, lgl=True, s="h\u00e9", strs=["a", None, ""], mat=m,
        seed=seed, one=np.array([4.0]), empty=np.zeros(0), flags=np.array([True, False]),
        nested={"a": 1.5, "b": ["x", 2]})
    assert status == 0
    r = out["result"]
    assert r["none"] is None
    assert scalar(r["dbl"]) == 0.1 and r["dbl"][0] == 1
    assert r["int"][0] == 2 and scalar(r["int"]) == 7
    assert r["na_int"] is None  # an integer scalar NA is None in Python, NULL back in R
    assert r["lgl"][0] == 3 and scalar(r["lgl"]) == 1
    assert r["s"] == ["h\u00e9"] and r["strs"] == ["a", None, ""]
    kind, back, k = r["mat"]
    assert kind == 1 and k == 2
    np.testing.assert_array_equal(back, m)
    kind, back, k = r["seed"]
    assert kind == 2 and back.tolist() == seed.tolist()  # -2^31 (R's NA) survives in integer arrays
    assert r["one"][1].tolist() == [4.0] and r["one"][2] == 1  # a 1-d array stays an array
    assert r["empty"][1].size == 0
    assert r["flags"][0] == 3 and r["flags"][1].tolist() == [1, 0]
    assert scalar(r["nested"]["a"]) == 1.5 and r["nested"]["b"][0] == ["x"] and scalar(r["nested"]["b"][1]) == 2


def test_exceptions_carry_message_and_classes(client):
    status, err = client.call("no_such_function")
    assert status == 1
    assert err["message"] == ["the Python worker has no function 'no_such_function'"]
    assert err["class"] == ["pydpowl_value_error", "pydpowl_argument_error", "pydpowl_engine_error"]
    status, err = client.call("svmdp_settings", eps="1", gamma=1.0, **{"huber.h": 0.5})
    assert status == 1
    assert err["message"] == ["eps must be a real number, got character."]  # in R's words
    assert err["class"][0] == "pydpowl_type_error" and err["python_type"] == ["TypeError"]
    assert "Traceback" in err["traceback"][0]
    status, out = client.call("svmdp_settings", eps=float("inf"), gamma=2, **{"huber.h": 0.5})
    assert status == 0 and scalar(out["result"]["gamma"]) == 2.0  # the worker goes on after an error


def _svm_args(n=200, seed=0, **over):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(18, 89, n), rng.integers(0, 2, n)]).astype(float)
    from pydpowl import RRandom

    args = {"X": X, "y": (rng.uniform(size=n) < 0.5).astype(float), "upper.bounds": np.array([89.0, 1.0]),
            "lower.bounds": np.array([18.0, 0.0]), "add.bias": True, "weights": rng.uniform(0, 3, n),
            "weights.upper.bound": 2.0, "eps": 1.0, "gamma": 2.0, "huber.h": 0.5, "perturbation.method": "output",
            "r_state": RRandom(7).get_state(), "columns": ["age", "male"]}
    args.update(over)
    return args


def test_a_replayed_fit_relays_the_replay_warning_with_r_classes_and_nothing_about_the_data(client):
    args = _svm_args()
    assert (args["weights"] > 2.0).any()  # weights above the bound are clipped silently, as DPpack does
    status, out = client.call("svmdp_fit", **args)
    assert status == 0
    (warning,) = out["warnings"]
    assert "NOT differentially private" in warning["message"][0]
    assert warning["class"] == ["pydpowl_replay_stream", "pydpowl_privacy_leak", "pydpowl_runtime"]
    kind, coeff, _ = out["result"]["coeff"]
    assert kind == 1 and coeff.shape == (3,) and np.all(np.isfinite(coeff))
    kind, state, _ = out["result"]["r_state"]
    assert kind == 2 and state.shape == (626,)
    args.pop("r_state")  # the default: OS entropy, no warning at all
    status, out = client.call("svmdp_fit", **args)
    assert status == 0 and out["warnings"] == [] and out["result"]["r_state"] is None


def test_dependencies_deprecation_warnings_are_not_relayed_to_r(client):
    """A worker's second fit of 100,000 rows or more loads the numba kernels, and Debian's llvmlite then warns
    (DeprecationWarning, importlib.resources.path): that is for developers, as Python's default filters say,
    not for the R user; the fit's own warning (replay of R's stream) still comes through."""
    args = _svm_args(n=100_000)
    for _ in range(2):
        status, out = client.call("svmdp_fit", **args)
        assert status == 0, out
        assert [w["class"][0] for w in out["warnings"]] == ["pydpowl_replay_stream"], out["warnings"]
    status, out = client.call("loaded_modules")
    assert "numba" in out["result"]  # the second fit did load the kernels


def test_fit_messages_use_r_names_and_count_from_one(client):
    X = _svm_args()["X"].copy()
    X[[4, 9], 1] = np.nan
    status, err = client.call("svmdp_fit", **_svm_args(X=X))
    assert status == 1
    assert err["message"][0].startswith("X must be finite; it has 2 NaN and 0 infinite entries of 400 in "
                                        "column(s) 'male' (rows 5, 10).")
    status, err = client.call("svmdp_fit", **_svm_args(**{"lower.bounds": np.array([90.0, 0.0])}))
    assert err["message"] == ["lower.bounds must be <= upper.bounds for every feature; reversed at position(s) 1."]


def test_an_svm_fit_imports_numpy_and_the_engine_only(client):
    status, _ = client.call("svmdp_fit", **_svm_args(n=6000))  # above the fused kernels' threshold
    assert status == 0
    status, out = client.call("loaded_modules")
    loaded = set(out["result"])
    assert {"numpy", "pydpowl"} <= loaded
    assert not loaded & {"sklearn", "scipy", "pandas", "statsmodels", "numba"}


def _family_calls():
    """One call of each R entry point of DPpack's family (the R drop-ins' requests)."""
    from pydpowl import RRandom

    rng = np.random.default_rng(3)
    n = 400
    X = rng.uniform(-1, 1, (n, 2))
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(float)
    t = X @ np.array([0.5, -0.3]) + 0.1 * rng.normal(size=n)
    seed = RRandom(11).get_state()
    cls = {"X": X, "y": y, "upper.bounds": np.ones(2), "lower.bounds": -np.ones(2), "r_state": seed}
    lin = {"X": X, "y": t, "upper.bounds": np.array([1.0, 1.0, 2.0]), "lower.bounds": np.array([-1.0, -1.0, -2.0]),
           "add.bias": True, "r_state": seed}
    svm = {"class": "svmDP", "eps": 1.0, "gamma": 1.0, "perturbation.method": "output"}
    return {
        "svmdp_settings": {"eps": 1.0, "gamma": 1.0, "kernel": "Gaussian", "D": 20.0},
        "svmdp_fit objective linear": ("svmdp_fit", {**cls, "eps": 1.0, "gamma": 1.0, "add.bias": True}),
        "svmdp_fit output Gaussian weighted": ("svmdp_fit", {**cls, "eps": 1.0, "gamma": 1.0, "kernel": "Gaussian",
                                                             "D": 20.0, "perturbation.method": "output",
                                                             "weights": np.ones(n), "weights.upper.bound": 1.0}),
        "svmdp_predict": {"X": X, "coeff": np.ones(3), "prefilter": rng.normal(size=(3, 3)), "kernel": "Gaussian"},
        "logistic_regression_dp_fit": {**cls, "eps": 1.0, "gamma": 1.0},
        "linear_regression_dp_fit delta > 0": ("linear_regression_dp_fit", {**lin, "eps": 1.0, "delta": 0.01,
                                                                            "gamma": 1.0}),
        "tune_classification_model": {**cls, "DPmodels": [svm, {**svm, "gamma": 0.1},
                                                          {"class": "LogisticRegressionDP", "eps": 1.0, "gamma": 1.0}]},
        "tune_linear_regression_model": {**lin, "DPmodels": [{"eps": 1.0, "delta": 0.0, "gamma": g}
                                                             for g in (100.0, 1.0)]},
    }


@pytest.mark.parametrize("name", list(_family_calls()))
def test_each_family_entry_point_imports_numpy_and_the_engine_only(tmp_path, name):
    """The R drop-ins' calls load no scikit-learn, scipy, pandas or statsmodels (their import alone costs more than
    a fit), nor numba on a worker's first fits."""
    call = _family_calls()[name]
    fun, args = call if isinstance(call, tuple) else (name, call)
    c = Client(tmp_path)
    try:
        assert c.receive()[0] == 0  # hello
        status, out = c.call(fun, **args)
        assert status == 0, out
        status, out = c.call("loaded_modules")
        loaded = set(out["result"])
        assert {"numpy", "pydpowl"} <= loaded
        assert not loaded & {"sklearn", "scipy", "pandas", "statsmodels", "numba"}
    finally:
        c.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="F_SETPIPE_SZ is Linux's")
def test_the_request_fifo_is_widened_to_a_mebibyte(client):
    """After its hello the worker has asked for a 1 MiB buffer on the request FIFO (R's large writes then
    cross in a few pieces); the pipe is shared, so its size shows on the writing end too."""
    import fcntl

    max_size = int(open("/proc/sys/fs/pipe-max-size").read())
    assert max_size >= 1 << 20, "this Linux caps pipes below 1 MiB for unprivileged processes"
    assert fcntl.fcntl(client.req.fileno(), fcntl.F_GETPIPE_SZ) == 1 << 20


def _minor_faults(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[7])  # minflt, the 10th field of proc(5) counted after "(comm)"


@pytest.mark.skipif(not sys.platform.startswith("linux") or not Path("/proc/self/stat").exists(),
                    reason="glibc's mallopt and /proc are Linux's")
def test_fits_reuse_the_memory_of_the_fits_before(client):
    """A repeated 20,000-row logistic fit (as a warm loop in R sends it) runs in memory the worker already
    has: without the allocator setting each such fit faulted in about 300 fresh pages (glibc maps blocks of
    128 KiB and more afresh, and hands freed memory at the top of the heap back to the system)."""
    from pydpowl import RRandom

    rng = np.random.default_rng(0)
    n = 20_000
    X = np.asfortranarray(rng.uniform(-1.2, 1.2, (n, 2)))
    args = {"X": X, "y": (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(float), "upper.bounds": np.ones(2),
            "lower.bounds": -np.ones(2), "add.bias": True, "eps": 1.0, "gamma": 1.0,
            "r_state": RRandom(5).get_state()}
    for _ in range(5):
        assert client.call("logistic_regression_dp_fit", **args)[0] == 0
    before = _minor_faults(client.proc.pid)
    for _ in range(20):
        assert client.call("logistic_regression_dp_fit", **args)[0] == 0
    per_fit = (_minor_faults(client.proc.pid) - before) / 20
    assert per_fit < 20, f"{per_fit} page faults per fit"


def test_worker_exits_at_end_of_file(client):
    assert client.close() == 0


def test_a_malformed_request_stops_the_worker_with_a_reason(client):
    client.req.write(b"JUNK")
    client.req.flush()
    assert client.receive() is None  # end of file: the worker has gone
    assert client.proc.wait(timeout=30) != 0
    assert b"expected a request" in client.proc.stderr.read()


def test_a_python_without_the_engine_says_so_in_its_hello(tmp_path):
    # This interpreter in isolated mode without site-packages (-I -S): a Python that certainly lacks pydpowl on
    # any machine (the worker itself needs only the standard library), so the test never depends on what the
    # system Python has installed.
    python = tmp_path / "python-without-pydpowl"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" -I -S "$@"\n')
    python.chmod(0o755)
    assert subprocess.run([str(python), "-c", "import pydpowl"], capture_output=True, cwd="/").returncode != 0
    c = Client(tmp_path, python=str(python))
    status, err = c.receive()
    assert status == 1
    assert err["class"] == ["pydpowl_python_missing"]
    assert err["message"][0].startswith(f"'import pydpowl' fails in {sys.executable} (ModuleNotFoundError")
    assert c.proc.wait(timeout=30) == 1


def test_a_result_the_protocol_cannot_carry_is_answered_with_an_error():
    import importlib.util
    import io

    spec = importlib.util.spec_from_file_location("pydpowl_worker", WORKER)
    worker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(worker)
    out = io.BytesIO()
    worker.send(out, 0, {"result": {"f": object()}, "warnings": []})
    data = out.getvalue()
    assert data[:4] == b"PDWS" and struct.unpack("<i", data[4:8])[0] == len(data) - 8
    body = Decoder(data[8:])
    assert body.int32() == 1
    err = body.value()
    assert err["message"] == ["cannot send an object of type object to R"] and err["class"][0] == "pydpowl_type_error"


# ---- a service account: R run as an unprivileged user with no HOME (issue 22, item 6c) ------------------------

_R_TWO_LARGE_FITS = """
library(pydpowl)
set.seed(1); n <- 100000
X <- data.frame(a = runif(n), b = runif(n)); y <- rbinom(n, 1, plogis(2 * X$a - 1))
for (i in 1:2) {
  m <- svmDP$new("l2", eps = 1, gamma = 1)
  m$fit(X, y, c(1, 1), c(0, 0), add.bias = TRUE)
  cat(sprintf("FIT%d=%s\\n", i, paste(signif(m$coeff, 3), collapse = ",")))
}
cat(sprintf("NUMBA=%s\\n", "numba" %in% pydpowl:::engine("loaded_modules", list())))
"""


def _installed_r_package():
    if shutil.which("Rscript") is None:
        return None
    out = subprocess.run(["Rscript", "-e", "cat(find.package('pydpowl', quiet = TRUE))"], capture_output=True,
                         text=True)
    return out.stdout.strip() or None


def test_r_as_a_service_account_without_home_fits_repeatedly_with_the_kernels(unprivileged):
    """As ``nobody`` with HOME unset, every svmDP fit of 100,000 rows after the first failed ("cannot cache
    function ... no locator available": the worker's second large fit loads the numba kernels). Now both fit,
    and the second uses the kernels compiled at set-up."""
    package = _installed_r_package()
    if package is None:
        if os.environ.get("PYDPOWL_REQUIRE_R") == "1":
            pytest.fail("the R package pydpowl is not installed, and PYDPOWL_REQUIRE_R=1 requires it.")
        pytest.skip("the R package pydpowl is not installed")
    runner = unprivileged()
    rlib = os.path.join(runner.root, "rlib")
    shutil.copytree(package, os.path.join(rlib, "pydpowl"))
    for d, _, files in os.walk(rlib):
        os.chmod(d, 0o755)
        for f in files:
            os.chmod(os.path.join(d, f), 0o755 if f.endswith(".so") else 0o644)
    script = os.path.join(runner.root, "two_fits.R")
    with open(script, "w") as f:
        f.write(_R_TWO_LARGE_FITS)
    os.chmod(script, 0o644)
    proc = runner.run(["Rscript", script], env={"R_LIBS": rlib, "PYDPOWL_PYTHON": runner.python})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "FIT1=" in out and "FIT2=" in out, out[-3000:]
    assert "NUMBA=TRUE" in out, out[-3000:]
