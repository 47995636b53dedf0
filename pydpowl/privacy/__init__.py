"""Privacy bookkeeping around releases: the budget accountant and private selection (the private value of a
rule is :mod:`pydpowl.evaluation.private`)."""
