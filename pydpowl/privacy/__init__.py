"""Privacy bookkeeping around releases: the budget accountant."""
