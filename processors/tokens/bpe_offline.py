"""OpenAI's BPE encodings (cl100k_base, o200k_base) built from files already on disk.

``tiktoken.get_encoding`` downloads its rank file on first use, which cannot work on machines
without internet and must never happen inside the pure core. litellm's wheel ships the same rank
files, so we read them from there (or from ``$OM_TOKENIZER_DIR``), check their sha256 against the
published hashes and build the :class:`tiktoken.Encoding` ourselves. litellm is located with
``importlib.util.find_spec``, which reads the install layout without importing the package.

Guarantees: no network, no writes (tiktoken's own loader would copy the file into a cache
folder), one load per encoding per process, thread-safe.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import tiktoken

TOKENIZER_DIR_ENV = "OM_TOKENIZER_DIR"

_ENDOFTEXT = "<|endoftext|>"
_ENDOFPROMPT = "<|endofprompt|>"


@dataclass(frozen=True)
class _EncodingSpec:
    """What tiktoken_ext.openai_public defines for an encoding, minus the download."""

    sha256: str
    cached_name: str  # the file name tiktoken's cache (and litellm's wheel) gives the rank file
    pat_str: str
    special_tokens: dict[str, int]


_SPECS: dict[str, _EncodingSpec] = {
    "cl100k_base": _EncodingSpec(
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        cached_name="9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
        pat_str=(
            r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
            r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
        ),
        special_tokens={
            _ENDOFTEXT: 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            _ENDOFPROMPT: 100276,
        },
    ),
    "o200k_base": _EncodingSpec(
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        cached_name="fb374d419588a4632f3f557e76b4b70aebbca790",
        pat_str="|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        special_tokens={_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
    ),
}

BPE_ENCODINGS: frozenset[str] = frozenset(_SPECS)

_loaded: dict[str, tiktoken.Encoding] = {}
_lock = threading.Lock()


class TokenizerFilesMissing(RuntimeError):
    """The BPE rank file is not on disk; the message says where we looked and how to fix it."""


def load_encoding(name: str) -> tiktoken.Encoding:
    """The named encoding, built once per process from a local rank file."""
    spec = _SPECS.get(name)
    if spec is None:
        raise ValueError(f"unknown BPE encoding {name!r}; expected one of {sorted(_SPECS)}")
    with _lock:
        encoding = _loaded.get(name)
        if encoding is None:
            ranks = _read_ranks(_find_rank_file(name, spec), spec.sha256)
            encoding = tiktoken.Encoding(
                name, pat_str=spec.pat_str, mergeable_ranks=ranks, special_tokens=spec.special_tokens
            )
            _loaded[name] = encoding
        return encoding


def _candidate_dirs() -> list[Path]:
    dirs = []
    override = os.environ.get(TOKENIZER_DIR_ENV)
    if override:
        dirs.append(Path(override))
    spec = importlib.util.find_spec("litellm")
    for root in (spec.submodule_search_locations or []) if spec else []:
        dirs.append(Path(root) / "litellm_core_utils" / "tokenizers")
    return dirs


def _find_rank_file(name: str, spec: _EncodingSpec) -> Path:
    searched = []
    for folder in _candidate_dirs():
        for file_name in (f"{name}.tiktoken", spec.cached_name):
            path = folder / file_name
            searched.append(str(path))
            if path.is_file():
                return path
    raise TokenizerFilesMissing(
        f"no rank file for {name} (looked at: {', '.join(searched) or 'nothing, litellm is missing'}). "
        f"Install the project's dependencies (litellm ships the file), or put {name}.tiktoken "
        f"(sha256 {spec.sha256}) in a folder and set {TOKENIZER_DIR_ENV} to it, "
        f"or use the 'tokenx' counter, which needs no files."
    )


def _read_ranks(path: Path, expected_sha256: str) -> dict[bytes, int]:
    """Parse tiktoken's rank format: one ``<base64 token> <rank>`` per line."""
    contents = path.read_bytes()
    actual = hashlib.sha256(contents).hexdigest()
    if actual != expected_sha256:
        raise TokenizerFilesMissing(
            f"{path} has sha256 {actual}, expected {expected_sha256}: the file is not the "
            f"encoding it is named after (or is damaged); replace it or set {TOKENIZER_DIR_ENV}."
        )
    ranks: dict[bytes, int] = {}
    for line in contents.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks
