"""Runtime settings, read once from ``OM_*`` environment variables.

Everything that differs between a laptop, CI and a cluster lives here, so the rest of the code
never reads the environment itself and tests can build a ``Settings`` with explicit values.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent.parent
HookSlot = Literal["before_observation", "after_observation", "before_reflection", "after_reflection"]


class Settings(BaseSettings):
    """Defaults describe the embedded setup: local broker on 127.0.0.1, chDB under the data dir."""

    # hide_input_in_errors: a refused value (a bearer token, a DSN's password) is never echoed
    model_config = SettingsConfigDict(env_prefix="OM_", extra="ignore", hide_input_in_errors=True)

    data_dir: Path = Field(default=PROJECT_ROOT / ".om", description="local state: broker, chDB, caches")
    kafka_bootstrap: str = Field(default="127.0.0.1:19092", description="host:port[,host:port...]")
    clickhouse_dsn: str = Field(default="", description="chdb:///<dir> or http(s)://...; empty = embedded")
    topic_prefix: str = "om"
    model: str = Field(default="om-deterministic/observer", description="litellm provider/model string")
    model_api_base: str = Field(default="", description="base URL of an OpenAI-compatible server (llama.cpp, "
                                "vLLM, Ollama, LM Studio) or a provider proxy; empty = the provider's own")
    model_api_key: SecretStr = Field(default=SecretStr(""), description="the model's API key; empty = the "
                                     "provider's own variable (OPENAI_API_KEY, …); never logged")
    observer_timeout_s: float = Field(default=300.0, gt=0, description="one Observer request, per attempt")
    reflector_timeout_s: float = Field(default=600.0, gt=0, description="one Reflector request, per attempt "
                                       "(it rewrites the whole log)")
    extractor_timeout_s: float = Field(default=120.0, gt=0, description="one structured-extraction request")
    default_output_tokens: int = Field(default=8192, ge=1, description="output cap of a model litellm does "
                                       "not know (a local server's) when the config sets none")
    kafka_retry_s: float = Field(default=120.0, gt=0, description="how long `om send`/`om replay`/`om events` "
                                 "and the SDK keep retrying an unreachable or electing broker before failing")
    log_level: str = "INFO"
    test_backend: Literal["auto", "docker", "local"] = "auto"
    web_port: int = 6066
    partitions: int = Field(default=4, ge=1, description="partitions of every om.* topic")
    replication: int | None = Field(default=None, ge=1, description="replication factor of every topic the "
                                    "pipeline creates; unset = the cluster's default.replication.factor "
                                    "(1 on the local broker, 3 on a three-node cluster)")
    large_record_limit: int | None = Field(default=None, ge=1, description="bytes a job, result, event or "
                                          "record snapshot may take: read at start from those topics' "
                                          "max.message.bytes (streams/worker.py); unset = the 1 MB default's")
    config_file: Path | None = Field(default=None, description="JSON OM config (Mastra option names)")
    llm_concurrency: int = Field(default=4, ge=1, description="Observer/Reflector calls in flight per worker")
    offline_model_processes: int = Field(default=1, ge=0, le=64, description="`om run` (role all): child "
                                         "processes that answer the offline om-deterministic models, off the "
                                         "interpreter lock the fold shares, as a provider's answers are (the "
                                         "first with the worker, more when calls wait); 0 = in the worker's threads")
    llm_max_retries: int = Field(default=8, ge=0, description="retries of a transient model error")
    llm_retry_base_ms: int = Field(default=1000, ge=0, description="first backoff; doubles per retry")
    llm_retry_max_ms: int = Field(default=120_000, ge=0, description="backoff cap")
    session_timeout_ms: int = Field(default=10_000, ge=1000, description="consumer group session timeout; "
                                    "a killed worker's partitions move after this long")
    embedder: str = Field(default="", description="'minilm' or 'hashing[-dim]': index observation groups for "
                          "recall search (needs retrieval.vector in the OM config); empty = no search")
    web_host: str = Field(default="127.0.0.1", description="bind address of the worker's web endpoint")
    batch_max: int = Field(default=500, ge=1, description="input records folded per batch")
    batch_within_ms: int = Field(default=20, ge=1, description="longest a batch keeps filling while more input "
                                 "waits; one with nothing behind it is folded at once (streams/eager_take.py)")
    state_cache: int = Field(default=100_000, ge=1, description="key states kept decoded in memory, each "
                             "counted as 1 + its unobserved messages; the rest wait in the worker's local "
                             "store under <data_dir>/state (streams/state_store.py)")
    state_snapshot_s: float = Field(default=60.0, ge=0, description="how often the worker copies its local store "
                                    "as of a commit, for a start after a crash to adopt and read only the "
                                    "changelog after it (streams/state_checkpoint.py); 0 = never")
    commit_interval_ms: int = Field(default=100, ge=10, description="transactions commit at most once per "
                                    "interval while input keeps waiting; a batch with nothing behind it, or "
                                    "after a quiet interval, commits at once (streams/commit_pace.py)")
    fetch_max_wait_ms: int = Field(default=100, ge=1, description="longest fetch long-poll of the worker's "
                                   "consumer (Faust hard-codes 1500); bounds the wait for the first input "
                                   "after recovery (streams/fetch_wait.py)")
    stop_grace_s: float = Field(default=5.0, ge=0, description="after SIGTERM/SIGINT the worker exits within "
                                "this long even if Faust's graceful stop has not finished (as a kill -9 "
                                "would leave it: safe, see streams/stop_deadline.py); 0 = wait")
    crash_at: str = Field(default="", description="fault tests only: the worker kills itself (SIGKILL) after "
                          "sending, before committing, a batch that emits this lifecycle event type")
    commit_stall_s: float = Field(default=60.0, ge=0, description="a worker whose acknowledged input stays "
                                  "uncommitted this long while the broker answers restarts itself in place "
                                  "from the last commit (streams/stall_guard.py); 0 = never")
    stall_commits: bool = Field(default=False, description="fault tests only: commits silently do nothing, "
                                "until the stall restart drops this setting")
    idle_check_seconds: float = Field(default=5.0, gt=0, description="how often quiet keys get idle ticks")
    sink_group: str = Field(default="", description="consumer group of the ClickHouse sink; empty = <prefix>-sink")
    sink_max_batch: int = Field(default=5000, ge=1, description="records per ClickHouse insert, at most")
    sink_max_wait_ms: int = Field(default=200, ge=1, description="how long a batch may wait to fill")
    sink_linger_ms: int = Field(default=3, ge=0, description="once the processor's records came, a sink batch "
                                "takes more of them for at most this long (a commit's partitions land within "
                                "a few ms; every read-your-writes wait pays it), and closes once none came; "
                                "sink_max_wait_ms after its first poll in any case")
    sink_gather_ms: int = Field(default=1000, ge=0, le=60_000, description="embedded worker: its sink's started "
                                "batches (their rows already handed to the reader) are inserted together once "
                                "the oldest waited this long, or at once when a read of the tables waits for "
                                "them; chDB costs ~2-4 ms of CPU per insert and writes a part per table per insert")
    reader_host: str = "127.0.0.1"
    reader_port: int = Field(default=8080, ge=0, le=65535)
    reader_tokens: dict[str, list[str]] = Field(
        default_factory=dict, description="JSON {bearer token: [resource ids it may read]}"
    )
    reader_read_concurrency: int = Field(default=64, ge=1, description="context/status calls in flight, all "
                                         "tokens together; beyond it 429 (streams/reader/admission.py)")
    reader_read_per_token: int = Field(default=16, ge=1, description="context/status calls in flight per token")
    reader_recall_concurrency: int = Field(default=2, ge=1, description="recall calls running (each on its own "
                                           "thread), all tokens together; never taken from the read budget")
    reader_recall_per_token: int = Field(default=1, ge=1, description="recall calls running per token")
    reader_recall_rate: float = Field(default=2.0, ge=0, description="recall calls a second per token, "
                                      "sustained (token bucket); 0 = no rate limit")
    reader_recall_burst: int = Field(default=10, ge=1, description="recall calls one token may make at once "
                                     "after a quiet spell (the bucket's size)")
    reader_max_connections: int = Field(default=256, ge=1, description="open connections on the reader's "
                                        "listener; one more gets a 503 and is closed (streams/reader/connections.py)")
    reader_header_timeout_s: float = Field(default=10.0, gt=0, description="a request head must be complete "
                                           "this long after the connection opened or its first byte arrived")
    reader_idle_timeout_s: float = Field(default=30.0, gt=0, description="a keep-alive connection that sends "
                                         "nothing between requests for this long is closed")
    reader_body_timeout_s: float = Field(default=10.0, gt=0, description="a request body must arrive within "
                                         "this long (else 408)")
    hooks: dict[HookSlot, list[str]] = Field(
        default_factory=dict, description='JSON {"before_observation": ["module:function", ...], ...}'
    )
    redact: bool = Field(default=False, description="redact messages before the Observer and in ClickHouse")
    redact_pii: list[str] = Field(default_factory=lambda: ["email", "phone", "iban", "card"],
                                  description="PII patterns redacted besides secrets (processors/redaction.py)")
    redact_patterns: dict[str, str] = Field(default_factory=dict, description="JSON {kind: regex}: extra patterns")

    @field_validator("reader_tokens", mode="before")
    @classmethod
    def _tokens_shape(cls, value: Any) -> Any:
        """Checked as a whole, so an error's location never names a token (pydantic puts the dict
        key in it). An empty token is refused: it would match a bare ``Authorization: Bearer``."""
        if not isinstance(value, dict):
            raise ValueError("must be a JSON object {bearer token: [resource ids]}")  # noqa: TRY004 - pydantic wants ValueError
        for n, (token, resources) in enumerate(value.items(), 1):
            if not isinstance(token, str) or not token.strip():
                raise ValueError(f"entry {n}: a token must be a non-empty string")
            if not isinstance(resources, list) or not all(isinstance(r, str) and r for r in resources):
                raise ValueError(f"entry {n}: the resources must be a list of non-empty strings")
        return value

    @model_validator(mode="after")
    def _derive_defaults(self) -> Settings:
        """The embedded ClickHouse DSN follows the data dir, so moving OM_DATA_DIR moves both."""
        self.data_dir = self.data_dir.expanduser().resolve()
        if not self.sink_group:
            self.sink_group = f"{self.topic_prefix}-sink"
        if not self.clickhouse_dsn:
            self.clickhouse_dsn = f"chdb://{self.data_dir / 'clickhouse'}"
        return self

    @property
    def kafka_port(self) -> int:
        """The port of the first bootstrap address: the one the local broker listens on."""
        first = self.kafka_bootstrap.split(",")[0].strip()
        return int(first.rsplit(":", 1)[1])


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """One Settings per process; call ``get_settings.cache_clear()`` after changing the env in tests."""
    return Settings()
