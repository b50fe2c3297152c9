"""How much one Observer call reads: twice the observation threshold, at least 60,000 tokens (our rule).

In turn-by-turn use a synchronous cycle starts just past the threshold, so it reads about one
threshold's worth, and a buffering cycle at an interval less (it starts only below the threshold;
one at a turn's end, ``buffer_on_idle``, takes whatever is unbuffered, so it is bounded too). When
messages come faster than the Observer answers — producers in a burst, ``om replay`` of a long
history — the window grows past any threshold while a cycle is in flight, and the next cycle took
all of it: in bench 1b's long threads (4 × 2,000 messages produced at once) one synchronous call
held 856 messages, 1.08 MB, over the broker's record limit, so its job was refused and failed, and
the next step tried again with more (88 such jobs in one run, each encoded twice; the thread's
memory never formed). A model's context window would refuse such a call too. Mastra never meets
this: its agent blocks on the call.

Rules this module keeps:

* A call reads the oldest of its candidates, in their order, up to ``CALL_THRESHOLDS`` × the
  threshold now or ``MIN_CALL_TOKENS`` if that is more (tokens as :meth:`Step.message_tokens` counts
  them), and always at least one message. The floor is twice Mastra's default threshold, calls
  Mastra's defaults make too (~300 kB of text, well within the record limit), so a small threshold
  (the demo's 300 tokens) still observes a burst in one call instead of dozens in turn.
* In resource scope the cap applies to the threads picked largest first, in time order, so a
  thread's messages may be split between two calls.
* Candidates within that are taken as they are: a turn-by-turn conversation never reaches it, so
  Mastra's cycles are unchanged (the recorded traces and every pinned digest, the fuzz's included).
* The rest stay in the window. After a synchronous call the step is deferred: the cycle's result
  resumes it and starts the next one (processors/machine/planning.py), until the window is below
  the threshold — as a burst's last message would, had each cycle ended before the next message.
  After a buffering call they wait for the next interval, turn end or threshold, as unbuffered
  messages do.
"""

from __future__ import annotations

from processors.machine.step import Step
from schemas.messages import ChatMessage

CALL_THRESHOLDS = 2
MIN_CALL_TOKENS = 60_000


def within_call_size(step: Step, messages: list[ChatMessage]) -> list[ChatMessage]:
    cap = max(CALL_THRESHOLDS * step.message_threshold(), MIN_CALL_TOKENS)
    cache = step.state.message_tokens
    tokens = 24  # the list's own, as Step.message_tokens counts it
    for n, message in enumerate(messages):
        tokens += cache.get(message.id, 0)
        if n and tokens > cap:  # the first is always taken
            return messages[:n]
    return messages
