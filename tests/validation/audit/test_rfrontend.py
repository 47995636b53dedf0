"""validation/audit/rfrontend.py: the R front end's randomness, audited in fresh R sessions (issue 21.2)."""

import pytest


@pytest.mark.r
def test_default_release_differs_between_r_sessions_after_the_same_seed_and_replay_is_flagged(r_front_end):
    """The fast check of the default suite: the drop-in and dpowl() (the slow test and `make audit` run all)."""
    from validation.audit.rfrontend import r_stream_checks

    checks = r_stream_checks(seed=2024, sessions=2, interfaces=("svmDP", "dpowl"))
    assert [c.check.split(":")[0] for c in checks[:-1]] == ["svmDP", "dpowl"]
    assert [f"{c.check}: {c.detail}" for c in checks if not c.passed] == []
    assert checks[-1].detail.startswith("flagged for 2 of 2")


@pytest.mark.r
@pytest.mark.slow
def test_default_releases_differ_between_r_sessions_after_the_same_seed_and_replay_is_flagged(r_front_end):
    from validation.audit.rfrontend import R_STREAM_INTERFACES, r_stream_checks

    checks = r_stream_checks(seed=2024, sessions=2)
    assert [c.check.split(":")[0] for c in checks[:-1]] == list(R_STREAM_INTERFACES)
    failed = [f"{c.check}: {c.detail}" for c in checks if not c.passed]
    assert failed == []
    assert "releases all differ; .Random.seed untouched" in checks[0].detail
    assert checks[-1].detail.startswith(f"flagged for {len(R_STREAM_INTERFACES)} of {len(R_STREAM_INTERFACES)}")


def test_the_check_needs_two_sessions():
    from validation.audit.rfrontend import r_stream_checks

    with pytest.raises(ValueError, match=r"sessions must be >= 2"):
        r_stream_checks(sessions=1)
    with pytest.raises(ValueError, match=r"interfaces must be a non-empty subset"):
        r_stream_checks(interfaces=("svmDP", "lm"))
