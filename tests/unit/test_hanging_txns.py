"""The hanging-transaction rule: open, unlisted by the coordinator, still the same transaction after."""

from __future__ import annotations

from streams.hanging_txns import OpenTxn, abort_groups, hanging


def txn(topic: str = "om.events.v1", partition: int = 0, pid: int = 7, epoch: int = 0, start: int = 18,
        coordinator_epoch: int = -1) -> OpenTxn:
    return OpenTxn(topic, partition, pid, epoch, coordinator_epoch, start)


def test_a_transaction_no_coordinator_knows_is_hanging() -> None:
    assert hanging([txn()], {}, [txn()]) == [txn()]


def test_a_partition_the_coordinator_lists_is_live() -> None:
    assert hanging([txn()], {7: frozenset({("om.events.v1", 0)})}, [txn()]) == []


def test_a_known_producer_whose_transaction_does_not_list_the_partition_is_hanging() -> None:
    """The broker-restart case: the coordinator ended at CompleteCommit (no partitions)."""
    listed_elsewhere = {7: frozenset({("om.jobs.v1", 0)})}
    assert hanging([txn()], listed_elsewhere, [txn()]) == [txn()]
    assert hanging([txn()], {7: frozenset()}, [txn()]) == [txn()]


def test_a_transaction_that_closed_meanwhile_is_not_hanging() -> None:
    """It committed between the two looks: the coordinator no longer listed it, rightly."""
    assert hanging([txn()], {7: frozenset()}, []) == []


def test_a_new_transaction_at_a_later_offset_or_epoch_is_not_the_one_judged() -> None:
    assert hanging([txn()], {7: frozenset()}, [txn(start=25)]) == []
    assert hanging([txn()], {7: frozenset()}, [txn(epoch=1)]) == []
    assert hanging([txn()], {7: frozenset()}, [txn(pid=8)]) == []
    assert hanging([txn()], {7: frozenset()}, [txn(partition=1)]) == []


def test_a_moved_coordinator_epoch_is_still_the_same_transaction() -> None:
    assert hanging([txn()], {}, [txn(coordinator_epoch=3)]) == [txn()]


def test_only_the_unlisted_partitions_of_a_producer_are_hanging() -> None:
    a, b = txn(partition=0), txn(partition=1)
    assert hanging([a, b], {7: frozenset({("om.events.v1", 1)})}, [a, b]) == [a]


def test_aborts_are_grouped_per_producer_epoch_and_coordinator_epoch() -> None:
    groups = abort_groups([txn(partition=1), txn(topic="om.jobs.v1"), txn(partition=0), txn(pid=8, epoch=2,
                                                                                          coordinator_epoch=4)])
    assert groups == {(7, 0, 0): [("om.events.v1", 0), ("om.events.v1", 1), ("om.jobs.v1", 0)],
                      (8, 2, 4): [("om.events.v1", 0)]}


def test_nothing_open_means_nothing_to_abort() -> None:
    assert hanging([], {}, []) == [] and abort_groups([]) == {}
