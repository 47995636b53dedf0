"""The suite's own helpers (tests/conftest.py)."""

from tests.conftest import mentions_number


def test_a_size_is_found_as_a_number_and_not_inside_a_path_or_a_decimal():
    path = "wrote /tmp/pytest-of-root/pytest-600/test_fit0/model.json"
    assert "600" in path and not mentions_number(path, 600)  # the substring test this replaces failed here
    assert not mentions_number("coefficient 0.1600, intercept -2.6001", 600)
    assert mentions_number("n = 600", 600) and mentions_number("600 subjects.", 600)
    assert mentions_number("fitted on 600.", 600) and mentions_number("(600)", 600)
    assert not mentions_number("n = 6000", 600) and not mentions_number("n not released", 600)
