"""Privacy bookkeeping around releases: the budget accountant, private selection, the private value."""
