"""The engine: what a private release is made of.

Data flow one way: public-bound preprocessing (:mod:`.preprocessing`) ->
the weighted, l2-regularised objective (:mod:`.problem`, losses in
:mod:`.losses`) -> the certified solver (:mod:`.solver`) -> noise
(:mod:`.mechanisms`). Nothing here reads bounds off the data or keeps a copy
of it.
"""
