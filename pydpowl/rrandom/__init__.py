"""R-compatible random streams: R's ``set.seed`` + default generators, bit for bit.

:class:`RRandom` reproduces R (>= 3.6.0) with the default kinds
(Mersenne-Twister, Inversion, Rejection): ``runif``, ``rnorm``, ``rexp``,
``rgamma``, ``sample``/``sample.int`` and ``.Random.seed``. It exists so that a
run of the R reference implementation can be replayed exactly from Python.
Seeded streams are for reproduction and tests, never for production
differentially private releases.
"""

from ._generator import RRandom

__all__ = ["RRandom"]
