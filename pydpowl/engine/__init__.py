"""The engine: what a private release is made of.

Data flow one way: public-bound preprocessing (:mod:`.preprocessing`) ->
the weighted, l2-regularised objective (:mod:`.problem`, losses in
:mod:`.losses`) -> the certified solver (:mod:`.solver`) -> noise
(:mod:`.mechanisms`). The release path never reads bounds off the data and
keeps no copy of it; the one helper that computes bounds from data,
:func:`.preprocessing.bounds_from_data`, is for exploration and always emits
:class:`~pydpowl.exceptions.PrivacyLeakWarning` (bounds read off private data
void the guarantee).
"""
