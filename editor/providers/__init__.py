"""Agent model providers (spec 04, *Registries*). Pure Python: no Django.

``build_registry(openai_base_url, openai_api_key)`` answers ``provider_for(model)``:
``echo`` and ``scripted`` always; ``openai:<name>`` only when ``GATEHOUSE_OPENAI_BASE_URL`` is
set (otherwise ``None``, which run-time resolution reports as ``provider_unavailable``).
"""

from __future__ import annotations

from editor.providers.offline import ECHO_KINDS, EchoProvider, ScriptedProvider, estimate_tokens
from editor.providers.openai import Fetch, HttpAnswer, OpenAIProvider, http_fetch, request_body
from editor.providers.registry import OPENAI_PREFIX, Registry, build_registry

__all__ = [
    "ECHO_KINDS",
    "OPENAI_PREFIX",
    "EchoProvider",
    "Fetch",
    "HttpAnswer",
    "OpenAIProvider",
    "Registry",
    "ScriptedProvider",
    "build_registry",
    "estimate_tokens",
    "http_fetch",
    "request_body",
]
