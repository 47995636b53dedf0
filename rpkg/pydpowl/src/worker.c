/* The Python worker's answers, read without ever being out of R's reach; and signals to the worker.
 *
 * Base R can read a FIFO only through a fifo() connection: blocking, where an
 * interrupt cannot end the read (it is restarted), or non-blocking, where
 * readBin() fails with an error when nothing is there, sometimes after it has
 * consumed data (it may read again once a read has filled what it asked).
 * Here R reads the response FIFO through a descriptor of its own,
 * non-blocking: select() waits until the FIFO holds data or its writer has
 * gone (end of file), and an interrupt ends the wait at once (select is never
 * restarted after a signal; R's interrupt flag is also checked every tenth of
 * a second, in case the signal reached another thread).
 *
 * pydpowl_signal() sends SIGTERM (or probes with signal 0) without loading
 * the tools namespace (tools::pskill), which costs a tenth of a second the
 * first time, at the moment an interrupt should come back at once.
 */
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>

#ifndef _WIN32
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* 1 when `fd` can be read (data, or end of file once a writer has come and gone), 0 at `deadline`. */
static int wait_readable(int fd, double deadline)
{
    for (;;) {
        double left = deadline - now();
        if (left < 0) left = 0;
        double slice = left < 0.1 ? left : 0.1;
        struct timeval tv;
        tv.tv_sec = (time_t) slice;
        tv.tv_usec = (suseconds_t) ((slice - (double) tv.tv_sec) * 1e6);
        fd_set readable;
        FD_ZERO(&readable);
        FD_SET(fd, &readable);
        int r = select(fd + 1, &readable, NULL, NULL, &tv);
        if (r > 0) return 1;
        if (r < 0 && errno != EINTR) error("waiting for the Python worker failed: %s", strerror(errno));
        R_CheckUserInterrupt();
        if (left <= 0) return 0;
    }
}
#endif

/* A descriptor reading the FIFO at `path` (non-blocking, closed on exec); opening does not wait for a writer. */
SEXP pydpowl_fifo_open(SEXP path)
{
#ifdef _WIN32
    error("FIFOs need a Unix-like system");
    return R_NilValue;
#else
    if (!isString(path) || LENGTH(path) != 1) error("path must be one string");
    const char *p = translateChar(STRING_ELT(path, 0));
    int fd = open(p, O_RDONLY | O_NONBLOCK);
    if (fd < 0) error("cannot open the FIFO %s: %s", p, strerror(errno));
    if (fd >= FD_SETSIZE) {
        close(fd);
        error("too many open files to read the FIFO %s (descriptor %d, at most %d)", p, fd, FD_SETSIZE - 1);
    }
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    return ScalarInteger(fd);
#endif
}

SEXP pydpowl_fifo_close(SEXP fd)
{
#ifndef _WIN32
    int f = asInteger(fd);
    if (f != NA_INTEGER && f >= 0) close(f);
#endif
    return R_NilValue;
}

/* Exactly `n` bytes from the FIFO, waiting for them as long as it takes: a raw vector of length n; a shorter
 * one when the writer has gone first (end of file); NULL when `seconds` have passed first. An interrupt
 * ends the wait at once (what was read is lost with the exchange). */
SEXP pydpowl_fifo_read(SEXP fd, SEXP n, SEXP seconds)
{
#ifdef _WIN32
    return R_NilValue;
#else
    int f = asInteger(fd);
    double want = asReal(n), limit = asReal(seconds);
    if (f == NA_INTEGER || f < 0 || f >= FD_SETSIZE) error("not a descriptor to read");
    if (ISNAN(want) || want < 0 || want > R_XLEN_T_MAX) error("cannot read %g bytes", want);
    if (ISNAN(limit) || limit < 0) limit = 0;
    double deadline = now() + limit;
    R_xlen_t total = (R_xlen_t) want, got = 0;
    SEXP out = PROTECT(allocVector(RAWSXP, total));
    while (got < total) {
        /* wait first: before its writer has opened the FIFO a read finds end of file, select() waits */
        if (!wait_readable(f, deadline)) {
            UNPROTECT(1);
            return R_NilValue;
        }
        ssize_t r = read(f, RAW(out) + got, (size_t) (total - got));
        if (r > 0) {
            got += r;
        } else if (r == 0) {
            break;  /* end of file: the writer has gone */
        } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            error("reading the Python worker's answer failed: %s", strerror(errno));
        }
    }
    if (got < total) out = xlengthgets(out, got);
    UNPROTECT(1);
    return out;
#endif
}

/* Send SIGTERM to `pid` (terminate = TRUE) or only probe it (signal 0): TRUE when the process exists. */
SEXP pydpowl_signal(SEXP pid, SEXP terminate)
{
#ifdef _WIN32
    return ScalarLogical(FALSE);
#else
    int p = asInteger(pid);
    if (p == NA_INTEGER || p <= 0) return ScalarLogical(FALSE);
    int r = kill((pid_t) p, asLogical(terminate) == TRUE ? SIGTERM : 0);
    return ScalarLogical(r == 0 || errno == EPERM);
#endif
}

static const R_CallMethodDef calls[] = {
    {"pydpowl_fifo_open", (DL_FUNC) &pydpowl_fifo_open, 1},
    {"pydpowl_fifo_close", (DL_FUNC) &pydpowl_fifo_close, 1},
    {"pydpowl_fifo_read", (DL_FUNC) &pydpowl_fifo_read, 3},
    {"pydpowl_signal", (DL_FUNC) &pydpowl_signal, 2},
    {NULL, NULL, 0}
};

void R_init_pydpowl(DllInfo *dll)
{
    R_registerRoutines(dll, NULL, calls, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
}
