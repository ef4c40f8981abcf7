"""The provider registry: which model names this installation can answer."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from urllib.parse import urlsplit

from editor.engine.ports import ModelProvider
from editor.providers.anthropic import AnthropicProvider
from editor.providers.offline import EchoProvider, ScriptedProvider
from editor.providers.openai import Fetch, OpenAIProvider, http_fetch

__all__ = ["ANTHROPIC_PREFIX", "OPENAI_PREFIX", "Registry", "build_registry"]

OPENAI_PREFIX = "openai:"
ANTHROPIC_PREFIX = "claude-"


class Registry:
    """Implements :class:`editor.engine.ports.ProviderRegistry`."""

    def __init__(
        self,
        openai_base_url: str | None,
        openai_api_key: str | None,
        fetch: Fetch = http_fetch,
        *,
        environ: Mapping[str, str] | None = None,
        llm_env_allow: Collection[str] = (),
    ) -> None:
        self._fixed: dict[str, ModelProvider] = {
            "echo": EchoProvider(),
            "scripted": ScriptedProvider(),
        }
        self._openai_base_url = _checked_base_url(openai_base_url)
        self._openai_api_key = openai_api_key or None
        self._fetch = fetch
        self._anthropic = AnthropicProvider(environ or {}, llm_env_allow, fetch)

    @property
    def openai_configured(self) -> bool:
        return self._openai_base_url is not None

    def provider_for(self, model: str) -> ModelProvider | None:
        fixed = self._fixed.get(model)
        if fixed is not None:
            return fixed
        if model.startswith(ANTHROPIC_PREFIX) and model[len(ANTHROPIC_PREFIX) :].strip():
            return self._anthropic
        if model.startswith(OPENAI_PREFIX) and self._openai_base_url is not None:
            name = model[len(OPENAI_PREFIX) :]
            if name.strip():
                return OpenAIProvider(
                    name, self._openai_base_url, self._openai_api_key, self._fetch
                )
        return None


def _checked_base_url(url: str | None) -> str | None:
    if not url:
        return None
    try:
        split = urlsplit(url)
        split.port  # noqa: B018 (raises ValueError on a bad port)
    except ValueError as error:
        raise ValueError(f"GATEHOUSE_OPENAI_BASE_URL: `{url}` is not a URL: {error}") from None
    if split.scheme not in ("http", "https") or not split.hostname:
        raise ValueError(
            f"GATEHOUSE_OPENAI_BASE_URL: `{url}` is not an http(s) URL "
            "(expected something like http://127.0.0.1:8080/v1)"
        )
    return url


def build_registry(
    openai_base_url: str | None,
    openai_api_key: str | None,
    fetch: Fetch = http_fetch,
    *,
    environ: Mapping[str, str] | None = None,
    llm_env_allow: Collection[str] = (),
) -> Registry:
    """``GATEHOUSE_OPENAI_BASE_URL`` (e.g. ``http://127.0.0.1:8080/v1``; empty or ``None``:
    no ``openai:`` models) and ``GATEHOUSE_OPENAI_API_KEY`` (optional); ``environ`` (the
    process environment) is where ``claude-…`` agents' ``llm`` variables are read, only those
    named in ``llm_env_allow`` (``GATEHOUSE_LLM_ENV_ALLOW``) and ``ANTHROPIC_API_KEY``."""
    return Registry(
        openai_base_url, openai_api_key, fetch, environ=environ, llm_env_allow=llm_env_allow
    )
