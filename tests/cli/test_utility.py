"""``pydpowl utility``."""

import pandas as pd

from pydpowl.cli import main


def test_utility_writes_the_table_and_the_figure(tmp_path, capsys):
    out = tmp_path / "u"
    assert main(["utility", "--designs", "cyp", "--n", "200", "--eps", "1", "--reps", "2",
                 "--mechanisms", "output,default", "--no-progress", "--out", str(out)]) == 0
    table = pd.read_csv(out / "results.csv")
    assert set(table.mechanism) == {"output", "default", "nonprivate", "best-arm"}
    assert (out / "utility.png").stat().st_size > 0
    text = capsys.readouterr().out
    assert "mean regret, public gamma rule" in text and "oracle gamma" in text


def test_unknown_mechanism_is_one_line(capsys):
    assert main(["utility", "--mechanisms", "magic", "--reps", "2", "--no-progress"]) == 2
    assert "mechanisms must be one of" in capsys.readouterr().err
