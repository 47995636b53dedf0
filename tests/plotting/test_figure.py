from pydpowl.plotting.figure import pyplot, save_figure


def test_save_figure_writes_a_png_in_new_folders_and_closes_the_figure(tmp_path):
    plt = pyplot()
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    path = save_figure(fig, tmp_path / "a" / "b" / "fig.png")
    assert path == tmp_path / "a" / "b" / "fig.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert fig.number not in plt.get_fignums()


def test_plotting_has_one_home():
    """Every figure module lives in pydpowl.plotting; importing the package does not import matplotlib."""
    import subprocess
    import sys
    from pathlib import Path

    import pydpowl

    root = Path(pydpowl.__file__).parent
    drawing = {p.relative_to(root).as_posix() for p in root.rglob("*.py")
               if "savefig" in p.read_text() or "pyplot" in p.read_text()}
    assert drawing and all(p.startswith("plotting/") for p in drawing), drawing
    code = "import sys, pydpowl.plotting; print('matplotlib' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"
