"""What the wheel holds: the engine (every subpackage of pydpowl) and nothing of the checkout's tools.

``r_reference`` (the rpy2 adapter to DPpack) and ``validation`` (the harness)
are run from a checkout; an installed pydpowl never imports them. The package
list is computed the way setuptools computes it for the wheel: its
``find_packages`` with the ``[tool.setuptools.packages.find]`` settings of
pyproject.toml.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import find_packages

ROOT = Path(__file__).resolve().parent.parent


def wheel_packages() -> set:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    find = config["packages"]["find"]
    return set(find_packages(where=str(ROOT), include=find.get("include", ["*"]), exclude=find.get("exclude", ())))


def test_the_wheel_holds_no_checkout_tool():
    packages = wheel_packages()
    assert not {p for p in packages if p.split(".")[0] in ("r_reference", "validation", "tests", "benchmarks")}
    assert "r_reference" not in (tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
                                 .get("package-data", {}))


def test_the_wheel_holds_every_engine_package():
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "pydpowl").rglob("__init__.py")}
    assert on_disk >= {"pydpowl", "pydpowl.interop", "pydpowl.estimators", "pydpowl.engine.mechanisms"}
    assert wheel_packages() == on_disk


def test_the_engine_never_imports_the_checkout_tools():
    for path in (ROOT / "pydpowl").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for tool in ("r_reference", "validation"):
            assert f"import {tool}" not in text and f"from {tool}" not in text, (path, tool)
