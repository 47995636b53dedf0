# R's generator state in and out of the Python engine.
#
# Design: the noise is drawn in Python by pydpowl.RRandom positioned at R's own
# .Random.seed, with DPpack's calls (rgamma(1, d, rate) then rnorm(d)); the
# advanced state is written back to .GlobalEnv$.Random.seed. So set.seed(s)
# before a fit gives DPpack's noise bit for bit and leaves R's generator where
# DPpack leaves it, while the exact minimiser and the noise never leave Python.

# Kind codes: .Random.seed[1] = RNG + 100 * normal + 10000 * sample. RRandom
# reproduces RNG = 3 (Mersenne-Twister) with normal = 4 (Inversion); the sample
# kind does not affect rgamma/rnorm.
.MT_INVERSION <- 403L

r_rng_state <- function(call = sys.call(-1L)) {
  genv <- globalenv()
  if (!exists(".Random.seed", envir = genv, inherits = FALSE)) {
    set.seed(NULL)  # what R does at its first draw: a time-based seed
  }
  seed <- get(".Random.seed", envir = genv, inherits = FALSE)
  if (!is.integer(seed) || length(seed) != 626L || is.na(seed[1L]) || seed[1L] %% 10000L != .MT_INVERSION) {
    kinds <- RNGkind()
    stop(structure(class = c("pydpowl_rng_error", "pydpowl_error", "error", "condition"), list(
      message = paste0(
        "pydpowl draws the noise from R's generator state with pydpowl.RRandom, which reproduces ",
        "R's default generator only (Mersenne-Twister with Inversion normals); RNGkind() is c(\"",
        paste(kinds[1:2], collapse = "\", \""), "\"). Use set.seed(s, kind = \"default\", ",
        "normal.kind = \"default\") or RNGkind(\"default\", \"default\") before fitting."
      ),
      call = call
    )))
  }
  seed
}

r_rng_restore <- function(new_state, old_state) {
  new_state <- as.integer(new_state)
  if (length(new_state) != 626L) stop("internal error: the engine returned a malformed R generator state.")
  new_state[1L] <- old_state[1L]  # keep the user's sample.kind digit
  assign(".Random.seed", new_state, envir = globalenv())
  invisible(NULL)
}
