library(testthat)
library(pydpowl)

test_check("pydpowl")
