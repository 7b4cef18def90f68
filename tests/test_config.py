"""Settings registry, layered resolution with provenance, and the `config` command."""

import itertools
import json
import subprocess
import sys
import textwrap

import pytest

from spark_tui.errors import ConfigError
from spark_tui.settings import docs, registry
from spark_tui.settings.model import Detected, Found
from spark_tui.settings.resolve import Inputs, resolve
from tests.helpers import ROOT

DUO = str(ROOT / "sample_clusters" / "spark-duo.yaml")


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


# --- one registry ----------------------------------------------------------------


def test_readme_table_and_template_match_the_registry():
    readme = (ROOT / "README.md").read_text()
    assert docs.readme_with_table(readme) == readme
    assert (ROOT / "sample_clusters" / "template.yaml").read_text() == docs.template()
    for s in registry.SETTINGS:
        assert f"`{s.yaml_key}`" in readme


def test_every_cluster_setting_has_env_flag_and_yaml_and_parses_from_each():
    from spark_tui.cli.main import build_parser

    parser = build_parser()
    flags = {opt for a in parser._actions for opt in a.option_strings}
    for s in registry.CLUSTER_SETTINGS:
        assert s.env and s.env.startswith("SPARK_TUI_")
        assert s.flag in flags, s.key
    assert len({s.env for s in registry.CLUSTER_SETTINGS}) == len(registry.CLUSTER_SETTINGS)


def test_help_does_not_import_textual_or_asyncssh():
    code = "import sys; from spark_tui.cli.main import main\ntry: main(['--help'])\nexcept SystemExit: pass\nprint(sorted(m for m in sys.modules if m.split('.')[0] in ('textual','asyncssh','docker')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_version(run_cli):
    with pytest.raises(SystemExit) as exc:
        run_cli("--version")
    assert exc.value.code == 0


# --- precedence ---------------------------------------------------------------------

LAYER_ORDER = ["default", "user", "cluster", "env", "flag", "interactive"]


def _inputs_with(tmp_path, layers: dict[str, str]) -> Inputs:
    """Inputs where each named layer requests image=<layer name>."""
    user = (
        write(tmp_path, "user.yaml", f"image: {layers['user']}\n")
        if "user" in layers
        else str(tmp_path / "absent.yaml")
    )
    cluster_text = "nodes:\n  - {name: a, host: 127.0.0.1}\n"
    if "cluster" in layers:
        cluster_text = f"image: {layers['cluster']}\n" + cluster_text
    cluster = write(tmp_path, "cluster.yaml", cluster_text)
    return Inputs(
        cluster_file=cluster,
        user_config=user,
        environ={"SPARK_TUI_IMAGE": layers["env"]} if "env" in layers else {},
        flags={"image": (layers["flag"], "--image")} if "flag" in layers else {},
        interactive={"image": layers["interactive"]} if "interactive" in layers else {},
    )


@pytest.mark.parametrize("low,high", list(itertools.combinations(LAYER_ORDER, 2)))
def test_every_precedence_pair(tmp_path, low, high):
    layers = {name: f"img-{name}" for name in (low, high) if name != "default"}
    config = resolve(_inputs_with(tmp_path, layers))
    value = config.values["image"]
    assert value.value == f"img-{high}"
    assert value.source.layer == high
    if low != "default":
        lost = [(c.value, reason) for c, reason in value.overridden()]
        assert (f"img-{low}", f"overridden by {value.source}") in lost


def test_node_value_beats_cluster_wide_in_same_layer_but_not_a_higher_layer(tmp_path):
    path = write(
        tmp_path,
        "c.yaml",
        """\
        netdev: enp1s0f0np0
        nodes:
          - {name: a, host: 10.0.0.1, netdev: enP2p1s0f1np1}
          - {name: b, host: 10.0.0.2}
        """,
    )
    config = resolve(Inputs(cluster_file=path, user_config=""))
    assert config.node("a")["netdev"] == "enP2p1s0f1np1"
    assert config.node("b")["netdev"] == "enp1s0f0np0"
    config = resolve(Inputs(cluster_file=path, user_config="", flags={"netdev": ("eth9", "--netdev")}))
    a = config.node("a").values["netdev"]
    assert a.value == "eth9" and str(a.source) == "command line --netdev"
    assert any(c.value == "enP2p1s0f1np1" for c, _ in a.overridden())


def test_interactive_edit_per_node(tmp_path):
    config = resolve(
        Inputs(cluster_file=DUO, user_config="", interactive={"nodes.spark-b.netdev": "enP2p1s0f1np1"})
    )
    b = config.node("spark-b").values["netdev"]
    assert b.value == "enP2p1s0f1np1" and b.source.layer == "interactive"
    assert config.node("spark-a")["netdev"] == "enp1s0f1np1"
    assert "NCCL_SOCKET_IFNAME" in {v.name for v in config.node("spark-b").container_env}
    assert config.node("spark-b").env_dict()["NCCL_SOCKET_IFNAME"] == "enP2p1s0f1np1"


def test_env_maps_merge_key_by_key_with_sources(tmp_path):
    path = write(
        tmp_path,
        "c.yaml",
        """\
        env: {A: "1", B: "2"}
        nodes:
          - {name: a, host: 10.0.0.1, env: {B: "3"}}
        """,
    )
    config = resolve(Inputs(cluster_file=path, user_config="", flags={"env": ({"C": "4"}, "--env")}))
    env = config.node("a").values["env"]
    assert env.value == {"A": "1", "B": "3", "C": "4"}
    assert env.item_sources["B"].location.endswith("c.yaml:3:36")
    assert str(env.item_sources["C"]) == "command line --env"
    assert any("B overridden by" in reason for _, reason in env.overridden())


def test_cluster_file_from_user_config_and_env(tmp_path):
    user = write(tmp_path, "user.yaml", f"cluster: {DUO}\n")
    config = resolve(Inputs(user_config=user))
    assert [n.name for n in config.nodes] == ["spark-a", "spark-b"]
    single = str(ROOT / "sample_clusters" / "single-spark.yaml")
    config = resolve(Inputs(user_config=user, environ={"SPARK_TUI_CLUSTER": single}))
    assert [n.name for n in config.nodes] == ["spark"]


# --- provenance and derived values ------------------------------------------------------


def test_provenance_locations(tmp_path):
    config = resolve(Inputs(cluster_file=DUO, user_config="", environ={"SPARK_TUI_VLLM_PORT": "8001"}))
    assert config.values["image"].source.location == f"{DUO}:5:8"
    assert str(config.values["vllm_port"].source) == "environment SPARK_TUI_VLLM_PORT"
    assert config.node("spark-b").values["data_ip"].source.location == f"{DUO}:19:14"
    assert str(config.values["pipeline_parallel_size"].source) == "built-in default"


def test_derived_container_env_names_its_origin():
    config = resolve(Inputs(cluster_file=DUO, user_config=""))
    env = {v.name: v for v in config.node("spark-b").container_env}
    assert env["VLLM_HOST_IP"].value == "192.168.177.12"
    assert "data_ip" in env["VLLM_HOST_IP"].derived_from and ":19:14" in env["VLLM_HOST_IP"].derived_from
    for name in (
        "NCCL_SOCKET_IFNAME",
        "GLOO_SOCKET_IFNAME",
        "TP_SOCKET_IFNAME",
        "UCX_NET_DEVICES",
        "OMPI_MCA_btl_tcp_if_include",
    ):
        assert env[name].value == "enp1s0f1np1"
    assert env["NCCL_IB_HCA"].value == "rocep1s0f1,roceP2p1s0f1"
    assert env["NCCL_IB_DISABLE"].value == "0"
    assert env["MASTER_ADDR"].value == "192.168.177.11"
    assert env["RAY_NODE_IP_ADDRESS"].value == "192.168.177.12"
    assert env["NCCL_DEBUG"].value == "INFO"


def test_user_env_overriding_a_derived_variable_is_shown(tmp_path):
    config = resolve(
        Inputs(cluster_file=DUO, user_config="", flags={"env": ({"NCCL_IB_HCA": "mlx5_0"}, "--env")})
    )
    node = config.node("spark-a")
    derived = next(
        v for v in node.container_env if v.name == "NCCL_IB_HCA" and v.derived_from.startswith("hca")
    )
    assert str(derived.overridden_by) == "command line --env"
    assert node.env_dict()["NCCL_IB_HCA"] == "mlx5_0"


def test_no_cluster_file_means_this_machine(tmp_path):
    config = resolve(Inputs(user_config=""))
    assert len(config.nodes) == 1 and config.nodes[0].local and config.nodes[0].is_head


# --- the guards against silent failure ----------------------------------------------------


def test_image_name_lookalike_and_flag_override(run_cli, monkeypatch):
    monkeypatch.setenv("IMAGE_NAME", "x")
    code, out, err = run_cli("config", "--cluster", DUO)
    assert code == 0 and err == ""
    first = out.splitlines()[:3]
    assert first[0] == "WARNINGS" and "IMAGE_NAME=x" in first[1] and "`image`" in first[1]
    assert "--image VALUE" in first[1] and "SPARK_TUI_IMAGE" in first[1]
    assert any(
        line.split()[:2] == ["image", "vllm-node:latest"] and f"{DUO}:5:8" in line
        for line in out.splitlines()
    )
    code, out, _ = run_cli("config", "--cluster", DUO, "--image", "y")
    image_line = next(line for line in out.splitlines() if line.split()[:1] == ["image"])
    assert image_line.split()[1] == "y" and "command line --image" in image_line
    assert (
        f"cluster.image: vllm-node:latest (cluster file {DUO}:5:8): overridden by command line --image" in out
    )


@pytest.mark.parametrize("name,key", sorted(registry.LOOKALIKE_ENV.items()))
def test_each_lookalike_variable_warns(name, key):
    config = resolve(Inputs(user_config="", environ={name: "v"}))
    assert len(config.warnings) == 1 and config.warnings[0].startswith(f"{name}=")
    assert f"`{key}`" in config.warnings[0]


def test_config_json(run_cli, monkeypatch):
    monkeypatch.setenv("CONTAINER_NAME", "other")
    code, out, _ = run_cli("config", "--cluster", DUO, "--json", "--container-name", "mine")
    data = json.loads(out)
    assert any("CONTAINER_NAME" in w for w in data["warnings"])
    row = next(r for r in data["cluster"] if r["key"] == "container_name")
    assert row["effective"] == "mine" and row["source"] == "command line --container-name"
    assert row["not_applied"] and "overridden by command line --container-name" in row["not_applied"][0]
    assert [n["name"] for n in data["nodes"]] == ["spark-a", "spark-b"]


def test_secrets_are_masked_everywhere(run_cli, monkeypatch):
    monkeypatch.setenv("SPARK_TUI_HF_TOKEN", "hf_envsecret123")
    monkeypatch.setenv("HF_TOKEN", "hf_lookalike456")
    for args in (
        ("config",),
        ("config", "--json"),
        ("config", "--hf-token", "hf_flagsecret789", "-e", "HF_TOKEN=hf_map000"),
    ):
        code, out, err = run_cli(*args)
        assert code == 0
        for secret in ("hf_envsecret123", "hf_lookalike456", "hf_flagsecret789", "hf_map000"):
            assert secret not in out + err
        assert "***" in out


def test_repeated_flag_with_different_values_is_an_error(run_cli):
    code, out, err = run_cli("--image", "a", "config", "--image", "b")
    assert code == 2 and out == ""
    assert (
        err.strip() == "spark-tui: error: --image: given 2 times with different values (a, b); give it once"
    )


def test_flag_before_subcommand_is_kept(run_cli):
    code, out, _ = run_cli("--image", "a", "config")
    assert code == 0 and any(line.split()[:2] == ["image", "a"] for line in out.splitlines())


# --- bad input: one clear line, exit 2 ----------------------------------------------------

NODES = "nodes:\n  - {name: a, host: 10.0.0.1}\n"
BAD_FILES = [
    ("unknown key", "imag: x\n" + NODES, ":1:1: unknown setting 'imag'; did you mean 'image'?"),
    (
        "unknown node key",
        "nodes:\n  - {name: a, host: 10.0.0.1, hots: b}\n",
        ":2:31: unknown node setting 'hots'; did you mean 'host'?",
    ),
    ("port not a number", "port: abc\n" + NODES, ":1:7: port: expected an integer, got str 'abc'"),
    ("tp zero", "tensor_parallel_size: 0\n" + NODES, ":1:23: tensor_parallel_size: 0 is below the minimum 1"),
    ("port too big", "vllm_port: 70000\n" + NODES, "vllm_port: 70000 is above the maximum 65535"),
    ("bool as string", "privileged: maybe\n" + NODES, "privileged: expected true or false"),
    ("bad executor", "executor: mpi\n" + NODES, "executor: 'mpi' is not one of solo, ray, native"),
    (
        "duplicate nodes",
        "nodes:\n  - {name: a, host: 10.0.0.1}\n  - {name: a, host: 10.0.0.2}\n",
        ":3:12: duplicate node name 'a'",
    ),
    (
        "bad data ip",
        "nodes:\n  - {name: a, host: 10.0.0.1, data_ip: 10.0.0.300}\n",
        ":2:40: data_ip: '10.0.0.300' is not an IPv4 address",
    ),
    ("bad host ip", "nodes:\n  - {name: a, host: 999.1.1.1}\n", "host: '999.1.1.1' is not an IPv4 address"),
    ("host with shell", "nodes:\n  - {name: a, host: 'a;rm -rf /'}\n", "is not a host name or address"),
    ("yaml syntax", "image: [x\n" + NODES, "YAML syntax error"),
    ("tab indentation", "nodes:\n\t- name: a\n", "YAML syntax error"),
    ("duplicate key", "image: a\nimage: b\n" + NODES, ":2:1: duplicate key 'image' (first set on line 1)"),
    ("top level list", "- a\n- b\n", ":1:1: the top level must be a mapping"),
    ("no nodes", "image: x\n", "no `nodes:` list"),
    ("nodes not a list", "nodes: a\n", ":1:8: `nodes` must be a non-empty list"),
    ("node not a mapping", "nodes:\n  - a\n", ":2:5: each node must be a mapping"),
    ("node missing host", "nodes:\n  - {name: a}\n", ":2:5: node 1 has no 'host'"),
    ("head not a node", "head: z\n" + NODES, ":1:7: head 'z' is not a node name (a)"),
    (
        "duplicate data ip",
        "nodes:\n  - {name: a, host: 10.0.0.1}\n  - {name: b, host: 10.0.0.1}\n",
        "data_ip 10.0.0.1 is already used by node 'a'",
    ),
    (
        "yaml alias bomb",
        "a: &a [x, x]\nb: &b [*a, *a]\n" + NODES,
        ":1:4: YAML anchors and aliases are not allowed",
    ),
    ("deep nesting", "env: " + "[" * 60 + "]" * 60 + "\n" + NODES, "nesting is deeper than 20 levels"),
    ("env not a map", "env: [a]\n" + NODES, "env: expected a mapping of NAME: value"),
    ("env bad name", "env: {'A-B': 1}\n" + NODES, "'A-B' is not a valid environment variable name"),
    ("shm size", "shm_size: lots\n" + NODES, "shm_size: 'lots' is not a size"),
    ("bad container name", "container_name: x\n" + NODES, "container_name: 'x' is not valid"),
    (
        "user key in cluster file",
        "cluster: other.yaml\n" + NODES,
        "'cluster' can only be set in the user config",
    ),
    (
        "python tag",
        "image: !!python/object/apply:os.system [id]\n" + NODES,
        ":1:8: YAML tag !!python/object/apply:os.system is not allowed",
    ),
    ("timeouts bad", "timeouts:\n  ready: soon\n" + NODES, ":2:10: timeouts.ready: expected a number"),
    (
        "unknown timeout",
        "timeouts:\n  raedy: 3\n" + NODES,
        "unknown setting 'timeouts.raedy'; did you mean 'timeouts.ready'?",
    ),
]


@pytest.mark.parametrize("text,expected", [(t, e) for _, t, e in BAD_FILES], ids=[n for n, _, _ in BAD_FILES])
def test_bad_cluster_file(run_cli, clean_env, text, expected):
    path = clean_env / "bad.yaml"
    path.write_text(text)
    code, out, err = run_cli("config", "--cluster", str(path))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"spark-tui: error: {path}")
    assert expected in err


BAD_RAW = [
    ("not utf-8", b"image: caf\xe9\n" + NODES.encode(), ":1:11: not UTF-8 (byte 0xe9)"),
    ("nul byte", b"image: a\x00\n", ":1: NUL byte in file"),
    ("huge file", b"# " + b"x" * (2 << 20) + b"\n", "larger than 1024 KiB"),
]


@pytest.mark.parametrize("raw,expected", [(r, e) for _, r, e in BAD_RAW], ids=[n for n, _, _ in BAD_RAW])
def test_bad_cluster_bytes(run_cli, clean_env, raw, expected):
    path = clean_env / "bad.yaml"
    path.write_bytes(raw)
    code, out, err = run_cli("config", "--cluster", str(path))
    assert code == 2 and len(err.strip().splitlines()) == 1 and expected in err, err


BAD_ARGS = [
    (("--port", "abc", "config"), {}, "--port: expected an integer, got 'abc'"),
    (("config", "--tensor-parallel-size", "0"), {}, "--tensor-parallel-size: 0 is below the minimum 1"),
    (("config", "--executor", "mpi"), {}, "--executor: 'mpi' is not one of solo, ray, native"),
    (("config", "-e", "NOEQUALS"), {}, "-e: expected NAME=VALUE"),
    (
        ("config", "--cluster", "/nonexistent/c.yaml"),
        {},
        "--cluster: cluster file /nonexistent/c.yaml: no such file",
    ),
    (("config", "--cluster", "/"), {}, "/: is a directory"),
    (("config", "--no-such-flag"), {}, "command line: unrecognized arguments: --no-such-flag"),
    (
        ("config",),
        {"SPARK_TUI_IMAGEE": "x"},
        "SPARK_TUI_IMAGEE: environment variable matches no spark-tui setting; did you mean SPARK_TUI_IMAGE?",
    ),
    (("config",), {"SPARK_TUI_VLLM_PORT": "http"}, "SPARK_TUI_VLLM_PORT: expected an integer, got 'http'"),
    (("config",), {"SPARK_TUI_PRIVILEGED": "perhaps"}, "SPARK_TUI_PRIVILEGED: expected true or false"),
    (
        ("config",),
        {"SPARK_TUI_CLUSTER": "/nonexistent/x.yaml"},
        "environment SPARK_TUI_CLUSTER: cluster file /nonexistent/x.yaml: no such file",
    ),
    (("config", "--vllm-args", "--x 'unclosed"), {}, "--vllm-args: cannot split arguments"),
]


@pytest.mark.parametrize("argv,env,expected", BAD_ARGS)
def test_bad_flags_and_environment(run_cli, monkeypatch, argv, env, expected):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    code, out, err = run_cli(*argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert expected in err, err


def test_bad_user_config_names_the_file(run_cli, clean_env):
    cfg = clean_env / "home" / ".config" / "spark-tui"
    cfg.mkdir(parents=True)
    (cfg / "config.yaml").write_text("theme: dark\nrefresh_interval: fast\n")
    code, _, err = run_cli("config")
    assert code == 2 and f"{cfg / 'config.yaml'}:2:19: refresh_interval: expected a number" in err
    (cfg / "config.yaml").write_text(NODES)
    code, _, err = run_cli("config")
    assert code == 2 and "`nodes` belongs in a cluster file" in err


def test_no_traceback_from_the_real_command(clean_env):
    bad = clean_env / "bad.yaml"
    bad.write_bytes(b"\xff\xfe")
    proc = subprocess.run(
        [sys.executable, "-m", "spark_tui", "config", "--cluster", str(bad)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1


def test_info_lists_paths(run_cli, clean_env):
    code, out, _ = run_cli("info", "--cluster", DUO)
    assert code == 0
    assert str(clean_env / "home" / ".config" / "spark-tui" / "config.yaml") in out
    assert DUO in out and "known_hosts (spark-a)" in out and "themes (user)" in out


def test_sample_clusters_resolve():
    for name in ("spark-duo.yaml", "single-spark.yaml"):
        config = resolve(Inputs(cluster_file=str(ROOT / "sample_clusters" / name), user_config=""))
        assert config.nodes and config.head
    with pytest.raises(ConfigError, match="no `nodes:` list"):
        resolve(Inputs(cluster_file=str(ROOT / "sample_clusters" / "template.yaml"), user_config=""))


@pytest.mark.parametrize("high", ["user", "cluster", "env", "flag", "interactive"])
def test_detected_values_lose_to_every_configured_layer(tmp_path, high):
    user = write(tmp_path, "user.yaml", "netdev: eth-user\n") if high == "user" else ""
    node_line = "  - {name: a, host: 10.0.0.1" + (", netdev: eth-cluster}" if high == "cluster" else "}")
    cluster = write(tmp_path, "c.yaml", "nodes:\n" + node_line + "\n")
    inputs = Inputs(
        cluster_file=cluster,
        user_config=user,
        environ={"SPARK_TUI_NETDEV": "eth-env"} if high == "env" else {},
        flags={"netdev": ("eth-flag", "--netdev")} if high == "flag" else {},
        interactive={"nodes.a.netdev": "eth-interactive"} if high == "interactive" else {},
        detected={"a": Detected(netdev=Found("eth-detected", "on a: the interface holding 10.0.0.1"))},
    )
    value = resolve(inputs).node("a").values["netdev"]
    assert value.value == f"eth-{high}" and value.source.layer == high
    assert any(c.value == "eth-detected" and c.source.layer == "detected" for c, _ in value.overridden())
    alone = (
        resolve(
            Inputs(
                cluster_file=cluster
                if high != "cluster"
                else write(tmp_path, "d.yaml", "nodes:\n  - {name: a, host: 10.0.0.1}\n"),
                user_config="",
                detected=inputs.detected,
            )
        )
        .node("a")
        .values["netdev"]
    )
    assert (
        alone.value == "eth-detected" and str(alone.source) == "detected on a: the interface holding 10.0.0.1"
    )


@pytest.mark.parametrize(
    "argv, source",
    [
        (("config", "--keys", "nosuch=x"), "command line --keys: keys: no binding with id 'nosuch'"),
        (("--theme", "nosuch", "config"), "command line --theme: no theme 'nosuch'"),
        (("plan", "--theme", "nosuch"), "no theme 'nosuch'"),
    ],
)
def test_every_command_validates_keys_and_theme(run_cli, argv, source):
    code, out, err = run_cli(*argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and source in err, err
