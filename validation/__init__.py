"""Validation harness: pydpowl against the R reference DPpack (``python -m validation``).

For each shared case it checks that the non-private solutions match (any gap
explained by DPpack's optimiser stopping early) and that the noise of K private
fits follows the exact law in both engines and the same law across engines,
then writes ``report.md`` with tables and figures. See ``docs/validation.md``.
"""
