"""Tests of pydpowl.plotting.analysis: the figures of a private analysis."""


def test_value_figure_states_the_benefit_and_the_gamma(cyp_scaled, tmp_path, monkeypatch):
    from matplotlib.text import Text

    from pydpowl.plotting import analysis

    real, seen = analysis.save_figure, []

    def keep(fig, path):
        seen.extend(t.get_text() for t in fig.findobj(Text))
        return real(fig, path)

    monkeypatch.setattr(analysis, "save_figure", keep)
    analysis.plot_value(cyp_scaled, tmp_path / "v.png")
    texts = " ".join(seen)
    assert "value = mean benefit" in texts and "log(24*365)" in texts
    assert "geometric-mean length of stay" in texts and "length of stay x" in texts
    assert f"candidate {cyp_scaled.gamma_selection['selected']:g} won the private selection" in texts
