"""Issue 18 item 7: the worker's web port serves health and metrics only, never table contents
(issue 23 item 2 adds the Prometheus ``/metrics`` page).

Faust's defaults serve ``/table/<table>/<key>/`` (any tenant's state; 404 vs 500 told whether a
thread id exists, and each 500 logged the raw state) and ``/router/`` (which worker owns a key).
"""

from __future__ import annotations

from pathlib import Path

from processors.config import OMConfig
from streams.app import build_app
from streams.settings import Settings


def test_the_worker_web_port_serves_no_table_or_router_views(tmp_path: Path) -> None:
    app = build_app(Settings(data_dir=tmp_path, topic_prefix="webtest", replication=1), OMConfig(), "llm", llm=object())
    mounted = {prefix: str(blueprint) for prefix, blueprint in app.web._enabled_blueprints()}
    assert "/table" not in mounted and "/router" not in mounted and "/graph" not in mounted
    assert mounted[""] == "faust.web.apps.production_index:blueprint", "the health page stays"
    assert "/performance" in mounted
    app.web.init_server()
    paths = {route.resource.canonical for route in app.web.web_app.router.routes()}
    assert not any(p.startswith(("/table", "/router", "/graph", "/stats")) for p in paths), paths
    assert "/" in paths
    assert "/metrics" in paths, "the Prometheus page (streams/metrics.py)"
