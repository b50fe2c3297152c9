"""Models that take a temperature, by provider: the facts behind the role defaults (spec §2.2).

Mastra 1.31 sends its default temperature (Observer 0.3, Reflector 0) only to a model its provider
registry lists as supporting one (``modelSupportsTemperature(...) === true``); any other model — one
the registry does not list, a local OpenAI-compatible server's alias, a provider without a list, a
``ModelByInputTokens`` tier map — gets none, and the provider's own default applies. This table is
that list as shipped in ``@mastra/core`` 1.71.0 (``dist/capabilities/<provider>.json``, the
``temperature`` key) for the providers this project maps (``streams/llm/models.py``); data, not code.
Providers left out (OpenRouter's 325 entries among them) are looked up by their nested provider
(``openrouter/openai/gpt-4o`` → ``openai/gpt-4o``), as Mastra falls back to.
"""

from __future__ import annotations

TEMPERATURE_MODELS: dict[str, frozenset[str]] = {
    "google": frozenset({
        "deep-research-max-preview-04-2026", "deep-research-preview-04-2026",
        "gemini-2.5-computer-use-preview-10-2025", "gemini-2.5-flash", "gemini-2.5-flash-image",
        "gemini-2.5-flash-lite", "gemini-2.5-flash-preview-tts", "gemini-2.5-pro",
        "gemini-2.5-pro-preview-tts", "gemini-3-flash-preview", "gemini-3-pro-image",
        "gemini-3-pro-image-preview", "gemini-3.1-flash-image", "gemini-3.1-flash-image-preview",
        "gemini-3.1-flash-lite", "gemini-3.1-flash-lite-image", "gemini-3.1-flash-lite-preview",
        "gemini-3.1-flash-live-preview", "gemini-3.1-flash-tts-preview", "gemini-3.1-pro-preview",
        "gemini-3.1-pro-preview-customtools", "gemini-3.5-flash", "gemini-3.5-flash-lite",
        "gemini-3.5-live-translate-preview", "gemini-3.6-flash", "gemini-3.7-flash", "gemini-3.8-flash",
        "gemini-flash-latest", "gemini-flash-lite-latest", "gemini-omni-flash-preview", "gemma-4-26b-a4b-it",
        "gemma-4-31b-it", "lyria-3-clip-preview", "lyria-3-pro-preview",
    }),
    "openai": frozenset({
        "gpt-3.5-turbo", "gpt-4", "gpt-4-turbo", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "gpt-4o",
        "gpt-4o-2024-05-13", "gpt-4o-2024-08-06", "gpt-4o-2024-11-20", "gpt-4o-mini", "gpt-5.1", "gpt-5.2",
        "gpt-5.3-chat-latest", "gpt-5.3-codex", "gpt-5.4", "gpt-5.4-mini", "gpt-5.4-nano",
    }),
    "anthropic": frozenset({
        "claude-haiku-4-5", "claude-haiku-4-5-20251001", "claude-opus-4-5", "claude-opus-4-5-20251101",
        "claude-opus-4-6", "claude-sonnet-4-5", "claude-sonnet-4-5-20250929", "claude-sonnet-4-6",
    }),
    "xai": frozenset({
        "grok-4.20-0309-non-reasoning", "grok-4.20-0309-reasoning", "grok-4.20-multi-agent-0309", "grok-4.3",
        "grok-4.5", "grok-4.6", "grok-4.7", "grok-build-0.1",
    }),
    "groq": frozenset({
        "allam-2-7b", "groq/compound", "groq/compound-mini", "llama-3.1-8b-instant",
        "llama-3.3-70b-versatile", "openai/gpt-oss-120b", "openai/gpt-oss-20b",
        "openai/gpt-oss-safeguard-20b", "qwen/qwen3.6-27b", "qwen/qwen3.8-27b", "whisper-large-v3",
        "whisper-large-v3-turbo",
    }),
    "deepseek": frozenset({
        "deepseek-flash", "deepseek-v4-flash", "deepseek-v4-flash-vision-exp", "deepseek-v4-pro",
    }),
    "mistral": frozenset({
        "codestral-latest", "devstral-2512", "devstral-latest", "devstral-medium-2507",
        "devstral-medium-latest", "devstral-small-2505", "devstral-small-2507", "labs-devstral-small-2512",
        "magistral-medium-latest", "magistral-small", "ministral-3b-latest", "ministral-8b-latest",
        "mistral-large-2411", "mistral-large-2512", "mistral-large-latest", "mistral-medium-2505",
        "mistral-medium-2508", "mistral-medium-2604", "mistral-medium-latest", "mistral-nemo",
        "mistral-small-2506", "mistral-small-2603", "mistral-small-latest", "open-mistral-7b",
        "open-mistral-nemo", "open-mixtral-8x22b", "open-mixtral-8x7b", "pixtral-12b", "pixtral-large-latest",
        "voxtral-small-latest", "zai-glm-5-2", "zai-glm-5-3",
    }),
    "cerebras": frozenset({
        "gpt-oss-120b", "qwen-3.8-27b",
    }),
    "perplexity": frozenset({
        "sonar", "sonar-pro", "sonar-reasoning-pro",
    }),
    "togetherai": frozenset({
        "LiquidAI/LFM2-24B-A2B", "MiniMaxAI/MiniMax-M2.5", "MiniMaxAI/MiniMax-M2.7", "MiniMaxAI/MiniMax-M3",
        "Qwen/Qwen2.5-7B-Instruct-Turbo", "Qwen/Qwen3-235B-A22B-Instruct-2507-tput",
        "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", "Qwen/Qwen3-Coder-Next-FP8", "Qwen/Qwen3.5-397B-A17B",
        "Qwen/Qwen3.5-9B", "Qwen/Qwen3.6-Plus", "Qwen/Qwen3.7-Max", "deepcogito/cogito-v2-1-671b",
        "deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V3-1",
        "deepseek-ai/DeepSeek-V4-Flash-0731", "deepseek-ai/DeepSeek-V4-Pro",
        "deepseek-ai/DeepSeek-V4-Pro-0813", "deepseek-ai/DeepSeek-V4.1-Flash", "essentialai/Rnj-1-Instruct",
        "google/gemma-3n-E4B-it", "google/gemma-4-31B-it", "meta-llama/Llama-3.3-70B-Instruct-Turbo",
        "meta-llama/Meta-Llama-3-8B-Instruct-Lite", "moonshotai/Kimi-K2.5", "moonshotai/Kimi-K2.6",
        "moonshotai/Kimi-K2.7-Code", "nvidia/nemotron-3-ultra-550b-a55b", "openai/gpt-oss-120b",
        "openai/gpt-oss-20b", "pearl-ai/gemma-4-31b-it", "thinkingmachines/Inkling", "zai-org/GLM-5",
        "zai-org/GLM-5.1", "zai-org/GLM-5.2", "zai-org/GLM-5.3", "zai-org/GLM-5.3-Flash",
    }),
    "fireworks-ai": frozenset({
        "accounts/fireworks/models/deepseek-v4-flash-0731",
        "accounts/fireworks/models/deepseek-v4-flash-vision-exp", "accounts/fireworks/models/deepseek-v4-pro",
        "accounts/fireworks/models/deepseek-v4-pro-0813", "accounts/fireworks/models/deepseek-v4p1-flash",
        "accounts/fireworks/models/glm-5p2", "accounts/fireworks/models/glm-5p3",
        "accounts/fireworks/models/glm-5p3-flash", "accounts/fireworks/models/gpt-oss-120b",
        "accounts/fireworks/models/inkling", "accounts/fireworks/models/kimi-k2p6",
        "accounts/fireworks/models/kimi-k2p7-code", "accounts/fireworks/models/minimax-m2p7",
        "accounts/fireworks/models/minimax-m3", "accounts/fireworks/models/muse-glimmer-30b",
        "accounts/fireworks/models/nemotron-3-ultra-nvfp4",
        "accounts/fireworks/models/nemotron-lightning-3p5-30b-a3b", "accounts/fireworks/models/qwen3p7-plus",
        "accounts/fireworks/models/qwen3p8-2p4t-a95b", "accounts/fireworks/models/qwen3p8-max",
        "accounts/fireworks/routers/deepseek-flash-latest", "accounts/fireworks/routers/deepseek-pro-latest",
        "accounts/fireworks/routers/glm-5p2-fast", "accounts/fireworks/routers/glm-5p3-fast",
        "accounts/fireworks/routers/glm-fast-latest", "accounts/fireworks/routers/glm-flash-latest",
        "accounts/fireworks/routers/glm-latest", "accounts/fireworks/routers/minimax-latest",
        "accounts/fireworks/routers/qwen-max-latest",
    }),
    "lmstudio": frozenset({
        "openai/gpt-oss-20b", "qwen/qwen3-30b-a3b-2507", "qwen/qwen3-coder-30b",
    }),
}
