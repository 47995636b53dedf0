from pydpowl._plotting import pyplot, save_figure


def test_save_figure_writes_a_png_in_new_folders_and_closes_the_figure(tmp_path):
    plt = pyplot()
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    path = save_figure(fig, tmp_path / "a" / "b" / "fig.png")
    assert path == tmp_path / "a" / "b" / "fig.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert fig.number not in plt.get_fignums()
