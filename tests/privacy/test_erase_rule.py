"""Only a person verified by face and voice may erase themselves."""

from __future__ import annotations

from egomem.privacy.erase import EraseVerdict, Speaker, may_erase


def test_verified_person_may_erase_themselves() -> None:
    assert may_erase("anna", Speaker("anna", None, "anna", True)) == EraseVerdict.ALLOW
    assert may_erase("anna", Speaker("anna", "anna", "anna", True)) == EraseVerdict.ALLOW


def test_another_persons_voice_is_refused() -> None:
    # Ben's voice asks while Anna is the current user (face): Ben cannot erase Anna.
    assert may_erase("anna", Speaker("anna", "ben", "anna", True)) == EraseVerdict.REFUSE
    # A voice nobody enrolled has, in front of Anna's face: not Anna speaking.
    assert may_erase("anna", Speaker("anna", "?", "anna", True)) == EraseVerdict.REFUSE


def test_unsure_identity_is_asked_to_confirm() -> None:
    assert may_erase("anna", Speaker("anna", None, None, False)) == EraseVerdict.CONFIRM  # no face seen
    assert may_erase("anna", Speaker("anna", None, "anna", False)) == EraseVerdict.CONFIRM  # not fused KNOWN
    assert may_erase(None, Speaker(None, None, None, False)) == EraseVerdict.CONFIRM
