"""streams/group_predecessor.py without a broker: a slot is held while its process lives, and only
a slot's dead holder's member is ever named as the predecessor."""

from __future__ import annotations

from pathlib import Path

from streams.group_predecessor import claim_slot


def test_live_holders_keep_their_slots_and_a_successor_finds_only_the_dead_ones_member(tmp_path: Path) -> None:
    first, second = claim_slot(tmp_path, "om-worker"), claim_slot(tmp_path, "om-worker")
    assert first is not None and second is not None and first.member_file != second.member_file
    first.record("member-a")
    second.record("member-b")
    assert claim_slot(tmp_path, "om-worker").predecessor() is None, "a third worker named a live one's member"

    first.lock.close()  # the kernel releases a dead process's lock the same way
    successor = claim_slot(tmp_path, "om-worker")
    assert successor is not None and successor.member_file == first.member_file
    assert successor.predecessor() == "member-a"


def test_each_group_has_its_own_slots(tmp_path: Path) -> None:
    processor, llm = claim_slot(tmp_path, "om-processor"), claim_slot(tmp_path, "om-llm")
    assert processor is not None and llm is not None
    processor.record("p-member")
    assert llm.predecessor() is None


def test_an_empty_member_id_is_not_recorded(tmp_path: Path) -> None:
    slot = claim_slot(tmp_path, "om-worker")
    assert slot is not None
    slot.record("member-a")
    slot.record("")  # aiokafka's id before a join
    assert slot.predecessor() == "member-a"
