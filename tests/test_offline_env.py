"""Offline by default once verified: when `model.complete` passed on every node, the containers get
HF_HUB_OFFLINE=1 and TRANSFORMERS_OFFLINE=1, derived with the reason; a user's value wins and is
shown as the user's; when the check did not pass they are not set and the plan says why. On the
namespace test cluster: each node's own Hugging Face cache, read over its own shell."""

import json
from pathlib import Path

import pytest

from spark_tui.settings.container_env import OFFLINE_VARS
from tests.test_sync import MODEL, config_for, write_model

pytestmark = pytest.mark.cluster


def _plan(run_cli, path: str, *argv: str) -> list[dict]:
    code, out, err = run_cli("plan", "--cluster", path, "--json", *argv)
    assert code == 0, err
    return json.loads(out)["containers"]


def _env(container: dict) -> dict[str, dict]:
    return {e["name"]: e for e in container["env"]}


def test_offline_is_derived_once_verified_overridable_and_not_derived_with_why(cluster, tmp_path, run_cli):
    a, b = cluster.nodes[:2]
    caches = {n.name: tmp_path / f"hf-{n.name}" for n in (a, b)}
    for cache in caches.values():
        write_model(cache)
    config_for(cluster, 2, tmp_path, caches)  # writes c2.yaml with each node's cache as its volume
    path = str(tmp_path / "c2.yaml")

    # Verified on every node: derived, with the reason, on each node's container.
    for container in _plan(run_cli, path):
        env = _env(container)
        for var in OFFLINE_VARS:
            assert env[var]["value"] == "1", env
            assert env[var]["source"].startswith(f"model.complete passed on every node ({a.name}, {b.name})")
        assert container["env_not_set"] == []
    code, text, _ = run_cli("plan", "--cluster", path)
    assert (
        f"    HF_HUB_OFFLINE=1  <- model.complete passed on every node ({a.name}, {b.name}): {MODEL}" in text
    )

    # A user's value wins and is shown as the user's (the derived one is not used).
    for container in _plan(run_cli, path, "-e", "HF_HUB_OFFLINE=0"):
        env = _env(container)
        assert env["HF_HUB_OFFLINE"]["value"] == "0", env
        assert env["HF_HUB_OFFLINE"]["source"].startswith("env (command line"), env
        assert [e["value"] for e in container["env"] if e["name"] == "HF_HUB_OFFLINE"] == ["0"]
        assert env["TRANSFORMERS_OFFLINE"]["value"] == "1"  # the other one stays derived

    # One node's copy truncated: not derived, and the plan says why, naming the node.
    snap_b = next((caches[b.name] / "hub").glob("*/snapshots/*"))
    blob = (snap_b / "model-00002-of-00003.safetensors").resolve()
    blob.write_bytes(blob.read_bytes()[:500_000])
    for container in _plan(run_cli, path):
        assert not set(OFFLINE_VARS) & set(_env(container)), container["env"]
        whys = {x["name"]: x["why"] for x in container["env_not_set"]}
        assert set(whys) == set(OFFLINE_VARS), container
        assert whys["HF_HUB_OFFLINE"].startswith("model.complete did not pass (" + b.name + ": ")
        assert "model-00002-of-00003.safetensors truncated" in whys["HF_HUB_OFFLINE"]
    code, text, _ = run_cli("plan", "--cluster", path)
    assert "    HF_HUB_OFFLINE, TRANSFORMERS_OFFLINE not set  <- model.complete did not pass (" in text


def test_config_without_the_nodes_says_the_check_was_not_asked(run_cli, clean_env: Path):
    """`config` asks no node: the variables are not set, and it says so (never a silent default)."""
    (clean_env / "c.yaml").write_text(f"model: {MODEL}\nnodes:\n  - {{name: a, host: 10.0.0.1}}\n")
    code, out, err = run_cli("config", "--cluster", str(clean_env / "c.yaml"), "--json")
    assert code == 0, err
    node = json.loads(out)["nodes"][0]
    assert not set(OFFLINE_VARS) & {e["name"] for e in node["container_env"]}
    assert [x["name"] for x in node["env_not_set"]] == list(OFFLINE_VARS)
    assert node["env_not_set"][0]["why"].startswith("model.complete not checked on a (")
