"""The provider registry: which model names this installation can answer."""

from __future__ import annotations

from urllib.parse import urlsplit

from editor.engine.ports import ModelProvider
from editor.providers.offline import EchoProvider, ScriptedProvider
from editor.providers.openai import Fetch, OpenAIProvider, http_fetch

__all__ = ["OPENAI_PREFIX", "Registry", "build_registry"]

OPENAI_PREFIX = "openai:"


class Registry:
    """Implements :class:`editor.engine.ports.ProviderRegistry`."""

    def __init__(
        self, openai_base_url: str | None, openai_api_key: str | None, fetch: Fetch = http_fetch
    ) -> None:
        self._fixed: dict[str, ModelProvider] = {
            "echo": EchoProvider(),
            "scripted": ScriptedProvider(),
        }
        self._openai_base_url = _checked_base_url(openai_base_url)
        self._openai_api_key = openai_api_key or None
        self._fetch = fetch

    @property
    def openai_configured(self) -> bool:
        return self._openai_base_url is not None

    def provider_for(self, model: str) -> ModelProvider | None:
        fixed = self._fixed.get(model)
        if fixed is not None:
            return fixed
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
    openai_base_url: str | None, openai_api_key: str | None, fetch: Fetch = http_fetch
) -> Registry:
    """``GATEHOUSE_OPENAI_BASE_URL`` (e.g. ``http://127.0.0.1:8080/v1``; empty or ``None``:
    no ``openai:`` models) and ``GATEHOUSE_OPENAI_API_KEY`` (optional)."""
    return Registry(openai_base_url, openai_api_key, fetch)
