"""The R package's Python worker: one process per R session, spoken to over two FIFOs.

Started by R (``R/worker.R``) the first time the engine is needed, as::

    python pydpowl_worker.py REQ RESP

where REQ and RESP are FIFOs in a private (0700) directory: R writes requests
to REQ and reads responses from RESP. The worker opens REQ, then RESP (R opens
them in the same order, so neither side can wait for the other in the wrong
place), sends a hello, then answers one request at a time until R closes REQ
(end of file), and exits. It ignores SIGINT (a terminal's Ctrl-C reaches the
whole process group): the interrupt belongs to R, which comes back at once and
kills the worker with SIGTERM, its computation with it (a half-done exchange
cannot be resumed); R's next call starts a new worker.

Protocol (version 1; all integers are 4-byte little-endian, doubles 8-byte
little-endian IEEE 754)::

    value     := int32 type, then
                 0 NULL       nothing
                 1 double     int32 n, int32 k, int32 dim[k], n float64 (column-major)
                 2 integer    int32 n, int32 k, int32 dim[k], n int32 (NA = -2^31)
                 3 logical    int32 n, int32 k, int32 dim[k], n int32 (0, 1; NA = -2^31)
                 4 character  int32 n, then n x (int32 byte count, -1 for NA; UTF-8 bytes)
                 5 list       int32 n, int32 named (0 or 1), then n x ([string name] value)
    string    := int32 byte count, UTF-8 bytes
    request   := "PDWQ" string(function) value(named list of arguments)      R -> worker
    response  := "PDWS" int32 body_bytes body                                worker -> R
    body      := int32 status value
                 status 0: list(result = named list, warnings = list of list(class, message))
                 status 1: list(class, message, python_type, traceback)

``k = 0`` marks a plain R vector (no ``dim``); ``k >= 1`` an array whose
``dim`` follows (a 1-d array when ``k = 1``). On the Python side a plain
vector of length 1 is a scalar (``float``, ``int``, ``bool``, ``str``; NA is
NaN for doubles and None otherwise) and anything else a numpy array (a
``list`` of str for character vectors); a named list is a ``dict``. NA in an
integer array stays -2^31 (``.Random.seed`` may hold that value), so R sends
data as doubles. Responses are length-prefixed because R reads a FIFO in
pieces of whatever size is available: it reads the body exactly, then parses
it from memory. The first response, unasked, is the hello: status 0 with
``list(protocol, python, python_version, pid, pydpowl_version)``, or status 1
when ``import pydpowl`` fails.

Only the standard library is imported here at start; numpy when the first
array arrives, and the called function imports what it needs (see
``pydpowl_rcalls.py``, the functions R may call).
"""

import os
import signal
import struct
import sys

PROTOCOL = 1
REQUEST_MAGIC = b"PDWQ"
RESPONSE_MAGIC = b"PDWS"
NULL, DOUBLE, INTEGER, LOGICAL, CHARACTER, LIST = range(6)
NA_INTEGER = -(2 ** 31)
INT32_MAX = 2 ** 31 - 1
#: the request FIFO's buffer, asked of Linux (F_SETPIPE_SZ; 1 MiB is the default ceiling for unprivileged
#: processes): R's write of a large matrix then wakes this process a few times instead of once per 64 KiB
#: (measured: X and y of 200,000 rows, 4.8 MB, cross in 4.1 ms instead of 6.4 ms)
PIPE_BYTES = 1 << 20
#: glibc's allocator in this process (and only here; see tune_allocator): blocks up to MMAP_BYTES come from
#: the heap, and up to TRIM_BYTES of freed heap stay with the process
MMAP_BYTES = 32 << 20
TRIM_BYTES = 64 << 20
_I32 = struct.Struct("<i")

_numpy = None


def _np():
    """numpy, imported at the first array (the hello needs none)."""
    global _numpy
    if _numpy is None:
        import numpy

        _numpy = numpy
    return _numpy


class ProtocolError(Exception):
    """The bytes received do not follow the protocol (the exchange cannot continue)."""


# ---- reading requests --------------------------------------------------------------------------

class Reader:
    """Decodes values from the request FIFO; raises EOFError when R has closed it."""

    def __init__(self, stream):
        self.stream = stream

    def exact(self, n):
        data = self.stream.read(n)
        if data is None or len(data) != n:
            raise EOFError
        return data

    def into(self, array):
        view = memoryview(array).cast("B")
        got = 0
        while got < len(view):
            k = self.stream.readinto(view[got:])
            if not k:
                raise EOFError
            got += k
        return array

    def int32(self):
        return _I32.unpack(self.exact(4))[0]

    def string(self):
        n = self.int32()
        if n == -1:
            return None
        if n < 0:
            raise ProtocolError(f"negative string length {n}")
        return self.exact(n).decode("utf-8")

    def value(self):
        kind = self.int32()
        if kind == NULL:
            return None
        if kind in (DOUBLE, INTEGER, LOGICAL):
            return self._vector(kind)
        if kind == CHARACTER:
            n = self.int32()
            items = [self.string() for _ in range(n)]
            return items[0] if n == 1 else items
        if kind == LIST:
            n, named = self.int32(), self.int32()
            if named:
                out = {}
                for _ in range(n):
                    name = self.string()
                    out[name] = self.value()
                return out
            return [self.value() for _ in range(n)]
        raise ProtocolError(f"unknown value type {kind}")

    def _vector(self, kind):
        n, k = self.int32(), self.int32()
        if n < 0 or not 0 <= k <= 32:
            raise ProtocolError(f"bad vector header (length {n}, {k} dimensions)")
        dims = [self.int32() for _ in range(k)]
        if k == 0 and n == 1:  # an R scalar
            if kind == DOUBLE:
                return struct.unpack("<d", self.exact(8))[0]
            v = self.int32()
            if v == NA_INTEGER:
                return None
            return v if kind == INTEGER else bool(v)
        np = _np()
        raw = self.into(np.empty(n, dtype="<f8" if kind == DOUBLE else "<i4"))
        if kind == LOGICAL:
            raw = np.where(raw == NA_INTEGER, np.nan, raw.astype(np.float64)) if (raw == NA_INTEGER).any() \
                else raw.astype(bool)
        return raw.reshape(dims, order="F") if k > 1 else raw


def read_request(reader):
    """``(function name, keyword arguments)``, or EOFError when R has closed the FIFO."""
    magic = reader.stream.read(4)
    if not magic:
        raise EOFError
    if magic != REQUEST_MAGIC:
        raise ProtocolError(f"expected a request, got bytes {magic!r}")
    name = reader.string()
    args = reader.value()
    if not isinstance(args, dict):
        raise ProtocolError("the arguments of a request must be a named list")
    return name, args


# ---- writing responses ---------------------------------------------------------------------------

class Writer:
    """Encodes one response body in memory."""

    def __init__(self):
        self.parts = []

    def int32(self, v):
        self.parts.append(_I32.pack(v))

    def string(self, s):
        if s is None:
            self.int32(-1)
            return
        b = str(s).encode("utf-8")
        self.int32(len(b))
        self.parts.append(b)

    def value(self, v):
        if v is None:
            self.int32(NULL)
        elif isinstance(v, bool):
            self._scalar(LOGICAL, "<i", int(v))
        elif isinstance(v, int):
            if -INT32_MAX <= v <= INT32_MAX:
                self._scalar(INTEGER, "<i", v)
            else:
                self._scalar(DOUBLE, "<d", float(v))
        elif isinstance(v, float):
            self._scalar(DOUBLE, "<d", v)
        elif isinstance(v, str):
            self.int32(CHARACTER)
            self.int32(1)
            self.string(v)
        elif isinstance(v, dict):
            self.int32(LIST)
            self.int32(len(v))
            self.int32(1)
            for name, item in v.items():
                self.string(name)
                self.value(item)
        elif isinstance(v, (list, tuple)):
            if any(isinstance(s, str) for s in v) and all(s is None or isinstance(s, str) for s in v):
                self.int32(CHARACTER)
                self.int32(len(v))
                for s in v:
                    self.string(s)
            else:
                self.int32(LIST)
                self.int32(len(v))
                self.int32(0)
                for item in v:
                    self.value(item)
        else:
            self._array(v)

    def _scalar(self, kind, fmt, v):
        self.int32(kind)
        self.int32(1)
        self.int32(0)
        self.parts.append(struct.pack(fmt, v))

    def _array(self, v):
        np = _np()
        if isinstance(v, np.generic):  # numpy scalars go as Python scalars
            self.value(v.item())
            return
        if not isinstance(v, np.ndarray):
            raise TypeError(f"cannot send an object of type {type(v).__name__} to R")
        if v.size > INT32_MAX:
            raise ValueError(f"an array of {v.size} entries is too large to send to R (at most {INT32_MAX})")
        if v.dtype.kind == "b":
            kind, data = LOGICAL, v.astype("<i4")
        elif v.dtype.kind in "iu" and (v.size == 0 or (v.min() >= -INT32_MAX - 1 and v.max() <= INT32_MAX)):
            kind, data = INTEGER, v.astype("<i4")
        elif v.dtype.kind in "iuf":
            kind, data = DOUBLE, v.astype("<f8")
        else:
            raise TypeError(f"cannot send an array of dtype {v.dtype} to R")
        self.int32(kind)
        self.int32(int(v.size))
        self.int32(v.ndim)
        for d in v.shape:
            self.int32(int(d))
        self.parts.append(data.tobytes(order="F"))


def _body(status, payload):
    w = Writer()
    w.int32(status)
    w.value(payload)
    return b"".join(w.parts)


def send(stream, status, payload):
    """Write one length-prefixed response and flush it.

    The body is encoded in memory first, so a result that cannot be sent (a
    type the protocol lacks, too many bytes) is answered with an error instead.
    """
    try:
        body = _body(status, payload)
        if len(body) > INT32_MAX:
            raise ValueError(f"the response ({len(body)} bytes) is too large for the protocol (at most "
                             f"{INT32_MAX} bytes)")
    except (TypeError, ValueError) as exc:
        body = _body(1, _error_payload(exc))
    stream.write(RESPONSE_MAGIC + _I32.pack(len(body)) + body)
    stream.flush()


# ---- conditions --------------------------------------------------------------------------------

def _snake(name):
    out = []
    for i, c in enumerate(name):
        if c.isupper() and i and (name[i - 1].islower() or name[i - 1].isdigit()):
            out.append("_")
        out.append(c.lower())
    return "".join(out)


def error_classes(exc):
    """R classes for a Python exception: one per class of its MRO below Exception, most specific first."""
    classes = ["pydpowl_" + _snake(c.__name__) for c in type(exc).__mro__
               if issubclass(c, Exception) and c is not Exception]
    if isinstance(exc, (ValueError, TypeError)):
        classes.append("pydpowl_argument_error")  # a bad argument, as R-side argument errors
    classes.append("pydpowl_engine_error")
    return classes


def warning_classes(category):
    """R classes for a Python warning category (``DataClippedWarning`` -> ``pydpowl_data_clipped``)."""
    out = []
    for c in category.__mro__:
        if not issubclass(c, Warning) or c is Warning:
            continue
        name = _snake(c.__name__)
        out.append("pydpowl_" + (name[: -len("_warning")] if name.endswith("_warning") else name))
    return out


def _error_payload(exc, tb=""):
    return {"class": error_classes(exc), "message": str(exc), "python_type": type(exc).__name__,
            "traceback": tb}


# ---- the loop --------------------------------------------------------------------------------

def hello():
    """``(status, payload)`` of the first message: who we are, or why the engine cannot be imported."""
    try:
        import pydpowl
    except Exception as exc:  # ImportError, or an error inside the package's import
        return 1, {"class": ["pydpowl_python_missing"],
                   "message": f"'import pydpowl' fails in {sys.executable} ({type(exc).__name__}: {exc})",
                   "python_type": type(exc).__name__, "traceback": ""}
    return 0, {"result": {
        "protocol": PROTOCOL, "python": sys.executable,
        "python_version": ".".join(str(v) for v in sys.version_info[:3]), "pid": os.getpid(),
        "pydpowl_version": str(pydpowl.__version__), "pydpowl_path": os.path.dirname(pydpowl.__file__),
    }, "warnings": []}


#: warnings meant for developers (e.g. Debian's llvmlite warns that importlib.resources.path is deprecated when the
#: numba kernels load): never relayed to the R user
DEVELOPER_WARNINGS = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


#: diagnostics answered by the worker itself: "echo" returns its arguments (the protocol both
#: ways), "loaded_modules" the names of the imported top-level modules (what a call has loaded)
BUILTINS = {
    "echo": lambda args: args,
    "loaded_modules": lambda args: sorted({m.split(".")[0] for m in sys.modules}),
}


def call(name, args):
    """Run one request: ``(status, payload)`` with the result and the warnings, or the error."""
    import traceback
    import warnings

    if name in BUILTINS:
        return 0, {"result": BUILTINS[name](args), "warnings": []}
    try:
        import pydpowl_rcalls
    except Exception as exc:  # e.g. numpy missing: an answer, not a dead worker
        return 1, _error_payload(exc, traceback.format_exc())
    fn = getattr(pydpowl_rcalls, name, None) if name in pydpowl_rcalls.__all__ else None
    if fn is None:
        return 1, _error_payload(ValueError(f"the Python worker has no function {name!r}"))
    kwargs = {key.replace(".", "_"): value for key, value in args.items()}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for category in DEVELOPER_WARNINGS:  # as Python's default filters do for code that is not __main__
            warnings.simplefilter("ignore", category)
        try:
            result = fn(**kwargs)
        except Exception as exc:
            return 1, _error_payload(exc, traceback.format_exc())
    relayed = [{"class": warning_classes(w.category), "message": str(w.message)} for w in caught]
    return 0, {"result": result, "warnings": relayed}


def widen_pipe(stream):
    """Ask for a ``PIPE_BYTES`` buffer on the FIFO of ``stream`` where the system allows it (Linux); otherwise,
    or if refused, the default stays (only speed depends on it)."""
    try:
        import fcntl

        fcntl.fcntl(stream.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass


def tune_allocator():
    """Keep freed memory for the next request (glibc only; True when set).

    By default glibc maps each block of 128 KiB or more afresh and hands
    freed memory at the top of the heap back to the system, so every request
    (its arrays, the fit's work arrays) faults in new zeroed pages: about 300
    page faults and 0.3 to 0.5 ms of a 20,000-row fit from R. With
    ``M_MMAP_THRESHOLD = MMAP_BYTES`` and ``M_TRIM_THRESHOLD = TRIM_BYTES``
    a request reuses the pages of the one before; blocks above MMAP_BYTES are
    still mapped and unmapped on their own, and the worker keeps at most about
    TRIM_BYTES of freed heap. Set in the worker, which runs nothing but
    pydpowl; never in a user's Python.
    """
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (macOS' allocator has no mallopt)
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
    return mallopt(M_MMAP_THRESHOLD, MMAP_BYTES) == 1 and mallopt(M_TRIM_THRESHOLD, TRIM_BYTES) == 1


def serve(req_path, resp_path):
    """Open the FIFOs (request first), say hello, answer until R closes the request FIFO."""
    with open(req_path, "rb", buffering=1 << 16) as req, open(resp_path, "wb") as resp:
        widen_pipe(req)
        tune_allocator()
        status, payload = hello()
        send(resp, status, payload)
        if status != 0:
            return 1
        reader = Reader(req)
        while True:
            try:
                name, args = read_request(reader)
            except EOFError:
                return 0
            status, payload = call(name, args)
            send(resp, status, payload)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: pydpowl_worker.py REQUEST_FIFO RESPONSE_FIFO\n")
        return 2
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # pydpowl_rcalls, even under -P
    try:
        return serve(argv[1], argv[2])
    except BrokenPipeError:  # R went away while we were answering
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
