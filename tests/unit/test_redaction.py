"""Redaction: every secret kind and each configured PII pattern is replaced; ordinary text is not."""

from __future__ import annotations

import pytest

from processors.redaction import DEFAULT_PII, Redactor
from schemas.messages import ChatMessage, FilePart, ImagePart, TextPart, ToolInvocationPart

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----"


@pytest.mark.parametrize(("text", "secret", "kind"), [
    ("my key is sk-proj-abcdefghijklmnop1234 ok", "sk-proj-abcdefghijklmnop1234", "api-key"),
    ("aws AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE", "aws-access-key"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123", "ghp_abcdefghijklmnopqrstuvwxyz0123", "github-token"),
    ("slack xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij", "slack-token"),
    ("Authorization: Bearer abc.def-ghijklmnop", "abc.def-ghijklmnop", "bearer-token"),
    ("password=hunter22!", "hunter22!", "credential"),
    ("pwd: 'letmein'", "letmein", "credential"),
    ('{"api_key": "abc123xyz"}', "abc123xyz", "credential"),
    (f"key:\n{PEM}\nend", "MIIEowIBAAKCAQEA7", "private-key"),
    (f"session {JWT}", JWT, "jwt"),
    ("google AIzaSyA1234567890abcdefghijklmnopqrstuv", "AIzaSyA1234567890abcdefghijklmnopqrstuv", "google-api-key"),
    ("mail jane.doe@example.com now", "jane.doe@example.com", "email"),
    ("call +1 415 555 2671 today", "415 555 2671", "phone"),
    ("call (415) 555-2671 today", "555-2671", "phone"),
    ("IBAN DE89 3704 0044 0532 0130 00 thanks", "3704 0044 0532", "iban"),
    ("card 4111 1111 1111 1111 thanks", "4111 1111 1111 1111", "card"),
])
def test_each_secret_and_pii_kind_is_replaced_by_its_marker(text: str, secret: str, kind: str) -> None:
    redacted = Redactor().text(text)
    assert secret not in redacted
    assert f"[REDACTED:{kind}]" in redacted


def test_credential_assignments_keep_their_key_name() -> None:
    assert Redactor().text("password=hunter22 and pwd: x9y8z7") == \
        "password=[REDACTED:credential] and pwd: [REDACTED:credential]"


def test_ordinary_numbers_and_words_survive() -> None:
    text = ("on 2024-01-15 at 14:30 (ts 1733000000000) v1.2.3, order 12345678, "
            "card-like 4111 1111 1111 1112 fails Luhn, pass: the ball, the secret: patience")
    assert Redactor().text(text) == text


def test_pii_patterns_are_a_configurable_list_and_custom_patterns_add_kinds() -> None:
    text = "jane@example.com, +44 20 7946 0958, ticket OPS-1234, key sk-abcdefghijklmnopqrstu"
    only_phone = Redactor(["phone"], {"ticket": r"\bOPS-\d+\b"}).text(text)
    assert only_phone == ("jane@example.com, [REDACTED:phone], ticket [REDACTED:ticket], "
                          "key [REDACTED:api-key]"), "secrets always go; PII only if listed"
    assert set(DEFAULT_PII) == {"email", "phone", "iban", "card"}
    with pytest.raises(ValueError, match="unknown PII pattern"):
        Redactor(["ssn"])


def test_messages_are_redacted_in_prose_tool_calls_and_metadata_but_payloads_stay() -> None:
    image = "iVBORw0KGgo+14155552671sk-abcdefghijklmnopqrstu"
    message = ChatMessage(
        id="m1", thread_id="t1", resource_id="r1", role="assistant", created_at=1,
        parts=[TextPart(text="mail jane@example.com"),
               ToolInvocationPart(tool_call_id="call-sk-abcdefghijklmnopqrstu", tool_name="login", state="result",
                                  args={"user": "jane", "password": "hunter22"},
                                  result=["token ghp_abcdefghijklmnopqrstuvwxyz0123"]),
               ImagePart(image=image, mime_type="image/png"),
               FilePart(data=image, mime_type="application/pdf")],
        metadata={"note": "AKIAIOSFODNN7EXAMPLE"},
    )
    redacted = Redactor().message(message)
    dumped = redacted.to_bytes().decode()
    for secret in ("jane@example.com", "hunter22", "ghp_abcdefghijklmnopqrstuvwxyz0123", "AKIAIOSFODNN7EXAMPLE"):
        assert secret not in dumped
    tool = redacted.parts[1]
    assert tool.args == {"user": "jane", "password": "[REDACTED:credential]"}
    assert tool.tool_call_id == message.parts[1].tool_call_id, "ids must still pair calls with results"
    assert redacted.parts[2].image == image and redacted.parts[3].data == image
    assert (redacted.id, redacted.role, redacted.created_at) == (message.id, message.role, message.created_at)


# Issue 18, item 10: the gaps a hostile probe found.

@pytest.mark.parametrize(("text", "secret", "kind"), [
    ('password: "correct horse battery staple" ok', "horse battery staple", "credential"),
    ("api_key='two words' then", "two words", "credential"),
    ("sk-\u200bproj-abcdefghijklmnop1234", "abcdefghijklmnop1234", "api-key"),
    ("ghp_abcdefghij\u2060klmnopqrstuvwxyz0123", "klmnopqrstuvwxyz0123", "github-token"),
    ("write to josé.müller@bücher.de today", "bücher.de", "email"),
    ("or 李雷@例子.中国 or x@xn--bcher-kva.de", "例子.中国", "email"),
    ("see https://files.example.com/r.pdf?X-Amz-Signature=abc123def&X-Amz-Date=2024", "abc123def", "url-credential"),
    ("open https://api.example.com/v1?q=cats&access_token=tok_55aa", "tok_55aa", "url-credential"),
    ("db at postgres://admin:s3cr3t@db.internal:5432/app", "s3cr3t", "url-credential"),
])
def test_evasions_and_forms_the_first_rules_missed(text: str, secret: str, kind: str) -> None:
    redacted = Redactor().text(text)
    assert secret not in redacted
    assert f"[REDACTED:{kind}]" in redacted


def test_ordinary_urls_emoji_joiners_and_persian_zwnj_are_untouched() -> None:
    text = ("https://example.com/search?q=cats&page=2 👨\u200d👩\u200d👧 می\u200cخواهم "
            "and a soft hy\u00adphen in prose stays when nothing is redacted")
    assert Redactor().text(text) == text


def test_provider_metadata_and_text_file_parts_are_redacted_binary_files_are_not() -> None:
    import base64

    secret = "password=hunter22!"
    b64 = base64.b64encode(f"config\n{secret}\n".encode()).decode()
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + secret.encode()).decode()
    message = ChatMessage.model_validate({
        "id": "m1", "role": "assistant", "created_at": 1, "thread_id": "t", "resource_id": "r",
        "parts": [
            {"type": "tool-invocation", "tool_call_id": "c1", "tool_name": "read", "state": "result",
             "result": "ok", "provider_metadata": {"mastra": {"modelOutput": f"the file says {secret}"}}},
            {"type": "file", "data": b64, "mime_type": "text/plain"},
            {"type": "file", "data": f"data:text/plain;base64,{b64}", "mime_type": "text/plain"},
            {"type": "file", "data": "data:application/json,%7B%22api_key%22%3A%20%22abc123xyz%22%7D"},
            {"type": "file", "data": png, "mime_type": "image/png"},
            {"type": "file", "data": "https://x.example/f.txt?token=zz9988", "mime_type": "text/plain"},
            {"type": "image", "image": "https://x.example/i.png?sig=qq7766"},
        ]})
    parts = Redactor().message(message).parts
    assert "hunter22" not in str(parts[0].provider_metadata)
    assert "hunter22" not in base64.b64decode(parts[1].data).decode()
    assert "hunter22" not in base64.b64decode(parts[2].data.split(",", 1)[1]).decode()
    assert parts[2].data.startswith("data:text/plain;base64,")
    assert "abc123xyz" not in parts[3].data and "REDACTED" in parts[3].data
    assert parts[4].data == png, "a binary payload stays decodable, byte for byte"
    assert parts[5].data == "https://x.example/f.txt?token=[REDACTED:url-credential]"
    assert parts[6].image == "https://x.example/i.png?sig=[REDACTED:url-credential]"
