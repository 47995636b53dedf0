import subprocess
import sys

from pydpowl.cli import build_parser, main


def test_help_lists_commands(capsys):
    parser = build_parser()
    text = parser.format_help()
    assert "casestudy" in text


def test_no_command_prints_help_and_fails(capsys):
    assert main([]) == 2


def test_errors_are_one_line():
    proc = subprocess.run([sys.executable, "-m", "pydpowl.cli", "casestudy", "--runs", "0",
                           "--out", "/tmp/pydpowl-cli-test"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and "[" not in ln]
    assert lines == ["pydpowl casestudy: error: n_runs must be an integer >= 1, got n_runs=0."], proc.stderr


def test_usage_errors_are_one_line(capsys):
    import pytest

    with pytest.raises(SystemExit) as info:
        main(["fit", "--epsilon", "abc"])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pydpowl fit: error: argument --epsilon: invalid float value"), err
