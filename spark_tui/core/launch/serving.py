"""Is the cluster serving? Asked over HTTP, as a client would: `/health` answers 200 and
`/v1/models` lists the served model name. The head is asked through its own connection (an
SSH forward to its data address), so the answer does not depend on this machine's routes."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from dataclasses import dataclass, field

from spark_tui.core.node.connection import Transport
from spark_tui.core.node.errors import NodeError
from spark_tui.settings.resolve import Config

ANSWER_CAP = 1 << 20  # bytes read of an HTTP answer: a model list is a few kB


@dataclass
class Serving:
    endpoint: str
    model: str  # the served model name asked for
    ready: bool
    detail: str  # what the endpoint answered, in a few words
    listed: list[str] = field(default_factory=list)  # model ids /v1/models returned


def endpoint(config: Config) -> str:
    head = config.head
    # `host: local` is no address: this machine's own is loopback (vLLM listens on every address).
    host = head["data_ip"] or ("127.0.0.1" if head.local else head["host"])
    return f"http://{host}:{config['vllm_port']}/v1"


def listed_models(body: bytes) -> list[str]:
    """The model ids of a /v1/models answer; a body of any other shape lists none."""
    answer = json.loads(body)
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list):
        return []
    return [m["id"] for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]


async def ask(config: Config, transport: Transport) -> Serving:
    head, port, model = config.head, config["vllm_port"], config["served_model_name"] or ""
    target = head["data_ip"] or "127.0.0.1"
    out = Serving(endpoint(config), model, False, "")
    try:
        base, listener = await transport.http_base(target, port)
    except (NodeError, OSError) as exc:
        out.detail = f"cannot reach {target}:{port} through {head.name}: {exc}"
        return out
    try:

        def get(path):
            with urllib.request.urlopen(base + path, timeout=5) as resp:
                return resp.status, resp.read(ANSWER_CAP)  # the server's size, not ours to trust

        status, _ = await asyncio.to_thread(get, "/health")
        status2, body = await asyncio.to_thread(get, "/v1/models")
        out.listed = listed_models(body) if status2 == 200 else []
        out.ready = status == 200 and model in out.listed
        out.detail = (
            "serving"
            if out.ready
            else f"/health {status}, /v1/models lists {', '.join(out.listed) or 'nothing'}"
        )
    except (OSError, ValueError, AttributeError) as exc:
        out.detail = f"not answering ({type(exc).__name__}: {str(exc)[:80]})"
    finally:
        if listener is not None:
            listener.close()
    return out
