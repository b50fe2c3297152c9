"""Redaction: secrets and chosen PII patterns become ``[REDACTED:<kind>]`` before a model sees them.

Secrets (API keys, tokens, passwords, private keys) are always removed: there is no legitimate
reason for an Observer to remember one. PII patterns are a list the operator chooses, because
some agents must remember an email address and others must never store one. Patterns err on the
side of precision where a false positive would corrupt ordinary content (card numbers must pass
the Luhn check and IBANs the mod-97 check, so timestamps and order numbers stay intact).

What is covered: every prose field of every part, tool arguments and results, message metadata
and ``provider_metadata`` (model output of tools lives there), the text of text-like file parts
(plain, ``data:`` URIs and base64 alike, re-encoded as they came), and the query strings and
userinfo of URLs — in prose and in image/file parts given by URL. Only binary payloads and the
identifiers in ``_VERBATIM`` stay byte for byte.

Evasions handled: zero-width characters inside an ASCII token (``sk-\u200bproj…``) are removed
before matching (the text is returned untouched when nothing matched); quoted credentials keep
every word up to the closing quote (``password: "correct horse battery"``); e-mail addresses may
be internationalised (``josé@bücher.de``, or punycode).

Pure: the worker's redaction hook and the ClickHouse sink both call :meth:`Redactor.message`, so
what the Observer saw and what the tables hold are redacted the same way.
"""

from __future__ import annotations

import base64
import binascii
import re
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from schemas.messages import ChatMessage, FilePart, ImagePart


def _mark(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def _luhn(candidate: str) -> bool:
    digits = re.sub(r"\D", "", candidate)
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char) * (2 if index % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def _iban_valid(candidate: str) -> bool:
    compact = candidate.replace(" ", "").upper()
    rotated = compact[4:] + compact[:4]
    return 15 <= len(compact) <= 34 and int("".join(str(int(c, 36)) for c in rotated)) % 97 == 1


@dataclass(frozen=True)
class Rule:
    """One pattern; ``check`` vetoes a match (checksums), ``keep`` is a group kept verbatim (a key name)."""

    kind: str
    pattern: re.Pattern[str]
    check: Callable[[str], bool] | None = None
    keep: str | None = None

    def replace(self, match: re.Match[str]) -> str:
        if self.check is not None and not self.check(match.group(0)):
            return match.group(0)
        prefix = match.group(self.keep) if self.keep else ""
        return f"{prefix}{_mark(self.kind)}"


_CREDENTIAL_NAMES = (r"password|passwd|passphrase|pwd|api[_-]?key|access[_-]?token|auth[_-]?token"
                     r"|client[_-]?secret|secret[_-]?key")
_CREDENTIAL_KEY = re.compile(rf"^(?:{_CREDENTIAL_NAMES})$", re.IGNORECASE)

SECRET_RULES: tuple[Rule, ...] = (
    Rule("private-key", re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END [A-Z0-9 ]*PRIVATE KEY-----",
                                   re.DOTALL)),
    Rule("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    Rule("bearer-token", re.compile(r"(?P<key>\b[Bb]earer\s+)[A-Za-z0-9._~+/=-]{12,}"), keep="key"),
    Rule("api-key", re.compile(r"\bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_-]{16,}")),
    Rule("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    Rule("github-token", re.compile(r"\b(?:gh[pousr]|github_pat)_[A-Za-z0-9_]{20,}")),
    Rule("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    Rule("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    # a quoted value runs to its closing quote (several words), a bare one to the next space/quote/comma
    Rule("credential", re.compile(
        rf"(?P<key>\b(?:{_CREDENTIAL_NAMES})[\"']?\s*[:=]\s*(?P<q>[\"'])?)"
        r"(?(q)(?:(?!(?P=q))[^\n]){1,200}|[^\s\"',;]{3,})", re.IGNORECASE), keep="key"),
    # URLs: the password of ``scheme://user:password@host``, and query values whose names say secret
    Rule("url-credential", re.compile(r"(?P<key>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]+:)[^\s/@]+(?=@)"), keep="key"),
    Rule("url-credential", re.compile(
        r"(?P<key>[?&;][\w.-]*?(?:token|key|secret|sig|signature|password|passwd|pwd|auth|credential|session"
        r"|code)[\w.-]*=)[^&#\s\"'<>]+", re.IGNORECASE), keep="key"),
)

PII_RULES: Mapping[str, Rule] = {
    # \w is Unicode here: internationalised local parts and domains (and their punycode) are addresses too
    "email": Rule("email", re.compile(
        r"(?<![\w.%+-])[\w.%+-]+@(?:[^\W_](?:[\w-]*[^\W_])?\.)+(?:[^\W\d_]{2,}|xn--[a-z0-9-]+)(?![\w-])")),
    "phone": Rule("phone", re.compile(
        r"(?<![\w+])(?:\+\d{1,3}[\s.-]?(?:\(\d{1,4}\)[\s.-]?)?\d{2,4}(?:[\s.-]?\d{2,4}){2,4}"
        r"|\(\d{3}\)\s?\d{3}[\s.-]\d{4}|\b\d{3}[.-]\d{3}[.-]\d{4})\b")),
    "iban": Rule("iban", re.compile(r"\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){2,7}(?:\s?[A-Z0-9]{1,4})?\b"),
                 check=_iban_valid),
    "card": Rule("card", re.compile(r"\b[2-6]\d{3}(?:[ -]?\d{4}){2,3}(?:[ -]?\d{1,3})?\b"), check=_luhn),
}
DEFAULT_PII: tuple[str, ...] = tuple(PII_RULES)

# Part fields that are payloads or identifiers, not prose: never rewritten (a base64 image must
# stay decodable, a tool call id must still match its result).
_VERBATIM = frozenset({"type", "tool_call_id", "tool_name", "state", "mime_type", "created_at", "detail"})

# Invisible characters inside an ASCII token are an evasion, never content (emoji joiners and
# the ZWNJ of Persian sit between non-ASCII characters and are left alone).
_HIDDEN_IN_TOKEN = re.compile(r"(?<=[A-Za-z0-9_\-.+/=:])[\u00ad\u180e\u200b-\u200d\u2060\ufeff]+(?=[A-Za-z0-9_\-.+/=:])")
_TEXT_MIME = re.compile(r"^(?:text/|application/(?:json|xml|yaml|x-yaml|csv|javascript|x-ndjson)\b|[^;]*\+(?:json|xml)\b)",
                        re.IGNORECASE)
_DATA_URI = re.compile(r"^data:(?P<mime>[^,;]*)(?P<params>(?:;[^,;]*)*?)(?P<b64>;base64)?,(?P<body>.*)$", re.DOTALL)


class Redactor:
    """Applies the secret rules, then the chosen PII rules and any custom ``{kind: regex}`` patterns."""

    def __init__(self, pii: Sequence[str] = DEFAULT_PII, custom: Mapping[str, str] | None = None) -> None:
        unknown = sorted(set(pii) - set(PII_RULES))
        if unknown:
            raise ValueError(f"unknown PII pattern(s) {unknown}; known: {sorted(PII_RULES)}")
        extra = [Rule(kind, re.compile(pattern)) for kind, pattern in (custom or {}).items()]
        self.rules: tuple[Rule, ...] = (*SECRET_RULES, *(PII_RULES[name] for name in pii), *extra)

    def text(self, text: str) -> str:
        visible = _HIDDEN_IN_TOKEN.sub("", text)
        redacted = visible
        for rule in self.rules:
            redacted = rule.pattern.sub(rule.replace, redacted)
        return text if redacted == visible else redacted

    def value(self, value: Any) -> Any:
        """Every string inside a JSON-like value (tool arguments and results, metadata)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {k: self._entry(k, v) for k, v in value.items()}
        return value

    def _entry(self, key: str, value: Any) -> Any:
        """``{"password": "..."}`` in tool arguments: the key names a credential, so the value goes."""
        if key in _VERBATIM:
            return value
        if isinstance(value, str) and value and _CREDENTIAL_KEY.match(key):
            return _mark("credential")
        return self.value(value)

    def message(self, message: ChatMessage) -> ChatMessage:
        parts = [self._part(part) for part in message.parts]
        metadata = self.value(message.metadata) if message.metadata is not None else None
        return message.model_copy(update={"parts": parts, "metadata": metadata})

    def messages(self, messages: Iterable[ChatMessage]) -> list[ChatMessage]:
        return [self.message(m) for m in messages]

    def _part(self, part: Any) -> Any:
        payload = {"image"} if isinstance(part, ImagePart) else {"data"} if isinstance(part, FilePart) else set()
        update = {name: self.value(getattr(part, name)) for name in _fields(part)
                  if name not in payload and name not in _VERBATIM}
        if isinstance(part, ImagePart) and _is_url(part.image):
            update["image"] = self.text(part.image)
        if isinstance(part, FilePart):
            update["data"] = self._file_data(part.data, part.mime_type)
        return part.model_copy(update=update)

    def _file_data(self, data: str, mime_type: str) -> str:
        """A URL's query and userinfo; a text-like file's text, re-encoded as it came; binary stays."""
        if _is_url(data):
            return self.text(data)
        uri = _DATA_URI.match(data)
        if uri:
            if not _TEXT_MIME.match(uri["mime"] or mime_type):
                return data
            head = data[: uri.start("body")]
            if uri["b64"]:
                text = _b64_text(uri["body"])
                redacted = text if text is None else self.text(text)
                return data if redacted == text else head + _b64(redacted)
            text = urllib.parse.unquote(uri["body"])
            redacted = self.text(text)
            return data if redacted == text else head + urllib.parse.quote(redacted, safe=" /:;,=&?@+$!*'()~#")
        if not _TEXT_MIME.match(mime_type):
            return data
        text = _b64_text(data)
        if text is None:
            return self.text(data)
        redacted = self.text(text)
        return data if redacted == text else _b64(redacted)


def _is_url(value: str) -> bool:
    return value.startswith(("http://", "https://", "ftp://", "s3://", "gs://"))


def _b64_text(value: str) -> str | None:
    """The UTF-8 text a base64 payload holds, or None when it is not base64 of UTF-8 text."""
    try:
        return base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def _fields(part: Any) -> list[str]:
    return [*type(part).model_fields, *(part.model_extra or {})]
