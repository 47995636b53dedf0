"""Everything the R front end calls: the engine as functions of plain arrays and R's conventions.

* :mod:`pydpowl.interop.dppack`: DPpack's classes (``svmDP``,
  ``LogisticRegressionDP``, ``LinearRegressionDP``, the tuning functions) as
  functions of plain arrays, R's argument names and R's ``.Random.seed``;
* :mod:`pydpowl.interop.analysis`: :func:`~pydpowl.interop.analysis.analyze_arrays`,
  the private analysis with plain values in and out (``dpowl_analysis()``);
* :mod:`pydpowl.interop.noise`: the expected noise of a release from public
  quantities (``dpowl()``'s noise-dominated warning and ``summary()``).

The R package's worker (``rpkg/pydpowl/inst/python/pydpowl_rcalls.py``)
translates R's calls to these functions; nothing here imports rpy2 (that is
``r_reference``, the other direction: Python calling R).
"""
