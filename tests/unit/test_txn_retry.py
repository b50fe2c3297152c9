"""streams/txn_retry.py: a new transaction's partitions, refused while the last commit's markers are
still being written, are asked again after 1, 2, 4 … ms up to aiokafka's 20, not 20 ms at once."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from aiokafka.errors import ConcurrentTransactions, NoError
from aiokafka.producer import sender as aiokafka_sender

from streams import txn_retry


@pytest.fixture(autouse=True)
def installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aiokafka_sender.AddPartitionsToTxnHandler, "handle_response",
                        aiokafka_sender.AddPartitionsToTxnHandler.handle_response)  # restored after the test
    txn_retry.install()


def _handler(added: set) -> aiokafka_sender.AddPartitionsToTxnHandler:
    manager = SimpleNamespace(txn_partitions=added, partition_added=added.add, transactional_id="t")
    sender = SimpleNamespace(_txn_manager=manager, _retry_backoff=0.1)
    return aiokafka_sender.AddPartitionsToTxnHandler(sender, [])


def _answer(error: type) -> SimpleNamespace:
    return SimpleNamespace(errors=[("topic", [(0, error.errno)])])


def test_the_wait_doubles_from_a_millisecond_up_to_aiokafkas_and_an_accepted_answer_resets_it() -> None:
    handler = _handler(set())
    waits = [handler.handle_response(_answer(ConcurrentTransactions)) for _ in range(2_000)]
    assert waits[:7] == pytest.approx([0.001, 0.002, 0.004, 0.008, 0.016, 0.02, 0.02])
    assert set(waits[7:]) == {0.02}, "a broker refusing for ever is asked every 20 ms, no overflow"
    assert handler.handle_response(_answer(NoError)) is None
    handler._sender._txn_manager.txn_partitions.clear()  # the next transaction, after the next commit
    assert handler.handle_response(_answer(ConcurrentTransactions)) == pytest.approx(0.001)


def test_a_refusal_inside_a_transaction_that_has_partitions_keeps_aiokafkas_backoff() -> None:
    handler = _handler({"an earlier partition"})
    assert handler.handle_response(_answer(ConcurrentTransactions)) == pytest.approx(0.1)


async def test_the_worker_app_installs_it(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from processors.config import OMConfig
    from streams.app import build_app
    from streams.settings import Settings

    monkeypatch.setattr(aiokafka_sender.AddPartitionsToTxnHandler, "handle_response", txn_retry._aiokafka_rule)
    build_app(Settings(data_dir=tmp_path, topic_prefix="tr", clickhouse_dsn="http://unused", replication=1),
              OMConfig.from_mastra({}), "processor")
    assert aiokafka_sender.AddPartitionsToTxnHandler.handle_response is txn_retry._handle_response
