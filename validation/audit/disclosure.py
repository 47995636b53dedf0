"""What a user sees by default must not depend on the private data except through releases.

Every channel counts: stdout, stderr (warnings included), every file a command
writes (report.md, ledger.json, model.json, value.json, the PNGs, tuning.txt),
the warnings a fit raises and ``str(summary())``. The audit runs a command on
two neighbouring datasets (one record replaced) that the *mechanism* cannot
tell apart, with the same seed, so that every release is bit-identical, while a
count computed from the data differs:

* ``arm``: record 0 has the benefit's public lower bound, so its OWL weight is
  0 (it adds nothing to any fit, score or value sum), and its arm is flipped:
  the arm counts differ;
* ``benefit``: record 0's benefit is at its upper bound in D and above it in
  D' (clipped by design to the same value): the count of clipped benefits
  differs;
* ``feature``: record 0's first feature is at its upper bound in D and above
  it in D' (clipped to the same value): the count of clipped features differs;
* ``weight``: record 0's weight ``B / P(A | x)`` equals W in D and exceeds it
  in D' (clipped to W): the count of clipped weights differs.

The regime analysis (``pydpowl analyze --stages 2``, ``"(2 stages)"`` in the
name) reads the same table as two stages: stage 1 treatment ``arm`` with
history ``x1, x2``, stage 2 treatment ``arm2`` (a fixed alternation, the same
in D and D') with history ``x1..x4``, rewards ``R1`` (0) and ``B``; it is
audited on the ``benefit`` and ``feature`` pairs (residual weights give a
record at the lower bound a positive weight, so the ``arm`` pair is not
invisible to it).

Then everything the user sees must be byte for byte the same (after removing
the wall time and the folder names, which are not data). A positive control
runs the same pair with ``--diagnostics`` (the opt-in that prints the
non-private counts): the outputs must differ, which shows that the comparison
sees a count when one is printed.
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pandas as pd

__all__ = ["Seen", "DisclosureRow", "NEIGHBOURS", "cli_seen", "api_seen", "neighbour_frames", "audited_commands",
           "seen_pair", "disclosure_rows", "api_rows", "first_difference", "disclosure_table"]

#: the neighbouring pairs (see the module docstring)
NEIGHBOURS = ("arm", "benefit", "feature", "weight")

#: public settings of the audited data: 4 features in [0, 1], benefit in [0, 10], P(+1) = 0.5
FEATURES = ("x1", "x2", "x3", "x4")
BENEFIT_BOUNDS = (0.0, 10.0)
#: the arms of the commands audited with three arms (``"(3 arms)"`` in the name)
THREE_ARMS = ("new", "old", "mid")
#: W of ``fit`` and ``tune``: record 0 of the "weight" pair has B / P = 2 * 6 = 12 > W in D'
WEIGHT_BOUND = 10.0

_TIME = re.compile(r"\bin \d+(\.\d+)? s\b")


@dataclass(frozen=True)
class Seen:
    """Everything one run shows its user: the streams, the warnings and the files written."""

    stdout: str
    stderr: str
    warnings: Tuple[str, ...]
    files: Dict[str, bytes] = field(default_factory=dict)
    status: int = 0

    def channels(self) -> Dict[str, bytes]:
        """Channel name -> content, comparable across runs."""
        out = {"stdout": self.stdout.encode(), "stderr": self.stderr.encode(),
               "warnings": "\n".join(self.warnings).encode(), "status": str(self.status).encode()}
        out.update({f"file {name}": content for name, content in sorted(self.files.items())})
        return out


def _clean(text: str, root: Path) -> str:
    """Remove what is not data: the folder of the run and the wall time."""
    return _TIME.sub("in # s", text.replace(str(root), "<DIR>"))


def cli_seen(argv: Sequence[str], root: Path) -> Seen:
    """Run ``pydpowl ARGV`` in this process inside ``root``; capture stdout, stderr, warnings and files.

    Paths in ``argv`` are relative to ``root`` (``{root}`` is substituted).
    """
    from pydpowl.cli import main

    root = Path(root)
    args = [a.replace("{root}", str(root)) for a in argv]
    before = {p for p in root.rglob("*") if p.is_file()}
    out, err = io.StringIO(), io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        warnings.simplefilter("always")
        status = main(args)
    files = {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
             if p.is_file() and p not in before}
    files = {k: (_clean(v.decode(), root).encode() if not k.endswith(".png") else v) for k, v in files.items()}
    return Seen(stdout=_clean(out.getvalue(), root), stderr=_clean(err.getvalue(), root),
                warnings=tuple(_clean(f"{w.category.__name__}: {w.message}", root) for w in caught),
                files=files, status=status)


def api_seen(fit: Callable[[], Any]) -> Seen:
    """Call ``fit()`` (returns a fitted estimator); capture its warnings, stdout and ``str(summary())``."""
    out = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
        warnings.simplefilter("always")
        model = fit()
    return Seen(stdout=out.getvalue() + str(model.summary()), stderr="",
                warnings=tuple(f"{w.category.__name__}: {w.message}" for w in caught))


def neighbour_frames(kind: str, *, n: int = 240, seed: int = 5, arms: Sequence[str] = ("new", "old")
                     ) -> Tuple[pd.DataFrame, pd.DataFrame]:
    """Two CSV tables that differ in record 0 only, invisible to the mechanism (see the module docstring).

    ``arms``: the treatment's labels; with three or more, each is drawn with probability 1/K and the
    ``arm`` pair moves record 0 from the first arm to the last.
    """
    if kind not in NEIGHBOURS:
        raise ValueError(f"kind must be one of {list(NEIGHBOURS)}, got {kind!r}.")
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(n, len(FEATURES)))
    arm = (np.where(rng.uniform(size=n) < 0.5, arms[0], arms[1]) if len(arms) == 2
           else np.asarray(arms)[rng.integers(0, len(arms), n)])
    score = X[:, 0] - X[:, 1] + np.where(arm == "new", 0.5, -0.5) * (X[:, 2] - 0.5)
    B = np.clip(4.0 + 2.0 * score + rng.normal(0.0, 1.0, size=n), 0.05, 4.9)  # inside [0, 10], B / 0.5 < W
    frame = pd.DataFrame(X, columns=list(FEATURES))
    frame["arm"], frame["B"] = arm, B
    D, D1 = frame.copy(), frame.copy()
    if kind == "arm":  # weight 0: the record adds nothing to any fit, score or value sum
        D.loc[0, "B"] = D1.loc[0, "B"] = BENEFIT_BOUNDS[0]
        D.loc[0, "arm"], D1.loc[0, "arm"] = arms[0], arms[-1]
    elif kind == "benefit":  # clipped to the upper bound in D'
        D.loc[0, "B"], D1.loc[0, "B"] = BENEFIT_BOUNDS[1], BENEFIT_BOUNDS[1] + 3.0
    elif kind == "feature":  # clipped to the feature's upper bound in D'
        D.loc[0, "x1"], D1.loc[0, "x1"] = 1.0, 1.7
    else:  # B / P(A) = W in D, 12 > W in D' (clipped to W)
        D.loc[0, "B"], D1.loc[0, "B"] = WEIGHT_BOUND * 0.5, 6.0
    return D, D1


def audited_commands(diagnostics: bool = False) -> List[Tuple[str, List[str], Tuple[str, ...]]]:
    """``(name, argv, neighbours)`` of every audited command (``{root}`` is the run's folder)."""
    data = ["--data", "{root}/trial.csv", "--treatment", "arm", "--treated", "new", "--benefit", "B",
            "--features", ",".join(FEATURES), "--bounds", ",".join(f"{f}=0:1" for f in FEATURES)]
    extra = ["--diagnostics"] if diagnostics else []
    lo, hi = BENEFIT_BOUNDS
    arms3 = [a for a in data if a not in ("--treated", "new")]  # three arms: no arm is coded +1
    analyze3 = [f"--benefit-bounds={lo:g}:{hi:g}", "--weights-upper-bound", "40", "--propensity",
                "mid=0.3333333333,new=0.3333333334,old=0.3333333333", "--total-epsilon", "2", "--seed", "11",
                "--out", "{root}/out"]
    return [
        ("pydpowl fit (3 arms)", ["fit", *arms3, "--weights-upper-bound", f"{WEIGHT_BOUND:g}", "--epsilon", "1",
                                  "--gamma", "50", "--seed", "11", "--out", "{root}/model.json", *extra],
         ("arm", "feature")),
        # the default (objective perturbation with residual weights): a benefit at the lower bound has a residual
        # weight, so the "arm" pair is not invisible to it; the paper's mechanism (OWL weights) keeps that pair
        ("pydpowl analyze (3 arms)", ["analyze", *arms3, *analyze3, *extra], ("benefit", "feature")),
        ("pydpowl analyze --mechanism output (3 arms)", ["analyze", *arms3, *analyze3, "--mechanism", "output",
                                                         "--residual", "no", *extra], ("arm",)),
        ("pydpowl analyze", ["analyze", *data, f"--benefit-bounds={lo:g}:{hi:g}", "--weights-upper-bound", "40",
                             "--propensity", "0.5", "--total-epsilon", "2", "--gammas", "20,200", "--seed", "11",
                             "--out", "{root}/out", *extra], ("arm", "benefit", "feature")),
        ("pydpowl analyze (2 stages)", ["analyze", "--data", "{root}/trial.csv", "--stages", "2", "--treatment",
                                        "arm,arm2", "--reward", "R1,B", f"--reward-bounds=0:1,{lo:g}:{hi:g}",
                                        "--features-stage1", "x1,x2", "--features-stage2", ",".join(FEATURES),
                                        "--bounds", ",".join(f"{f}=0:1" for f in FEATURES), "--propensity", "0.5",
                                        "--total-epsilon", "2", "--gamma", "50", "--seed", "11",
                                        "--out", "{root}/out", *extra], ("benefit", "feature")),
        ("pydpowl fit", ["fit", *data, "--weights-upper-bound", f"{WEIGHT_BOUND:g}", "--epsilon", "1",
                         "--gamma", "50", "--seed", "11", "--out", "{root}/model.json", *extra],
         ("arm", "feature", "weight")),
        ("pydpowl tune --method split-data", ["tune", "--method", "split-data", *data, "--weights-upper-bound",
                                              f"{WEIGHT_BOUND:g}", "--epsilon", "1", "--gammas", "20,200",
                                              "--seed", "11", "--no-progress", "--out", "{root}/tune", *extra],
         ("arm", "weight")),
    ]


@dataclass(frozen=True)
class DisclosureRow:
    """One command on one neighbouring pair: does anything the user sees differ?

    ``control`` rows run with ``--diagnostics`` and must differ (the check can fail).
    """

    command: str
    neighbour: str
    control: bool
    differs: Tuple[str, ...]
    detail: str = ""

    @property
    def passed(self) -> bool:
        return bool(self.differs) if self.control else not self.differs

    def as_dict(self) -> Dict[str, object]:
        return {"command": self.command, "neighbour": self.neighbour, "control": self.control,
                "differs": list(self.differs), "detail": self.detail, "passed": self.passed}


def first_difference(a: Seen, b: Seen) -> Tuple[Tuple[str, ...], str]:
    """The channels that differ, and the first differing line of the first of them."""
    ca, cb = a.channels(), b.channels()
    differs = tuple(k for k in sorted(set(ca) | set(cb)) if ca.get(k) != cb.get(k))
    if not differs:
        return (), ""
    k = differs[0]
    la = (ca.get(k) or b"").decode(errors="replace").splitlines()
    lb = (cb.get(k) or b"").decode(errors="replace").splitlines()
    for x, y in zip(la + [""] * len(lb), lb + [""] * len(la)):
        if x != y:
            return differs, f"{k}: {x[:120]!r} vs {y[:120]!r}"
    return differs, k


def seen_pair(command: str, neighbour: str, workdir: Path, *, diagnostics: bool = False) -> Tuple[Seen, Seen]:
    """What ``command`` (a name of :func:`audited_commands`) shows on D and on D' (``neighbour``)."""
    argv = next(a for name, a, _ in audited_commands(diagnostics) if name == command)
    seen = []
    arms = THREE_ARMS if "(3 arms)" in command else ("new", "old")
    for label, frame in zip(("D", "D1"), neighbour_frames(neighbour, arms=arms)):
        tag = command.split()[1] + ("-3arms" if len(arms) > 2 else "") + ("-stages" if "stages" in command else "")
        root = Path(workdir) / f"{tag}-{neighbour}-{int(diagnostics)}-{label}"
        root.mkdir(parents=True, exist_ok=True)
        if "(2 stages)" in command:  # the second stage's treatment and the first stage's reward: not data-dependent
            frame = frame.assign(arm2=np.where(np.arange(len(frame)) % 2 == 0, "a", "b"), R1=0.0)
        frame.to_csv(root / "trial.csv", index=False)
        seen.append(cli_seen(argv, root))
    return seen[0], seen[1]


def disclosure_rows(workdir: Path, *, commands: Optional[Sequence[str]] = None,
                    controls: bool = True) -> List[DisclosureRow]:
    """Run every audited command on every neighbouring pair (and one ``--diagnostics`` control per command)."""
    rows: List[DisclosureRow] = []
    for diagnostics in ((False, True) if controls else (False,)):
        for name, _, kinds in audited_commands(diagnostics):
            if commands is not None and name not in commands:
                continue
            for kind in kinds[:1] if diagnostics else kinds:
                differs, detail = first_difference(*seen_pair(name, kind, workdir, diagnostics=diagnostics))
                rows.append(DisclosureRow(name + (" --diagnostics" if diagnostics else ""), kind, diagnostics,
                                          differs, detail))
    return rows


def api_rows() -> List[DisclosureRow]:
    """The Python API: ``DPOWL.fit`` (its warnings) and ``str(summary())`` on the ``weight`` and ``feature`` pairs."""
    from pydpowl import DPOWL

    rows = []
    for kind in ("weight", "feature"):
        seen = []
        for frame in neighbour_frames(kind):
            A = np.where(frame["arm"] == "new", 1.0, -1.0)
            seen.append(api_seen(lambda: DPOWL(  # noqa: B023 - called at once
                epsilon=1.0, gamma=50.0, weights_upper_bound=WEIGHT_BOUND,
                feature_bounds=(np.zeros(len(FEATURES)), np.ones(len(FEATURES))), weight_sensitivity=0.0,
                random_state=11).fit(frame[list(FEATURES)], A, frame["B"].to_numpy(), 0.5)))
        differs, detail = first_difference(*seen)
        rows.append(DisclosureRow("DPOWL.fit + summary()", kind, False, differs, detail))
    return rows


def disclosure_table(rows: Sequence[DisclosureRow]) -> str:
    head = ("| command | neighbour | expected | channels that differ | verdict | first difference |\n"
            "|---|---|---|---|---|---|\n")
    return head + "\n".join(
        f"| {r.command} | {r.neighbour} | {'differ (control)' if r.control else 'identical'} | "
        f"{', '.join(r.differs) or '-'} | {'PASS' if r.passed else 'FAIL'} | {r.detail.replace('|', '/')} |"
        for r in rows)
