"""An OpenAI-compatible Chat Completions client for the marking panel (standard library only:
marking workers need no provider SDK). One non-streamed request per call, temperature 0, JSON
answers asked for; any failure raises :class:`PanelCallError` (the panel records it and goes on
without that member)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


class PanelCallError(Exception):
    """The model could not be asked or did not answer."""


@dataclass(frozen=True)
class OpenAICompatibleClient:
    base_url: str
    api_key: str = ""
    timeout: float = 60.0

    def complete(self, *, model: str, messages: Sequence[Mapping[str, str]]) -> str:
        body = json.dumps(
            {
                "model": model,
                "messages": [dict(m) for m in messages],
                "temperature": 0,
                "response_format": {"type": "json_object"},
            }
        ).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        url = self.base_url.rstrip("/") + "/chat/completions"
        if not url.startswith(("http://", "https://")):
            raise PanelCallError(f"not an http(s) endpoint: {url}")
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                data = json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            raise PanelCallError(f"HTTP {exc.code} from {model}") from exc
        except (urllib.error.URLError, TimeoutError, ValueError, OSError) as exc:
            raise PanelCallError(f"{model}: {exc}") from exc
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise PanelCallError(f"{model}: no message in the answer") from exc
        if not isinstance(content, str):
            raise PanelCallError(f"{model}: the answer has no text")
        return content
