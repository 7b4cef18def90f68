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
