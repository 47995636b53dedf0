import pytest

from pydpowl.cli._common import arm_labels, float_list


def test_arm_labels_prefers_the_given_names_and_strips_them():
    assert arm_labels(" guided , usual ", ("G", "U")) == ("guided", "usual")
    assert arm_labels(None, ("G", "U")) == ("G", "U")
    assert arm_labels("", ("G", "U")) == ("G", "U")


@pytest.mark.parametrize("text", ["one", "a,b,c", "a,", " ,b"])
def test_arm_labels_refuses_anything_but_two_names(text):
    with pytest.raises(ValueError, match=r"--labels must be two names PLUS,MINUS, got"):
        arm_labels(text, ("G", "U"))


def test_float_list_reads_comma_separated_numbers():
    assert float_list("0.1, 1,10") == [0.1, 1.0, 10.0]


def test_attach_negative_values():
    from pydpowl.cli._common import attach_negative_values

    assert attach_negative_values(["fit", "--bounds", "-1:89,0:1", "--gamma", "-2", "--x", "-inf:0"]) == [
        "fit", "--bounds=-1:89,0:1", "--gamma", "-2", "--x=-inf:0"]  # a plain number stays (argparse reads it)
    assert attach_negative_values(["--bounds=-1:2", "-h"]) == ["--bounds=-1:2", "-h"]
