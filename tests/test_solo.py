"""Executor solo: one node runs `vllm serve` alone. The executor follows from the node count with
its provenance; a count the asked executor cannot run is one line naming where it was asked."""

import json
import shlex

import pytest

from spark_tui.core.launch import plan
from spark_tui.settings.resolve import Inputs, resolve

ONE_SSH = "image: img\nmodel: org/m\nnodes:\n  - {name: solo1, host: spark-a.lan}\n"
TWO = "nodes:\n  - {name: a, host: 10.0.0.1}\n  - {name: b, host: 10.0.0.2}\n"


def _config(text: str | None, tmp_path, **flags):
    path = None
    if text is not None:
        path = tmp_path / "c.yaml"
        path.write_text(text)
    return resolve(
        Inputs(
            cluster_file=str(path) if path else None,
            user_config="",
            flags={k: (v, f"--{k.replace('_', '-')}") for k, v in flags.items()},
        )
    )


def test_executor_is_derived_from_the_node_count_with_its_provenance(tmp_path):
    solo = _config(None, tmp_path)  # no cluster file: this machine, one node
    assert solo["executor"] == "solo"
    assert solo.values["executor"].source.layer == "default"
    assert "derived: 1 node(s)" in str(solo.values["executor"].source)
    duo = _config(TWO, tmp_path)
    assert duo["executor"] == "ray" and "derived: 2 node(s)" in str(duo.values["executor"].source)


def test_config_command_shows_solo_and_where_it_came_from(run_cli):
    code, out, err = run_cli("config", "--json")
    assert code == 0, err
    row = next(r for r in json.loads(out)["cluster"] if r["key"] == "executor")
    assert row["effective"] == "solo" and "derived: 1 node(s)" in row["source"], row


@pytest.mark.parametrize(
    "argv, env, file_text, where, words",
    [
        (("--executor", "ray"), {}, None, "--executor", "executor ray spans two or more nodes"),
        ((), {"SPARK_TUI_EXECUTOR": "native"}, None, "SPARK_TUI_EXECUTOR", "executor native spans"),
        ((), {}, "executor: solo\n" + TWO, "c.yaml:1:11", "executor solo runs `vllm serve` on one node"),
        (("--executor", "solo"), {}, TWO, "--executor", "but this cluster has 2 (a, b)"),
    ],
)
def test_an_executor_the_node_count_cannot_run_is_refused_naming_its_source(
    run_cli, clean_env, monkeypatch, argv, env, file_text, where, words
):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    cluster = []
    if file_text is not None:
        (clean_env / "c.yaml").write_text(file_text)
        cluster = ["--cluster", str(clean_env / "c.yaml")]
    code, out, err = run_cli("config", *cluster, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    source = str(clean_env / where) if where.startswith("c.yaml") else where  # file:line:column
    assert lines[0].startswith(f"spark-tui: error: {source}: ") and words in lines[0], lines[0]


def _no_empty_address(spec: plan.ContainerSpec) -> None:
    """Nothing in the spec is an empty value or a multi-node address flag."""
    argv = shlex.split(spec.docker_run())
    assert "" not in argv and "''" not in spec.docker_run(), spec.docker_run()
    assert "" not in spec.command
    assert all(e.value for e in spec.env), [(e.name, e.value) for e in spec.env]
    assert not any(e.endswith("=") for e in argv), argv
    for flag in ("--node-ip-address", "--master-addr", "--master-port", "--nnodes", "--address"):
        assert not any(a.startswith(flag) for a in spec.command), spec.command
    assert not {"MASTER_ADDR", "MASTER_PORT", "NCCL_IB_DISABLE"} & {e.name for e in spec.env}


@pytest.mark.parametrize("text", [None, ONE_SSH], ids=["no cluster file", "one SSH node, no data_ip"])
def test_one_node_plan_is_vllm_serve_alone_with_no_empty_address(tmp_path, text):
    config = _config(text, tmp_path, model="org/m")
    (spec,) = plan.build(config)
    assert spec.entrypoint == ["vllm"] and spec.cmd[0] == "serve" and spec.cmd[1] == "org/m"
    assert "--distributed-executor-backend" not in spec.command and "ray" not in spec.command
    assert spec.labels["spark-tui.executor"] == "solo"
    _no_empty_address(spec)
    text_plan = plan.as_text([spec], config)
    assert "''" not in text_plan and '""' not in text_plan and "ray start" not in text_plan


def test_plan_command_on_one_node_shows_no_empty_address(run_cli, clean_env):
    """The CLI's plan (text and JSON) for the embedded default: nothing empty anywhere."""
    code, out, err = run_cli("plan", "--offline", "--model", "org/m", "--json")
    assert code == 0, err
    (container,) = json.loads(out)["containers"]

    def strings(value):
        if isinstance(value, dict):
            for v in value.values():
                yield from strings(v)
        elif isinstance(value, list):
            for v in value:
                yield from strings(v)
        elif isinstance(value, str):
            yield value

    assert "" not in list(strings(container["command"])) + [e["value"] for e in container["env"]]
    code, out, err = run_cli("plan", "--offline", "--model", "org/m")
    assert code == 0 and "''" not in out and "--master" not in out and "--node-ip-address" not in out, out


def test_master_port_asked_for_under_solo_is_a_warning_not_silently_dropped(tmp_path):
    config = _config(None, tmp_path, master_port=29600)
    assert any("master_port 29600" in w and "not used" in w and "--master-port" in w for w in config.warnings)
    assert not _config(None, tmp_path).warnings


def test_two_nodes_keep_their_multi_node_plan(tmp_path):
    config = _config(TWO, tmp_path)
    head, worker = plan.build(config)
    assert head.command[:2] == ["ray", "start"] and "MASTER_ADDR" in {e.name for e in worker.env}
