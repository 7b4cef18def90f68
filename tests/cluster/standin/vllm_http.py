"""The stand-in vLLM's HTTP server (stdlib only): /health and /v1/models as vLLM's OpenAI server
answers them. `serve(port, served, model, version, max_model_len)` blocks, serving forever.
SPARK_TEST_MODELS_BODY=json: /v1/models answers that instead (a broken or hostile server's JSON)."""

from __future__ import annotations

import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def serve(port: int, served: str, model: str, version: str, max_model_len: int) -> None:
    models = {
        "object": "list",
        "data": [
            {
                "id": served,
                "object": "model",
                "owned_by": "vllm",
                "root": model,
                "max_model_len": max_model_len,
            }
        ],
    }

    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            path = self.path.split("?")[0]
            if path == "/health":
                self._send(200, b"")
            elif path == "/v1/models":
                body = os.environ.get("SPARK_TEST_MODELS_BODY")
                self._send(200, body.encode() if body else json.dumps(models).encode())
            elif path == "/version":
                self._send(200, json.dumps({"version": version}).encode())
            else:
                self._send(404, json.dumps({"detail": "Not Found"}).encode())

        def log_message(self, format: str, *args) -> None:  # noqa: A002 (the stdlib's signature)
            pass

    ThreadingHTTPServer.allow_reuse_address = True
    with ThreadingHTTPServer(("0.0.0.0", port), Handler) as httpd:
        httpd.serve_forever()
