"""A job-level fake model for core tests: deterministic, content-derived, instant.

Observe: one dated, prioritised line per message. Reflect: keeps every other line, so a
reflection always compresses. Results carry the job's cycle id; failures can be requested per call.
"""

from __future__ import annotations

from datetime import datetime, timezone

from schemas.jobs import ObserveJob, ObserveResult, ReflectJob, ReflectResult
from schemas.messages import TextPart


def observe_text(job: ObserveJob) -> str:
    lines: list[str] = []
    day = None
    for message in job.messages:
        at = datetime.fromtimestamp(message.created_at / 1000, tz=timezone.utc)
        if at.date() != day:
            day = at.date()
            lines.append(f"Date: {at.strftime('%b')} {at.day}, {at.year}")
        text = " ".join(p.text for p in message.parts if isinstance(p, TextPart))[:80]
        marker = "🔴" if message.role == "user" else "🟡"
        lines.append(f"* {marker} ({at.strftime('%H:%M')}) {message.role} [{message.id}]: {text}")
    return "\n".join(lines)


def reflect_text(job: ReflectJob) -> str:
    lines = [line for line in job.observations.split("\n") if line.strip()]
    return "\n".join(lines[::2]) or "* 🔴 nothing"


def respond(job: ObserveJob | ReflectJob, *, ok: bool = True) -> ObserveResult | ReflectResult:
    common = {
        "cycle_id": job.cycle_id,
        "key": job.key,
        "generation": job.generation,
        "ok": ok,
        "started_at": job.issued_at,
        "completed_at": job.issued_at + 5,
        "error": None if ok else "model unavailable (503)",
    }
    if isinstance(job, ObserveJob):
        text = observe_text(job) if ok else ""
        return ObserveResult(**common, mode=job.mode, observations=text)
    return ReflectResult(**common, mode=job.mode, observations=reflect_text(job) if ok else "")
