# Where a release's noise comes from.
#
# By default ("system") the engine draws every random number of a release (the noise, the random features, the
# tuning's choice) from operating-system entropy (numpy's default_rng(), seeded with 128 bits from the OS), and
# R's .Random.seed is neither read nor changed. R's own generator is no source for private noise: its whole state
# is a function of one 32-bit seed (set.seed(s), or R's time-and-pid seed), so whoever can run the 2^32 seeds can
# regenerate the noise and subtract it.
#
# Replay ("R", on request: options(pydpowl.rng = "R") for the session, or rng = "R" on a constructor, dpowl() or
# dpowl_analysis()): the noise is drawn in Python by pydpowl.RRandom positioned at R's own .Random.seed, with
# DPpack's calls (rgamma(1, d, rate) then rnorm(d)), and the advanced state is written back to
# .GlobalEnv$.Random.seed. So set.seed(s) before a fit gives DPpack's noise bit for bit and leaves R's generator
# where DPpack leaves it, for validation against DPpack and the reproduction of published runs; the engine then
# warns (class pydpowl_r_stream, a pydpowl_privacy_leak) that the release is not private.

.RNG_CHOICES <- c("R", "system")

# "R" or "system": the call's rng (NULL: the session's option, "system" when unset).
rng_choice <- function(rng, call) {
  from_option <- is.null(rng)
  if (from_option) rng <- getOption("pydpowl.rng", "system")
  if (!is.character(rng) || length(rng) != 1L || is.na(rng) || !(rng %in% .RNG_CHOICES)) {
    arg_error(sprintf(paste0(
      "%s must be \"R\" (replay R's stream, not private) or \"system\" (operating-system entropy, the default), ",
      "got %s."), if (from_option) "options(pydpowl.rng)" else "rng", fmt_value(rng)), call)
  }
  rng
}

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
        "rng = \"R\" replays R's stream with pydpowl.RRandom, which reproduces R's default generator only ",
        "(Mersenne-Twister with Inversion normals); RNGkind() is c(\"", paste(kinds[1:2], collapse = "\", \""),
        "\"). Use set.seed(s, kind = \"default\", normal.kind = \"default\") or RNGkind(\"default\", ",
        "\"default\") before fitting, or leave rng unset for operating-system entropy."
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

# One engine call whose random draws come from `rng`: with "R", R's .Random.seed goes in as args[[state_arg]] and
# the advanced state (the result's element state_arg) is written back; with "system" nothing of R's generator is
# read or written.
engine_with_rng <- function(fun, args, rng, call, state_arg = "r_state") {
  if (identical(rng, "system")) return(engine(fun, args, call))
  state <- r_rng_state(call)
  args[[state_arg]] <- state
  res <- engine(fun, args, call)
  if (!is.null(res[[state_arg]])) r_rng_restore(res[[state_arg]], state)
  res
}
