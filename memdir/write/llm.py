"""The one way memdir talks to a model: an Anthropic client from the environment, and one request
that must answer with a call to a given tool (extraction, `recall --llm`, `consolidate --llm`).

The SDK is imported on first use only: the commands that never call a model must not pay for it.
Every way a call can fail becomes one LlmError line; callers add what it means for their work.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from memdir.core.errors import MemdirError

__all__ = ["AuthFailed", "LlmError", "NoApiKey", "forced_tool_call", "has_api_key", "make_client"]

CONNECT_TIMEOUT = 5.0
"""Seconds to open a connection. The SDK's own default; a single `timeout` number would set it too,
and an address that never answers would then hold a run for the whole read timeout, three times
over with the SDK's retries. A refused connection fails at once: three attempts, 1.5 s of backoff."""


class LlmError(MemdirError):
    """A model call failed: the API could not be reached or refused, or the answer was unusable."""


class AuthFailed(LlmError):
    """The API refused the key (HTTP 401 or 403): a configuration error, not worth retrying."""


class NoApiKey(MemdirError):
    """No Anthropic API key in the environment."""


def has_api_key(env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return bool(env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN"))


def _key_variable(env: Mapping[str, str] | None = None) -> str:
    """The variable the SDK took its credential from: the one to check when it is refused."""
    env = os.environ if env is None else env
    if env.get("ANTHROPIC_AUTH_TOKEN") and not env.get("ANTHROPIC_API_KEY"):
        return "ANTHROPIC_AUTH_TOKEN"
    return "ANTHROPIC_API_KEY"


def make_client(purpose: str, timeout: float = 60.0) -> Any:
    """An `anthropic.Anthropic` from the environment (ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN,
    ANTHROPIC_BASE_URL), retrying as the SDK does (twice). `timeout` bounds each attempt's reading;
    opening the connection has CONNECT_TIMEOUT. Raises NoApiKey, naming `purpose`, without a key."""
    if not has_api_key():
        raise NoApiKey(f"{purpose} needs an Anthropic API key in ANTHROPIC_API_KEY")
    import anthropic

    return anthropic.Anthropic(max_retries=2, timeout=anthropic.Timeout(timeout, connect=CONNECT_TIMEOUT))


def forced_tool_call(
    client: Any, *, model: str, max_tokens: int, system: str, content: str, tool: Mapping[str, Any]
) -> dict[str, Any]:
    """Send one user message with `tool` (a tool definition in Anthropic's schema) as the only
    choice, and return the input of the model's call to it. Raises LlmError for every way it can
    go wrong: timeouts and error statuses (after the SDK's retries), an answer cut off at
    `max_tokens`, no call to the tool, or a call whose input is not an object; AuthFailed, one of
    them, when the API refused the key (401, 403: the SDK does not retry those)."""
    import anthropic

    name = tool["name"]
    try:
        response = client.messages.create(
            model=model,
            max_tokens=max_tokens,
            system=system,
            messages=[{"role": "user", "content": content}],
            tools=[dict(tool)],
            tool_choice={"type": "tool", "name": name},
        )
    except anthropic.APITimeoutError:
        raise LlmError("the Anthropic API timed out (after the SDK's retries)") from None
    except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as exc:
        raise AuthFailed(
            f"authentication failed (HTTP {exc.status_code}: {_message(exc)}): check {_key_variable()}"
        ) from None
    except anthropic.APIStatusError as exc:
        raise LlmError(
            f"the Anthropic API answered {exc.status_code} ({_message(exc)}) after the SDK's retries"
        ) from None
    except anthropic.APIError as exc:
        raise LlmError(f"the Anthropic API could not be reached ({exc})") from None
    except ValueError as exc:  # JSONDecodeError, a validation error: the SDK could not read the answer
        raise LlmError(f"the API gave an answer that is not a Messages API response ({_first_line(exc)})") from None
    if getattr(response, "stop_reason", None) == "max_tokens":
        raise LlmError(f"the model's answer was cut off (stop_reason max_tokens, {max_tokens})")
    for block in getattr(response, "content", None) or []:
        if getattr(block, "type", None) == "tool_use" and getattr(block, "name", None) == name:
            if not isinstance(block.input, dict):
                raise LlmError(f"the model's {name} call has no object input")
            return block.input
    raise LlmError(f"the model did not call {name}")


def _first_line(exc: Exception) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def _message(exc: Any) -> str:
    """The API's own error message, else the SDK's."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("message", exc))
    return str(getattr(exc, "message", exc))
