"""Every ```python and ```r block of README.md and docs/*.md runs as written (issue 22.4).

The blocks of one file run in order in one fresh process (Python, or Rscript
for R), sharing their variables as a reader who runs them one after the other
does; each block runs in a fresh temporary directory, under a time limit.
A block in the interactive form (``>>>`` lines for Python, ``>`` for R) runs
its prompted lines; a Python one is a doctest, so its shown output is checked.

A block that cannot run as written (a deployment, a file that is not shipped)
says so where readers see it: the line right before its fence is
``<!-- not-run: the reason -->``. Such markers must stay rare, each with a
reason. R blocks need R and the installed R package ``pydpowl``: skipped when
they are missing, an error under ``PYDPOWL_REQUIRE_R=1`` (``make test``, CI).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LANGUAGES = {"python": "python", "py": "python", "r": "r"}
FENCE = re.compile(r"^```\s*([A-Za-z]*)\s*$")
MARKER = re.compile(r"^<!--\s*not-run:\s*(?P<reason>\S.*?)\s*-->\s*$")
#: seconds for each block; the whole file gets the sum plus start-up time
BLOCK_TIMEOUT = 120
#: at most this many blocks may be marked not-run (in all the files together)
MAX_NOT_RUN = 5


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, counted from 1
    language: str
    code: str
    not_run: Optional[str]  # the marker's reason

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def code_blocks(path: Path) -> List[Block]:
    """The fenced Python and R blocks of a Markdown file, with their not-run markers."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), None)
        assert end is not None, f"{path.name}:{i + 1}: code fence never closed"
        language = LANGUAGES.get(m.group(1).lower())
        if language:
            before = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            marker = MARKER.match(before.strip())
            blocks.append(Block(path, i + 1, language, "\n".join(lines[i + 1:end]) + "\n",
                                marker.group("reason") if marker else None))
        i = end + 1
    return blocks


ALL = [b for path in DOCS for b in code_blocks(path)]
FILES = sorted({(b.path, b.language) for b in ALL if b.not_run is None}, key=lambda t: (str(t[0]), t[1]))


def _ids(item):
    path, language = item
    return f"{path.relative_to(ROOT)}[{language}]"


def test_the_docs_have_examples_and_few_are_marked_not_run():
    assert len([b for b in ALL if b.language == "python"]) >= 10 and any(b.language == "r" for b in ALL)
    marked = [b for b in ALL if b.not_run is not None]
    assert len(marked) <= MAX_NOT_RUN, "too many blocks marked not-run: " + ", ".join(b.where for b in marked)
    for b in marked:
        assert len(b.not_run.split()) >= 3, f"{b.where}: give a reason of a few words in the not-run marker"
    for path in DOCS:  # a marker must sit right before a code block, or it hides nothing and misleads
        text = path.read_text(encoding="utf-8").splitlines()
        for k, line in enumerate(text):
            if MARKER.match(line.strip()):
                nxt = next((t for t in text[k + 1:] if t.strip()), "")
                assert FENCE.match(nxt) and LANGUAGES.get(FENCE.match(nxt).group(1).lower()), \
                    f"{path.name}:{k + 1}: a not-run marker must come right before a python or r code block"


# ---- Python ----------------------------------------------------------------------------------------------------

_PY_DRIVER = r"""
import doctest, json, os, signal, sys, tempfile, traceback
blocks = json.load(sys.stdin)
namespace = {"__name__": "__main__"}
home = os.getcwd()

def timeout(signum, frame):
    raise TimeoutError(f"the block ran longer than {TIMEOUT} s")

signal.signal(signal.SIGALRM, timeout)
for block in blocks:
    where = block["where"]
    with tempfile.TemporaryDirectory(prefix="pydpowl-doc-") as folder:
        os.chdir(folder)
        signal.alarm(TIMEOUT)
        try:
            if block["code"].lstrip().startswith(">>>"):
                test = doctest.DocTestParser().get_doctest(block["code"], namespace, where, where, block["line"])
                runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
                report = []
                runner.run(test, out=report.append, clear_globs=False)
                if runner.failures:
                    raise AssertionError("the shown output differs:\n" + "".join(report))
            else:
                exec(compile(block["code"], where, "exec"), namespace)
        except BaseException:
            print(f"\n=== {where}: this block failed ===", file=sys.stderr)
            traceback.print_exc()
            sys.exit(1)
        finally:
            signal.alarm(0)
            os.chdir(home)
    print(f"ok {where}", flush=True)
"""


def _run_python(blocks: List[Block]) -> subprocess.CompletedProcess:
    payload = json.dumps([{"where": b.where, "line": b.line, "code": b.code} for b in blocks])
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONHASHSEED="0")
    return subprocess.run([sys.executable, "-c", _PY_DRIVER.replace("TIMEOUT", str(BLOCK_TIMEOUT))],
                          input=payload, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir(),
                          timeout=60 + BLOCK_TIMEOUT * len(blocks))


@pytest.mark.parametrize("item", [f for f in FILES if f[1] == "python"], ids=_ids)
def test_python_blocks_run(item):
    blocks = [b for b in ALL if (b.path, b.language) == item and b.not_run is None]
    done = _run_python(blocks)
    assert done.returncode == 0, f"{done.stdout[-2000:]}\n{done.stderr[-6000:]}"
    assert done.stdout.count("ok ") == len(blocks)


def test_a_failing_block_is_reported_with_its_place(tmp_path):
    """The runner fails, naming the file and line, when a block raises or a doctest's output differs."""
    doc = tmp_path / "x.md"
    doc.write_text("```python\nx = 1\n```\n\n```python\ny = x + undefined_name\n```\n\n"
                   "```python\n>>> x + 1\n3\n```\n")
    blocks = [Block(ROOT / "README.md", b.line, b.language, b.code, b.not_run) for b in code_blocks(doc)]
    assert [b.line for b in blocks] == [1, 5, 9]
    done = _run_python(blocks[:2])
    assert done.returncode == 1 and "README.md:5: this block failed" in done.stderr and "undefined_name" in done.stderr
    done = _run_python([blocks[0], blocks[2]])
    assert done.returncode == 1 and "the shown output differs" in done.stderr


def test_markers_are_read(tmp_path):
    path = tmp_path / "probe.md"
    path.write_text("<!-- not-run: needs a running scheduler -->\n\n```python\nboom()\n```\n\n```sh\nls\n```\n"
                    "```r\nx <- 1\n```\n")
    first, second = code_blocks(path)
    assert (first.not_run, first.language) == ("needs a running scheduler", "python")
    assert (second.not_run, second.language, second.code) == (None, "r", "x <- 1\n")


# ---- R -----------------------------------------------------------------------------------------------------------

_R_DRIVER = r"""
files <- commandArgs(trailingOnly = TRUE)
home <- getwd()
for (f in files) {
  where <- readLines(f, n = 1L)
  folder <- tempfile("pydpowl-doc-")
  dir.create(folder)
  setwd(folder)
  setTimeLimit(elapsed = TIMEOUT, transient = TRUE)
  res <- tryCatch({ source(f, local = globalenv(), echo = FALSE); NULL }, error = function(e) e)
  setTimeLimit(elapsed = Inf)
  setwd(home)
  unlink(folder, recursive = TRUE)
  if (!is.null(res)) {
    message("\n=== ", sub("^# ", "", where), ": this block failed ===\n", conditionMessage(res))
    quit(status = 1L, save = "no")
  }
  cat("ok", sub("^# ", "", where), "\n")
}
"""


def _r_code(block: Block) -> str:
    """The block's code; in the console form only the prompted lines (``>`` and ``+``), without the prompt."""
    lines = block.code.splitlines()
    if lines and lines[0].startswith("> "):
        lines = [ln[2:] for ln in lines if ln.startswith(("> ", "+ "))]
    return "\n".join(lines) + "\n"


def _require_r_package():
    why = None
    if shutil.which("Rscript") is None:
        why = "Rscript is not on PATH"
    elif subprocess.run(["Rscript", "-e", "quit(status = !requireNamespace('pydpowl', quietly = TRUE))"],
                        capture_output=True).returncode != 0:
        why = "the R package pydpowl is not installed (make setup installs it)"
    if why:
        if os.environ.get("PYDPOWL_REQUIRE_R") == "1":
            pytest.fail(f"{why}, and PYDPOWL_REQUIRE_R=1 requires it.", pytrace=False)
        pytest.skip(why)


@pytest.mark.parametrize("item", [f for f in FILES if f[1] == "r"], ids=_ids)
def test_r_blocks_run(item, tmp_path):
    _require_r_package()
    blocks = [b for b in ALL if (b.path, b.language) == item and b.not_run is None]
    files = []
    for k, b in enumerate(blocks):
        f = tmp_path / f"block{k}.R"
        f.write_text(f"# {b.where}\n{_r_code(b)}")
        files.append(str(f))
    driver = tmp_path / "driver.R"
    driver.write_text(_R_DRIVER.replace("TIMEOUT", str(BLOCK_TIMEOUT)))
    done = subprocess.run(["Rscript", str(driver), *files], capture_output=True, text=True, cwd=tmp_path,
                          timeout=60 + BLOCK_TIMEOUT * len(blocks))
    assert done.returncode == 0, f"{done.stdout[-2000:]}\n{done.stderr[-6000:]}"
    assert done.stdout.count("ok ") == len(blocks)
