"""docs/index.md: every guide in docs/ listed once, in the issue's reading order, with links that resolve."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#([^)\s]+))?\)")


def _links(path):
    return [(target, anchor) for target, anchor in LINK.findall(path.read_text(encoding="utf-8"))
            if not re.match(r"[a-z]+://", target)]


def _anchors(path):
    """The ids of a guide's headings (the slugs GitHub and mkdocs give them, code marks dropped)."""
    slugs = set()
    for heading in re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), flags=re.M):
        text = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
        slugs.add(re.sub(r"[-\s]+", "-", text))
    return slugs


def test_every_guide_is_in_the_index_and_every_link_resolves():
    links = _links(DOCS / "index.md")
    guides = {p.name for p in DOCS.glob("*.md")} - {"index.md"}
    assert guides - {target for target, _ in links} == set(), "guides missing from docs/index.md"
    for target, anchor in links:
        path = (DOCS / target).resolve()
        assert path.is_file(), f"docs/index.md links {target}, which does not exist"
        if anchor:
            assert anchor in _anchors(path), f"docs/index.md links {target}#{anchor}: no such heading"


def test_the_sections_follow_the_reading_order():
    sections = re.findall(r"^## \d+\. (.+)$", (DOCS / "index.md").read_text(encoding="utf-8"), flags=re.M)
    assert sections == ["Getting started", "The estimators", "The private analysis", "Dask",
                        "Validation against DPpack", "Privacy: proofs and audit", "Benchmarks"]


def test_the_readme_links_the_index():
    assert ("docs/index.md", "") in _links(ROOT / "README.md")


@pytest.mark.slow
def test_make_docs_builds_the_site_offline_with_every_link_resolved(tmp_path):
    """mkdocs --strict (the site `make docs` writes): a link to a missing page fails the build."""
    if shutil.which("mkdocs") is None:
        pytest.fail("mkdocs is not installed (scripts/setup.sh installs Debian's mkdocs)")
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    for page in ("index.html", "readme.html", "sklearn.html", "analysis.html"):
        assert (tmp_path / "site" / page).is_file()
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert 'href="readme.html"' in index and 'href="dask.html#benchmark-make-bench-dask"' in index
    assert "cdnjs" not in index  # nothing fetched from the network
