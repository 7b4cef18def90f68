"""Secrets in vllm_args (`--api-key sk-...`) and in env names the old rule missed (`*_KEY`,
`*_PASS`, `AUTH`): masked in `config`, `plan`, the redactor (report, logs, the cockpit) and `up`'s
events, including the `vllm` stage that quotes `vllm serve`'s command line."""

import json
import shlex

import pytest

from spark_tui.core.node.redact import Redactor
from spark_tui.secret_names import SECRET_NAME, mask_args, secret_values
from tests.cluster import cluster as tc
from tests.frozen import cluster_config

KEY = "sk-live-0123456789abcdef"
ARGS = f"--api-key {KEY} --max-num-batched-tokens 8192 --hf-token=hf_argToken99"


def test_the_secret_name_rule():
    for name in (
        "HF_TOKEN",
        "VLLM_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "DB_PASS",
        "MYSQL_PASSWORD",
        "AUTH",
        "X_AUTH",
    ):
        assert SECRET_NAME.search(name), name
    for name in ("TOKENIZERS_PARALLELISM", "NCCL_IB_HCA", "KEYS", "VLLM_HOST_IP", "NCCL_SOCKET_IFNAME"):
        assert not SECRET_NAME.search(name), name
    argv = shlex.split(ARGS) + ["--ssl-keyfile", "/k.pem", "--tokenizer", "t"]
    assert mask_args(argv) == [
        "--api-key", "***", "--max-num-batched-tokens", "8192", "--hf-token=***", "--ssl-keyfile", "/k.pem", "--tokenizer", "t",
    ]  # fmt: skip
    assert secret_values(argv) == [KEY, "hf_argToken99"]


def test_config_and_plan_never_show_an_api_key_in_vllm_args(run_cli, clean_env, monkeypatch):
    path = clean_env / "c.yaml"
    path.write_text(
        "name: duo\nimage: vllm-node:latest\nmodel: Qwen/Qwen3-0.6B\n"
        "env: {VLLM_API_KEY: sk-env-secret-1, DB_PASS: pw-secret-2, AUTH: auth-secret-3, TOKENIZERS_PARALLELISM: 'false'}\n"
        "nodes:\n  - {name: a, host: 10.0.0.1}\n  - {name: b, host: 10.0.0.2}\n"
    )
    secrets = (KEY, "hf_argToken99", "sk-env-secret-1", "pw-secret-2", "auth-secret-3")
    for argv in (
        ("config",),
        ("config", "--json"),
        ("plan", "--offline"),
        ("plan", "--offline", "--executor", "native"),
        ("plan", "--offline", "--executor", "native", "--json"),
    ):
        code, out, err = run_cli(*argv, "--cluster", str(path), "--vllm-args", ARGS)
        assert code == 0, err
        leaked = [s for s in secrets if s in out + err]
        assert leaked == [], (argv, leaked)
        assert "--api-key" in out and "***" in out and "8192" in out, (argv, out)
        assert "TOKENIZERS_PARALLELISM" in out and "false" in out
    # Said once, with the way to keep the key off the head's command line.
    assert "pass the API key as VLLM_API_KEY in `env`" in out + err


def test_the_redactor_masks_vllm_args_secrets_and_secret_flags_anywhere():
    config, _ = cluster_config(2, {"SPARK_TUI_VLLM_ARGS": ARGS})
    r = Redactor(lambda: config)
    line = f"(APIServer pid=7) INFO utils.py:328 non-default args: {{'api_key': ['{KEY}'], 'model': 'm'}}"
    assert KEY not in r.show(line) and "'api_key': ['***']" in r.show(line)
    # Another program's command line (a `ps` line) with a secret flag spark-tui was never told of.
    assert r.show("root 99 python serve.py --api-key other-secret --port 1") == (
        "root 99 python serve.py --api-key *** --port 1"
    )


@pytest.mark.cluster
@pytest.mark.parametrize("as_json", [False, True])
def test_up_never_shows_the_api_key(cluster, tmp_path, run_cli, as_json):
    """The stand-in vLLM, as the real one, accepts --api-key and echoes it in its non-default
    args; the `vllm` stage quotes the `vllm serve` command line."""
    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    args = ["up", "--cluster", path, *tc.SANDBOX_FLAGS, "--vllm-args", f"--api-key {KEY}"]
    code, out, err = run_cli(*args + (["--json"] if as_json else []))
    assert code == 0, out + err
    assert KEY not in out + err
    if as_json:
        events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        detail = next(e["detail"] for e in events if e["event"] == "Stage" and e["stage"] == "vllm")
    else:
        detail = next(line for line in out.splitlines() if " vllm       started " in line)
    assert "vllm serve" in detail and "--api-key ***" in detail, detail
    code, out, err = run_cli("down", "--cluster", path, "--yes")
    assert code == 0
