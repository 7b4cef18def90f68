"""`spark-tui plan`: the container spec per node, derived from the resolved config."""

import json
import shlex

from spark_tui.core.launch import plan
from spark_tui.settings.resolve import Inputs, resolve
from tests.helpers import ROOT

DUO = str(ROOT / "sample_clusters" / "spark-duo.yaml")


def specs(**flags):
    config = resolve(
        Inputs(cluster_file=DUO, user_config="", flags={k: (v, f"--{k}") for k, v in flags.items()})
    )
    return config, plan.build(config)


def test_ray_plan_roles_labels_and_commands():
    config, (head, worker) = specs()
    assert (head.role, worker.role) == ("head", "worker")
    assert head.labels["spark-tui.cluster"] == "spark-duo" and head.labels["spark-tui.role"] == "head"
    assert (
        head.labels["spark-tui.config-hash"]
        == worker.labels["spark-tui.config-hash"]
        == plan.config_hash(config)
    )
    assert head.command[:4] == ["ray", "start", "--block", "--head"] and "192.168.177.11" in head.command
    assert (
        worker.command[:3] == ["ray", "start", "--block"]
        and "--address=192.168.177.11:29501" in worker.command
    )
    env = {e.name: e for e in worker.env}
    assert (
        env["VLLM_HOST_IP"].value == "192.168.177.12"
        and "spark-duo.yaml:19:14" in env["VLLM_HOST_IP"].derived_from
    )
    assert (head.network, head.ipc, head.privileged, head.gpus) == ("host", "host", True, "auto")


def test_native_plan_ranks():
    _, (head, worker) = specs(executor="native")
    assert (
        "--node-rank" in head.command
        and head.command[head.command.index("--node-rank") + 1] == "0"
        and "--headless" not in head.command
    )
    assert (
        worker.command[worker.command.index("--node-rank") + 1] == "1" and worker.command[-1] == "--headless"
    )
    assert worker.command[worker.command.index("--master-addr") + 1] == "192.168.177.11"
    assert "--distributed-executor-backend" not in head.command


def test_non_privileged_set_and_docker_run_line():
    _, (head, _) = specs(privileged=False)
    line = head.docker_run()
    argv = shlex.split(line)
    assert (
        "--privileged" not in argv
        and ["--cap-add", "IPC_LOCK"] == argv[argv.index("--cap-add") : argv.index("--cap-add") + 2]
    )
    assert (
        "--device" in argv
        and "/dev/infiniband" in argv
        and "--memory=110g" in argv
        and "--pids-limit=4096" in argv
    )
    assert "nofile=1048576:1048576" in argv and argv[argv.index("--gpus") + 1] == "all"
    # The command runs as the container's ENTRYPOINT + CMD, whatever ENTRYPOINT the image has.
    image_at = argv.index("vllm-node:latest")
    assert (
        argv[image_at - 2 : image_at] == ["--entrypoint", "ray"] and argv[image_at + 1 :] == head.command[1:]
    )


def test_a_changed_setting_changes_the_hash():
    a, _ = specs()
    b, _ = specs(image="other:tag")
    assert plan.config_hash(a) != plan.config_hash(b)


def test_the_hash_counts_container_settings_only():
    """A setting that shapes no container (how a node is reached, the cockpit's, check's) never
    makes a running container look drifted, cluster-wide or in a node's entry; every container
    setting does change the hash. The roles come from the registry alone."""
    import dataclasses

    from spark_tui.settings.registry import ROLES, SETTINGS

    config, _ = specs()
    base = plan.config_hash(config)
    assert {s.role for s in SETTINGS} == set(ROLES)
    ignored = counted = 0
    for key, value in config.values.items():
        changed = dataclasses.replace(value, value=("changed", key))
        other = dataclasses.replace(config, values={**config.values, key: changed})
        if value.setting.secret or value.setting.role != "container":
            assert plan.config_hash(other) == base, key
            ignored += 1
        else:
            assert plan.config_hash(other) != base, key
            counted += 1
    for index, node in enumerate(config.nodes):
        for key, value in node.values.items():
            changed = dataclasses.replace(value, value=("changed", key))
            moved = dataclasses.replace(node, values={**node.values, key: changed})
            nodes = config.nodes[:index] + [moved] + config.nodes[index + 1 :]
            other = dataclasses.replace(config, nodes=nodes)
            if value.setting.role != "container":
                assert plan.config_hash(other) == base, (node.name, key)
                ignored += 1
            else:
                assert plan.config_hash(other) != base, (node.name, key)
                counted += 1
    every_cluster_setting = len(config.values)
    every_node_setting = sum(len(n.values) for n in config.nodes)
    assert ignored + counted == every_cluster_setting + every_node_setting
    cockpit = [s.key for s in SETTINGS if s.role == "cockpit"]
    connection = [s.key for s in SETTINGS if s.role == "connection"]
    assert "theme" in cockpit and "connect_timeout" in connection and ignored > len(cockpit) + len(connection)


def test_plan_masks_secrets(run_cli):
    for extra in ((), ("--json",)):
        code, out, err = run_cli(
            "plan", "--offline", "--cluster", DUO, "--hf-token", "hf_supersecret", *extra
        )
        assert code == 0 and "hf_supersecret" not in out + err and "HF_TOKEN=***" in out


def test_plan_json_and_shell_metacharacters_stay_literal(run_cli):
    hostile = "$(touch /tmp/canary); `id`"
    code, out, _ = run_cli(
        "plan",
        "--offline",
        "--cluster",
        DUO,
        "--json",
        "--vllm-args",
        shlex.quote(hostile),
        "--executor",
        "native",
    )
    data = json.loads(out)
    worker = data["containers"][1]
    assert hostile in worker["command"]
    assert shlex.split(worker["docker_run"])[-len(worker["cmd"]) :] == worker["cmd"] == worker["command"][1:]


def test_offline_plan_shows_unexpanded_home_and_asks_no_node(run_cli):
    """The sample cluster's addresses are never contacted: --offline plans from the files alone."""
    code, out, err = run_cli("plan", "--offline", "--cluster", DUO)
    assert code == 0
    assert (
        "~/.cache/huggingface: ~ NOT expanded (spark-a not reached: its home is unknown); up refuses it"
        in out
    )
    assert "not asked (--offline)" in err
