"""Argument types and option groups shared by the study commands."""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple


#: a value that argparse would take for an option: a negative number followed by more (``-1:89``, ``-1,2``)
_NEGATIVE_VALUE = re.compile(r"^-(\d|\.\d|inf)", re.IGNORECASE)


def attach_negative_values(argv: Sequence[str]) -> List[str]:
    """``--bounds -1:89`` as ``--bounds=-1:89``: an option's value that starts with a minus sign.

    argparse takes a token that starts with ``-`` for an option unless it is a
    plain negative number, so ranges such as ``-1:89`` (``--bounds``,
    ``--benefit-bounds``) needed the ``--option=value`` form; such a token right
    after a long option is attached to it.
    """
    out: List[str] = []
    for tok in argv:
        if (out and out[-1].startswith("--") and "=" not in out[-1] and _NEGATIVE_VALUE.match(tok)
                and not _is_number(tok)):
            out[-1] = f"{out[-1]}={tok}"
        else:
            out.append(tok)
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def float_list(text: str) -> List[float]:
    """``"0.1,1,inf"`` -> [0.1, 1.0, inf]."""
    out = []
    for t in str(text).split(","):
        t = t.strip()
        if not t:
            continue
        if t.lower() in ("inf", "infinity"):
            out.append(math.inf)
            continue
        try:
            out.append(float(t))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list of numbers, got {text!r}") from None
    if not out:
        raise argparse.ArgumentTypeError(f"expected at least one number, got {text!r}")
    return out


def int_list(text: str) -> List[int]:
    """``"200,500"`` -> [200, 500]."""
    out = []
    for t in str(text).split(","):
        t = t.strip()
        if not t:
            continue
        try:
            out.append(int(t))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list of whole numbers, got {text!r}") \
                from None
    if not out:
        raise argparse.ArgumentTypeError(f"expected at least one whole number, got {text!r}")
    return out


def name_list(text: str) -> List[str]:
    """``"age,male"`` -> ["age", "male"]."""
    out = [t.strip() for t in str(text).split(",") if t.strip()]
    if not out:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of column names, got {text!r}")
    return out


def add_data_options(parser: argparse.ArgumentParser, *, required: bool, data_help: str) -> None:
    """``--data CSV --treatment --benefit --features --bounds --weights-upper-bound --propensity ...``."""
    g = parser.add_argument_group("data (a CSV and its public settings)")
    g.add_argument("--data", required=required, metavar="CSV", help=data_help)
    g.add_argument("--treatment", metavar="COL", help="treatment column (two values)")
    g.add_argument("--treated", metavar="VALUE",
                   help="value of the treatment column coded +1 (default: -1/1 or 0/1 columns as is)")
    g.add_argument("--benefit", metavar="COL", help="benefit column (larger is better)")
    g.add_argument("--features", type=name_list, metavar="COLS", help="comma-separated numeric feature columns")
    g.add_argument("--bounds", metavar="SPEC",
                   help="public feature bounds: name=lo:hi,... (matched by name), or lo:hi,... in the order of "
                        "--features; negative values are fine (--bounds -1:89,0:1)")
    g.add_argument("--weights-upper-bound", type=float, metavar="W",
                   help="public bound W on benefit / propensity (weights above are clipped)")
    g.add_argument("--propensity", default=None, metavar="P",
                   help="P(treatment = +1): a number (randomised study) or column:NAME (default: 0.5); with three or "
                        "more arms the design's probabilities, arm=P,arm=P,... naming every arm (default: 1/K each)")
    g.add_argument("--weight-sensitivity", type=_weight_sensitivity, metavar="C",
                   help="with --propensity column:NAME, the bound C on the total change of the other weights when "
                        "one subject is replaced: 0 for known probabilities (or estimates from independent data), "
                        "a number, or 'trivial' (C = n W); required for a column, never assumed")
    g.add_argument("--benefit-lower-bound", type=float, metavar="L",
                   help="public lower bound of the benefit: benefits are shifted by it (default: none, B >= 0 needed)")


def add_mechanism_options(group) -> None:
    """``--mechanism --residual --huber-h``: how DP-OWL releases its rule (DPOWL's ``"auto"`` by default)."""
    group.add_argument("--mechanism", choices=("auto", "output", "objective"), default="auto",
                       help="output: the paper's Algorithm 1; objective: weighted objective perturbation (known or "
                            "released propensities); auto (default): objective when the weights depend on their own "
                            "record only (docs/utility.md)")
    group.add_argument("--residual", choices=("auto", "yes", "no"), default="auto",
                       help="residual weights |B - m| / P(A | x) with a DP baseline m on 10%% of the rule's budget "
                            "(default auto: when the weights depend on their own record only and the benefit's "
                            "public range is known)")
    group.add_argument("--huber-h", type=float, default=None, metavar="H",
                       help="Huber smoothing h (default: 0.5 for output, 1 for objective perturbation)")


def mechanism_settings(args: argparse.Namespace) -> dict:
    """DPOWL's ``mechanism``, ``residual`` and ``huber_h`` from :func:`add_mechanism_options`' options."""
    return {"mechanism": args.mechanism, "residual": {"auto": "auto", "yes": True, "no": False}[args.residual],
            "huber_h": "auto" if args.huber_h is None else args.huber_h}


def _weight_sensitivity(text: str):
    if text == "trivial":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0 or 'trivial', got {text!r}") from None


def add_budget_options(parser: argparse.ArgumentParser) -> None:
    """``--budget-file FILE --total-epsilon E``: keep a tally of the budget spent on the data file."""
    g = parser.add_argument_group("privacy budget across releases")
    g.add_argument("--budget-file", metavar="FILE",
                   help="JSON tally of the (epsilon, delta) spent on this data file (basic composition; the file "
                        "names the data by a keyed fingerprint); a release that would exceed the total is refused "
                        "before the data are read")
    g.add_argument("--total-epsilon", type=float, metavar="E",
                   help="total budget of the data file, fixed when --budget-file is created")


def add_key_option(parser: argparse.ArgumentParser, *, writes: bool) -> None:
    """``--key-file FILE``: the secret key that signs (``writes``) or verifies a model file."""
    what = ("sign the model file (HMAC-SHA256) with the secret key in FILE, so that 'pydpowl predict --key-file' "
            "detects any change; without it the file has only a checksum, which detects accidental edits, not "
            "forgery" if writes else
            "verify the model's signature with the secret key in FILE: an unsigned file, or one changed since it "
            "was signed, is refused; without it only the checksum (accidental edits) is checked")
    parser.add_argument("--key-file", type=Path, metavar="FILE",
                        help=what + " (at least 16 bytes; surrounding whitespace is ignored; keep it secret)")


def read_key(args: argparse.Namespace) -> Optional[bytes]:
    """The key of ``--key-file`` (surrounding whitespace removed, at least 16 bytes), or None."""
    from ..model_io import check_key

    path = getattr(args, "key_file", None)
    if path is None:
        return None
    if not path.is_file():
        raise ValueError(f"--key-file {path}: no such file.")
    try:
        return check_key(path.read_bytes().strip())
    except ValueError as exc:
        raise ValueError(f"--key-file {path}: {exc}") from None


def open_budget(args: argparse.Namespace):
    """The BudgetAccountant of ``--budget-file`` (created with ``--total-epsilon``), or None."""
    from pathlib import Path

    from ..privacy.accountant import BudgetAccountant, dataset_fingerprint

    if getattr(args, "budget_file", None) is None:
        if getattr(args, "total_epsilon", None) is not None:
            raise ValueError("--total-epsilon needs --budget-file (where the tally is kept).")
        return None
    path = Path(args.budget_file)
    if getattr(args, "engine", "memory") == "dask":  # a glob of CSV files
        from .dask_engine import files_fingerprint

        fingerprint = files_fingerprint(args.data)
    else:
        fingerprint = dataset_fingerprint(args.data)
    if path.exists():  # one file: an older unkeyed fingerprint of the same bytes is re-keyed
        acc = (BudgetAccountant.load(path, dataset=fingerprint) if getattr(args, "engine", "memory") == "dask"
               else BudgetAccountant.load(path, data_file=args.data))
        if args.total_epsilon is not None and args.total_epsilon != acc.total_epsilon:
            raise ValueError(f"--total-epsilon {args.total_epsilon:g} differs from the total "
                             f"{acc.total_epsilon:g} fixed in {path}; a budget cannot be raised.")
        return acc
    if args.total_epsilon is None:
        raise ValueError(f"--budget-file {path} does not exist yet: give --total-epsilon to create it.")
    return BudgetAccountant(args.total_epsilon, dataset=fingerprint)


def data_from_args(args: argparse.Namespace, *, what: str = "--data", with_labels: bool = False):
    """OWLData from the data options (and the arm names coded +1 / -1 with ``with_labels``; with three or more
    arms, their labels, sorted)."""
    from ..datasets.tabular import owl_data_from_frame, read_table, treatment_codes, treatment_levels

    missing = [opt for opt, val in (("--treatment", args.treatment), ("--benefit", args.benefit),
                                    ("--features", args.features), ("--bounds", args.bounds),
                                    ("--weights-upper-bound", args.weights_upper_bound)) if val is None]
    if missing:
        raise ValueError(f"{what} needs {', '.join(missing)} (public settings are never read off the data).")
    frame = read_table(args.data)
    data = owl_data_from_frame(
        frame, treatment=args.treatment, benefit=args.benefit, features=args.features, bounds=args.bounds,
        weights_upper_bound=args.weights_upper_bound, propensity=args.propensity, treated=args.treated,
        benefit_lower_bound=args.benefit_lower_bound, weight_sensitivity=getattr(args, "weight_sensitivity", None),
        source=str(args.data),
    )
    if not with_labels:
        return data
    arms = treatment_levels(frame[args.treatment])
    if len(arms) >= 3:  # K arms: the labels are the arms' names
        return data, tuple(arms)
    _, plus, minus = treatment_codes(frame[args.treatment], args.treated)
    return data, (plus, minus)


def arm_labels(text: Optional[str], coded: Tuple[str, str]) -> Tuple[str, str]:
    """The names of the arms coded +1 and -1: ``--labels PLUS,MINUS`` if given, else ``coded``."""
    if not text:
        return coded
    parts = [t.strip() for t in text.split(",")]
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"--labels must be two names PLUS,MINUS, got {text!r}.")
    return parts[0], parts[1]


def show_progress(args: argparse.Namespace) -> bool:
    """Progress bars unless ``--no-progress``."""
    return not getattr(args, "no_progress", False)


def output_file(path: Path, option: str = "--out") -> Path:
    """The file an option names, its folder created when missing, with a message saying so.

    Every command writes its outputs where it is told and makes the folders it
    needs; making one is said, so that a mistyped path is noticed. A path
    through an existing file is refused by name.
    """
    folder = path.parent
    existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        raise ValueError(f"{option} {path}: {existing} is not a directory.")
    if not folder.exists():
        folder.mkdir(parents=True, exist_ok=True)
        say(f"created directory {folder} (for {option})")
    return path


def positive_option(flag: str, value, *, upper=None, upper_open: bool = True) -> float:
    """``value`` of option ``flag`` checked to lie in (0, inf) or (0, upper) / (0, upper]: the message names both."""
    ok = value is not None and math.isfinite(value) and value > 0
    if ok and upper is not None:
        ok = value < upper if upper_open else value <= upper
    if not ok:
        interval = f"(0, {upper:g}{')' if upper_open else ']'}" if upper is not None else "(0, inf)"
        raise ValueError(f"{flag} must be in {interval}, got {flag} {value!r}.")
    return float(value)


def say(text: str = "") -> None:
    """Print to stdout (the CLI's output channel)."""
    print(text, file=sys.stdout)


def say_arm_values(value: Any, *, rule: str, arm: str, note: str = "") -> None:
    """Print a K-arm value release's per-arm lines and its gain (public: every number is a release).

    ``value`` is a :class:`pydpowl.evaluation.private.PrivateArmValue`;
    ``rule`` names what is evaluated ("rule", "regime"), ``arm`` what it is
    compared with ("single arm", "fixed sequence"), ``note`` ends the gain line.
    """
    for name, iv in value.arm_values.items():
        g = value.versus[name]
        say(f"value of everyone on {name}: {iv.estimate:.4f} [{iv.ci_low:.4f}, {iv.ci_high:.4f}]; {rule} minus it: "
            f"{g.estimate:.4f} [{g.ci_low:.4f}, {g.ci_high:.4f}]")
    d = value.difference
    say(f"gain over the best {arm}: {d.estimate:.4f} [{d.ci_low:.4f}, {d.ci_high:.4f}]{note}")
