"""The ``pydpowl`` command line.

Each sub-command lives in its own module of this package and exposes
``add_parser(subparsers)``, which registers the command and sets
``func=run`` on its parser. Errors are reported as one line on stderr with exit
status 2 (``--debug`` shows the traceback).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings
from typing import List, NoReturn, Optional, Sequence

__all__ = ["main", "build_parser"]

# Modules providing sub-commands, in the order ``--help`` lists them.
SUBCOMMAND_MODULES: List[str] = [
    "casestudy",
    "simulate",
    "tune",
    "fit",
    "predict",
    "analyze",
    "policy_eval",
    "utility",
]


class CLIError(Exception):
    """An error the CLI reports as one line (bad arguments, unreadable files)."""


class OneLineArgumentParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (``pydpowl CMD: error: ...``) with exit status 2."""

    def error(self, message: str) -> "NoReturn":  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    """Build the top-level parser with every available sub-command."""
    from .. import __version__

    parser = OneLineArgumentParser(
        prog="pydpowl",
        description=(
            "Differentially private outcome weighted learning (DP-OWL) and weighted "
            "ERM, agreeing with the R package DPpack."
        ),
        epilog="Run 'pydpowl COMMAND --help' for a command's options and examples.",
    )
    parser.add_argument("--version", action="version", version=f"pydpowl {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show the full traceback when a command fails"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineArgumentParser)
    for name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__name__}.{name}":
                continue  # command not part of this build
            raise
        module.add_parser(subparsers)
    return parser


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``pydpowl`` console script; returns the exit status."""
    from ._common import attach_negative_values

    parser = build_parser()
    args = parser.parse_args(attach_negative_values(sys.argv[1:] if argv is None else argv))
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")  # show privacy warnings once each
            warnings.filterwarnings("ignore", category=DeprecationWarning)  # third-party noise
            result = args.func(args)
        return int(result or 0)
    except KeyboardInterrupt:
        print("pydpowl: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # one clear line, not a traceback
        if args.debug:
            raise
        print(f"pydpowl {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
