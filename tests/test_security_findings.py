"""Issue 23's findings about secrets, probes, host keys, launch answers and the image probe: each
test plays the attack on the namespace test cluster (real sshd, real dockerd) and shows it fails.

Attackers (SECURITY.md): the author of an image on a node, a host answering on a node's SSH
address, an unprivileged user on a shared node (GPU process names), a compromised node.
"""

import json

import pytest

from tests.cluster import cluster as tc

TOKEN = "hf_ConfigTokenAbcdef123456"


# --- finding 3: every --json output goes through the redactor -------------------------------------


@pytest.mark.cluster
def test_status_json_masks_the_token_and_secret_named_env_of_own_containers(cluster, tmp_path, run_cli):
    """Spark-tui's own container holds HF_TOKEN and other secret-named variables (one with a value
    the configuration no longer knows): `status --json` shows the names, never the values."""
    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    old_secret = "s3cr3t-not-in-this-config"
    cluster.docker(
        cluster.nodes[0],
        "run",
        "-d",
        "--name",
        "vllm_node",
        "--label",
        "spark-tui.cluster=spark",
        "-e",
        f"HF_TOKEN={TOKEN}",
        "-e",
        f"WANDB_API_KEY={old_secret}",
        "-e",
        f"NOTE=uses {TOKEN} inside",
        "--entrypoint",
        "sleep",
        tc.IMAGE,
        "300",
    )
    code, out, err = run_cli("status", "--cluster", path, "--hf-token", TOKEN, "--json")
    assert TOKEN not in out + err and old_secret not in out + err
    data = json.loads(out)
    own = next(c for n in data["nodes"] for c in n["containers"] if c["name"] == "vllm_node")
    assert "HF_TOKEN=***" in own["env"] and "WANDB_API_KEY=***" in own["env"]
    assert "NOTE=uses *** inside" in own["env"]  # a value holding the configured token: masked too


# --- finding 13: the image-facts cache takes only image IDs as names and only typed facts ---------


@pytest.mark.parametrize(
    "image_id", ["../../escaped", "sha256:../../../escaped", "sha256:" + "a" * 63, "sha256:" + "A" * 64, ""]
)
def test_facts_cache_refuses_an_image_id_that_is_not_a_sha256(tmp_path, image_id):
    """The ID comes from a node's engine: `../../x` wrote outside the cache directory."""
    from spark_tui.core.image_facts import FactsCache, ImageFacts

    cache = FactsCache(tmp_path / "a" / "b" / "images")
    cache.put(ImageFacts(image_id, vllm="0.12.0"))
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written == [] and cache.get(image_id) is None


def test_facts_cache_refuses_cached_facts_of_the_wrong_type(tmp_path):
    from spark_tui.core.image_facts import FactsCache, ImageFacts

    good = "sha256:" + "ab" * 32
    cache = FactsCache(tmp_path / "images")
    cache.put(ImageFacts(good, vllm="0.12.0", archs=["Qwen3ForCausalLM"], ray=True))
    assert cache.get(good).archs == ["Qwen3ForCausalLM"]
    assert (tmp_path / "images").stat().st_mode & 0o777 == 0o700
    file = next((tmp_path / "images").glob("*.json"))
    base = json.loads(file.read_text())
    for bad in (
        {"archs": "Qwen3ForCausalLM"},  # a string: `arch in archs` would match substrings
        {"archs": [1, 2]},
        {"vllm": 12},
        {"ray": "yes"},
        {"notes": "x"},
        {"entrypoint": "sh -c x"},
        {"image_id": "sha256:" + "cd" * 32},  # facts of another image
    ):
        file.write_text(json.dumps(base | bad))
        assert cache.get(good) is None, bad
    file.write_text(json.dumps([base]))
    assert cache.get(good) is None


def test_every_image_facts_field_has_a_cache_type_check():
    """A field added to ImageFacts without its check would make every cached file unreadable."""
    import dataclasses

    from spark_tui.core.image_facts import _FIELD_OK, ImageFacts

    assert set(_FIELD_OK) == {f.name for f in dataclasses.fields(ImageFacts)}
