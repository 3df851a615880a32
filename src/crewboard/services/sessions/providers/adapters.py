"""Choosing the HTTP adapter for a configured provider. Above the port and its adapters (they
build on the port's types), so the port never imports what implements it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from crewboard.services.sessions.providers import (
    BACKOFF_BASE,
    ModelProvider,
    ProviderConfig,
    Sleep,
)
from crewboard.services.sessions.providers.anthropic import AnthropicProvider
from crewboard.services.sessions.providers.openai import OpenAIProvider

if TYPE_CHECKING:
    import httpx2


def provider_for(
    config: ProviderConfig,
    *,
    transport: httpx2.AsyncBaseTransport | None = None,
    backoff_base: float = BACKOFF_BASE,
    sleep: Sleep = anyio.sleep,
) -> ModelProvider:
    """The HTTP adapter for `config.kind` (close it with its `aclose()` when done).

    `transport`, `backoff_base` and `sleep` are for tests: an in-process transport, and
    back-off that does not make a test wait for seconds.
    """
    adapter = OpenAIProvider if config.kind == "openai" else AnthropicProvider
    return adapter(config, transport=transport, backoff_base=backoff_base, sleep=sleep)
