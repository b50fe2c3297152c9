"""Resource scope: the other threads' unobserved messages, as the actor is shown them."""

from __future__ import annotations

from processors.context.build import build_context
from processors.context.prompts import OTHER_CONVERSATIONS_CLOSE, OTHER_CONVERSATIONS_INTRO, OTHER_CONVERSATIONS_OPEN
from processors.model_port import default_counter
from processors.config import OMConfig
from processors.context.other_conversations import PART_CHAR_LIMIT, other_conversations_block, shown_thread_id
from schemas.messages import ChatMessage, TextPart

AT = 1_733_000_000_000  # Nov 30 2024, 20:53 UTC
COUNTER = default_counter()


def msg(thread: str, i: int, text: str, at: int = AT) -> ChatMessage:
    return ChatMessage(id=f"{thread}-{i}", thread_id=thread, resource_id="u1", role="user" if i % 2 == 0 else
                       "assistant", created_at=at + i * 60_000, parts=[TextPart(text=text)])


def test_each_other_thread_is_one_block_in_the_order_it_began() -> None:
    block = other_conversations_block({
        "current": [msg("current", 0, "not shown")],
        "later": [msg("later", 1, "second thread", at=AT + 3_600_000)],
        "earlier": [msg("earlier", 0, "I moved to Lisbon"), msg("earlier", 1, "Noted")],
        "quiet": [],
    }, "current", COUNTER)
    assert block.startswith(f"{OTHER_CONVERSATIONS_INTRO}\n{OTHER_CONVERSATIONS_OPEN}\n")
    assert block.endswith(f"\n{OTHER_CONVERSATIONS_CLOSE}")
    assert block.index('<other-conversation id="earlier">') < block.index('<other-conversation id="later">')
    assert "not shown" not in block and 'id="quiet"' not in block and 'id="current"' not in block
    earlier = block.split('<other-conversation id="earlier">\n')[1].split("\n</other-conversation>")[0]
    assert earlier == "Nov 30 2024:\nUser (8:53 PM): I moved to Lisbon\nAssistant (8:54 PM): Noted"


def test_times_follow_the_records_time_zone() -> None:
    block = other_conversations_block({"a": [msg("a", 0, "hi")]}, "b", COUNTER, tz="Asia/Tokyo")
    assert "Dec 1 2024:\nUser (5:53 AM): hi" in block


def test_long_parts_are_cut_to_500_characters_and_say_so() -> None:
    block = other_conversations_block({"a": [msg("a", 0, "x" * 800)]}, "b", COUNTER)
    assert "x" * PART_CHAR_LIMIT + "\n... [truncated 300 characters]" in block  # Mastra's marker
    assert "x" * (PART_CHAR_LIMIT + 1) not in block


def test_nothing_unobserved_elsewhere_means_no_block() -> None:
    assert other_conversations_block({}, "a", COUNTER) == ""
    assert other_conversations_block({"a": [msg("a", 0, "mine")]}, "a", COUNTER) == ""
    assert other_conversations_block({"b": [msg("b", 0, "   ")]}, "a", COUNTER) == ""


def test_a_thread_id_cannot_break_out_of_its_tag() -> None:
    block = other_conversations_block({'x"><evil>': [msg("x", 0, "hi")]}, "a", COUNTER)
    assert '<other-conversation id="x&quot;&gt;&lt;evil&gt;">' in block


def test_the_block_sits_between_the_preamble_and_the_observations() -> None:
    block = other_conversations_block({"b": [msg("b", 0, "elsewhere")]}, "a", COUNTER)
    context = build_context("* 🔴 (09:00) User lives in Porto", [], AT, other_conversations=block)
    assert context.system[1] == block and context.system[2] == "<observations>"
    assert build_context("", [], AT, other_conversations=block).system == [], "no observations, no block"
    assert block not in build_context("* 🔴 (09:00) x", [], AT).system


def test_obscured_ids_are_xxh32_hex_as_mastras_h32_to_string() -> None:
    """Reference values of XXH32 with seed 0 (the algorithm's published test vectors)."""
    assert shown_thread_id("", obscure=True) == "02cc5d05"
    assert shown_thread_id("abc", obscure=True) == "32d153ff"
    assert shown_thread_id("abc", obscure=False) == "abc"


def test_obscure_thread_ids_hides_the_real_ids_from_the_model() -> None:
    block = other_conversations_block({"customer-4711": [msg("customer-4711", 0, "hi")]}, "a", COUNTER,
                                      obscure_ids=True)
    assert f'<other-conversation id="{shown_thread_id("customer-4711", obscure=True)}">' in block
    assert "customer-4711" not in block


def test_obscure_thread_ids_is_an_om_option_in_either_spelling() -> None:
    assert OMConfig().obscure_thread_ids is False
    assert OMConfig.model_validate({"obscureThreadIds": True}).obscure_thread_ids is True
