"""The four Kafka requests that find and abort a hanging transaction, which aiokafka lacks.

They are the requests behind Kafka's own ``kafka-transactions.sh find-hanging`` / ``abort``
(KIP-664): DescribeProducers (open transactions per partition, from the partition leader),
ListTransactions and DescribeTransactions (what each transaction coordinator believes), and
WriteTxnMarkers (the leader writes an ABORT marker). Schemas follow Kafka's message JSON files;
one version each, the oldest Kafka 4 still serves (WriteTxnMarkers v0 is gone there).
"""

from __future__ import annotations

from typing import TypeAlias

from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.types import (
    Boolean,
    CompactArray,
    CompactString,
    Int16,
    Int32,
    Int64,
    Schema,
    TaggedFields,
)

TopicPartitions = list[tuple[str, list[int]]]


class DescribeProducersResponse_v0(Response):
    API_KEY = 61
    API_VERSION = 0
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        ("topics", CompactArray(
            ("name", CompactString("utf-8")),
            ("partitions", CompactArray(
                ("partition_index", Int32),
                ("error_code", Int16),
                ("error_message", CompactString("utf-8")),
                ("active_producers", CompactArray(
                    ("producer_id", Int64),
                    ("producer_epoch", Int32),
                    ("last_sequence", Int32),
                    ("last_timestamp", Int64),
                    ("coordinator_epoch", Int32),
                    ("current_txn_start_offset", Int64),
                    ("tags", TaggedFields),
                )),
                ("tags", TaggedFields),
            )),
            ("tags", TaggedFields),
        )),
        ("tags", TaggedFields),
    )


class DescribeProducersRequest_v0(RequestStruct):
    FLEXIBLE_VERSION = True
    API_KEY = 61
    API_VERSION = 0
    RESPONSE_TYPE = DescribeProducersResponse_v0
    SCHEMA = Schema(
        ("topics", CompactArray(
            ("name", CompactString("utf-8")),
            ("partition_indexes", CompactArray(Int32)),
            ("tags", TaggedFields),
        )),
        ("tags", TaggedFields),
    )


DescribeProducersRequestStruct: TypeAlias = DescribeProducersRequest_v0


class DescribeProducersRequest(Request[DescribeProducersRequestStruct]):
    API_KEY = 61

    def __init__(self, topics: TopicPartitions) -> None:
        self._topics = topics

    def build(self, request_struct_class: type[DescribeProducersRequestStruct]) -> DescribeProducersRequestStruct:
        return request_struct_class([(name, parts, {}) for name, parts in self._topics], {})


class ListTransactionsResponse_v0(Response):
    API_KEY = 66
    API_VERSION = 0
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        ("error_code", Int16),
        ("unknown_state_filters", CompactArray(CompactString("utf-8"))),
        ("transaction_states", CompactArray(
            ("transactional_id", CompactString("utf-8")),
            ("producer_id", Int64),
            ("transaction_state", CompactString("utf-8")),
            ("tags", TaggedFields),
        )),
        ("tags", TaggedFields),
    )


class ListTransactionsRequest_v0(RequestStruct):
    FLEXIBLE_VERSION = True
    API_KEY = 66
    API_VERSION = 0
    RESPONSE_TYPE = ListTransactionsResponse_v0
    SCHEMA = Schema(
        ("state_filters", CompactArray(CompactString("utf-8"))),
        ("producer_id_filters", CompactArray(Int64)),
        ("tags", TaggedFields),
    )


ListTransactionsRequestStruct: TypeAlias = ListTransactionsRequest_v0


class ListTransactionsRequest(Request[ListTransactionsRequestStruct]):
    API_KEY = 66

    def __init__(self, producer_ids: list[int]) -> None:
        self._producer_ids = producer_ids

    def build(self, request_struct_class: type[ListTransactionsRequestStruct]) -> ListTransactionsRequestStruct:
        return request_struct_class([], self._producer_ids, {})


class DescribeTransactionsResponse_v0(Response):
    API_KEY = 65
    API_VERSION = 0
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        ("transaction_states", CompactArray(
            ("error_code", Int16),
            ("transactional_id", CompactString("utf-8")),
            ("transaction_state", CompactString("utf-8")),
            ("transaction_timeout_ms", Int32),
            ("transaction_start_time_ms", Int64),
            ("producer_id", Int64),
            ("producer_epoch", Int16),
            ("topics", CompactArray(
                ("topic", CompactString("utf-8")),
                ("partitions", CompactArray(Int32)),
                ("tags", TaggedFields),
            )),
            ("tags", TaggedFields),
        )),
        ("tags", TaggedFields),
    )


class DescribeTransactionsRequest_v0(RequestStruct):
    FLEXIBLE_VERSION = True
    API_KEY = 65
    API_VERSION = 0
    RESPONSE_TYPE = DescribeTransactionsResponse_v0
    SCHEMA = Schema(
        ("transactional_ids", CompactArray(CompactString("utf-8"))),
        ("tags", TaggedFields),
    )


DescribeTransactionsRequestStruct: TypeAlias = DescribeTransactionsRequest_v0


class DescribeTransactionsRequest(Request[DescribeTransactionsRequestStruct]):
    API_KEY = 65

    def __init__(self, transactional_ids: list[str]) -> None:
        self._transactional_ids = transactional_ids

    def build(self, request_struct_class: type[DescribeTransactionsRequestStruct]
              ) -> DescribeTransactionsRequestStruct:
        return request_struct_class(self._transactional_ids, {})


class WriteTxnMarkersResponse_v1(Response):
    API_KEY = 27
    API_VERSION = 1
    SCHEMA = Schema(
        ("markers", CompactArray(
            ("producer_id", Int64),
            ("topics", CompactArray(
                ("name", CompactString("utf-8")),
                ("partitions", CompactArray(
                    ("partition_index", Int32),
                    ("error_code", Int16),
                    ("tags", TaggedFields),
                )),
                ("tags", TaggedFields),
            )),
            ("tags", TaggedFields),
        )),
        ("tags", TaggedFields),
    )


class WriteTxnMarkersRequest_v1(RequestStruct):
    FLEXIBLE_VERSION = True
    API_KEY = 27
    API_VERSION = 1
    RESPONSE_TYPE = WriteTxnMarkersResponse_v1
    SCHEMA = Schema(
        ("markers", CompactArray(
            ("producer_id", Int64),
            ("producer_epoch", Int16),
            ("transaction_result", Boolean),
            ("topics", CompactArray(
                ("name", CompactString("utf-8")),
                ("partition_indexes", CompactArray(Int32)),
                ("tags", TaggedFields),
            )),
            ("coordinator_epoch", Int32),
            ("tags", TaggedFields),
        )),
        ("tags", TaggedFields),
    )


WriteTxnMarkersRequestStruct: TypeAlias = WriteTxnMarkersRequest_v1


class AbortMarkerRequest(Request[WriteTxnMarkersRequestStruct]):
    """WriteTxnMarkers with ``transaction_result = false``: this module never commits anything."""

    API_KEY = 27

    def __init__(self, producer_id: int, producer_epoch: int, coordinator_epoch: int,
                 topics: TopicPartitions) -> None:
        self._marker = (producer_id, producer_epoch, False, [(name, parts, {}) for name, parts in topics],
                        coordinator_epoch, {})

    def build(self, request_struct_class: type[WriteTxnMarkersRequestStruct]) -> WriteTxnMarkersRequestStruct:
        return request_struct_class([self._marker], {})
