"""Agent model providers (spec 04, *Registries*). Pure Python: no Django.

``build_registry(openai_base_url, openai_api_key, environ=…, llm_env_allow=…)`` answers
``provider_for(model)``: ``echo``, ``scripted`` and ``claude-…`` (the Anthropic Messages
protocol, reached as the agent's ``llm`` says) always; ``openai:<name>`` only when
``GATEHOUSE_OPENAI_BASE_URL`` is set (otherwise ``None``, which run-time resolution reports as
``provider_unavailable``).
"""

from __future__ import annotations

from editor.providers.anthropic import AnthropicProvider, messages_body
from editor.providers.offline import ECHO_KINDS, EchoProvider, ScriptedProvider, estimate_tokens
from editor.providers.openai import Fetch, HttpAnswer, OpenAIProvider, http_fetch, request_body
from editor.providers.registry import ANTHROPIC_PREFIX, OPENAI_PREFIX, Registry, build_registry

__all__ = [
    "ANTHROPIC_PREFIX",
    "ECHO_KINDS",
    "OPENAI_PREFIX",
    "AnthropicProvider",
    "EchoProvider",
    "Fetch",
    "HttpAnswer",
    "OpenAIProvider",
    "Registry",
    "ScriptedProvider",
    "build_registry",
    "estimate_tokens",
    "http_fetch",
    "messages_body",
    "request_body",
]
