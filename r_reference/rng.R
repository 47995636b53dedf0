# R's own random streams, for bitwise comparison with pydpowl.rrandom. Called
# from r_reference/rng.py with named arguments.

# Seed R (set.seed(seed) with the default kinds) or load a .Random.seed
# (`state`), evaluate the R expressions `exprs` in order in one environment on
# that one stream, and return their values (as doubles, concatenated, with
# their lengths) and the final .Random.seed.
r_streams <- function(exprs = character(), seed = NULL, state = NULL) {
  if (is.null(state)) {
    set.seed(seed, kind = "Mersenne-Twister", normal.kind = "Inversion", sample.kind = "Rejection")
  } else {
    RNGkind("Mersenne-Twister", "Inversion", "Rejection")
    assign(".Random.seed", as.integer(state), envir = globalenv())
  }
  env <- new.env(parent = globalenv())
  out <- lapply(exprs, function(e) as.numeric(eval(parse(text = e), envir = env)))
  list(values = as.numeric(unlist(out)), lengths = as.integer(lengths(out)),
       random_seed = get(".Random.seed", envir = globalenv()))
}
