"""`diagnose` on the outputs operators paste besides logs (nvidia-smi -q, ethtool, ethtool -i,
docker inspect, docker ps JSON lines, ray list/get nodes, ip -j addr): the kind picked, figures as
values, and the knowledge base's verdicts, first; lines it does not know are not recognised."""

import json

import pytest

from spark_tui import diagnose
from tests.helpers import DATA

FORMATS = DATA / "formats"


def analyse(name: str) -> dict:
    return diagnose.analyse((FORMATS / name).read_text())


def test_ethtool_below_the_ports_best_mode_is_named_with_both_speeds():
    r = analyse("ethtool-below-rate-istoreos1293.txt")
    assert r["kind"] == "ethtool" and r["command"] == "ethtool eth0"
    (port,) = r["summary"]["ports"]
    assert (port["speed_mbps"], port["max_supported_mbps"], port["link_detected"]) == (100, 2500, True)
    (f,) = r["findings"]
    assert f["id"] == "link.speed_below_rate" and f["figures"] == {
        "netdev": "eth0",
        "speed_gbps": 0.1,
        "max_gbps": 2.5,
    }
    assert (
        r["verdicts"][0]["level"] == "warn"
        and "eth0 runs at 0.1 Gb/s, the port can do 2.5 Gb/s" in (r["verdicts"][0]["text"])
    )


def test_ethtool_at_the_ports_best_mode_is_ok():
    r = analyse("ethtool-at-rate-aqc111.txt")
    assert r["kind"] == "ethtool" and r["findings"] == []
    assert [v["level"] for v in r["verdicts"]] == ["ok"]


@pytest.mark.parametrize(
    "name, figures",
    [
        (
            "ethtool-i-mlx5-ethq8.txt",
            {"driver": "mlx5_core", "firmware": "14.23.1020 (MT_2420110034)", "bus": "0000:af:00.0"},
        ),
        ("ethtool-i-mlx4-mstflint737.txt", {"netdev": "ens1", "driver": "mlx4_en", "firmware": "2.7.700"}),
    ],
)
def test_ethtool_i_gives_driver_and_firmware(name, figures):
    r = analyse(name)
    assert r["kind"] == "ethtool-i"
    assert {k: r["findings"][0]["figures"][k] for k in figures} == figures


def test_nvidia_smi_q_sections_are_read():
    r = analyse("nvidia-smi-q-gtx780-sysmon12.txt")
    assert r["kind"] == "gpu-q" and r["command"] == "nvidia-smi -q"
    s = r["summary"]
    assert (s["driver_version"], s["cuda_version"], s["attached_gpus"]) == ("450.66", "11.0", 1)
    (gpu,) = s["gpus"]
    assert gpu["bus_id"] == "00000000:01:00.0" and gpu["Product Name"] == "GeForce GTX 780"
    assert gpu["MIG Mode/Current"] == "N/A" and gpu["GPU UUID"].startswith("GPU-a230e637")


def test_ray_nodes_in_both_layouts():
    listed = analyse("ray-list-nodes-ray45644.txt")
    assert listed["kind"] == "ray-nodes"
    assert [(n["node_ip"], n["is_head"], n["state"]) for n in listed["summary"]["nodes"]] == [
        ("127.0.0.1", True, "ALIVE")
    ]
    got = analyse("ray-get-nodes-ray33553.txt")
    assert [(n["node_ip"], n["state"], n["gpus"]) for n in got["summary"]["nodes"]] == [
        ("10.0.25.201", "ALIVE", 0)
    ]
    assert "warn: Ray node 10.0.25.201 has no GPU: start Ray there with the GPU visible" in [
        f"{v['level']}: {v['text']}" for v in got["verdicts"]
    ]


def test_ip_json_addresses_are_values():
    r = analyse("ip-j-addr-lo-this-machine.json")
    assert r["kind"] == "ip-json"
    (lo,) = r["summary"]["interfaces"]
    assert lo["ifname"] == "lo" and "127.0.0.1/8" in lo["addresses"]


def test_a_pasted_docker_error_is_named_first_with_its_figures():
    r = diagnose.analyse((DATA / "failures" / "docker_pull_access_denied.log").read_text())
    assert r["verdicts"][0]["code"] == "docker.pull_access_denied"
    assert r["findings"][0]["figures"] == {"image": "vila-server"}
    json.dumps(r)  # --json prints it as is


def test_a_failure_nobody_knows_is_not_recognised_and_not_squeezed_into_a_near_one():
    text = "INFO starting\nERROR frobnicator: the flux capacitor failed to warm up\n"
    r = diagnose.analyse(text)
    assert r["findings"] == []
    assert r["not_recognised"] == ["ERROR frobnicator: the flux capacitor failed to warm up"]
    assert any(v["level"] == "warn" and "does not recognise" in v["text"] for v in r["verdicts"])
    assert "not recognised (no known failure matches these lines):" in diagnose.as_text(r)


@pytest.mark.cluster
def test_real_docker_outputs_of_a_killed_container(cluster):
    """docker inspect and `docker ps --format '{{json .}}'` of a container killed by SIGKILL, from
    a real Docker engine of the test cluster: exit 137 named, with the container's figures."""
    from tests.cluster import cluster as tc

    node = cluster.nodes[0]
    cluster.docker(node, "rm", "-f", "kb-killed", check=False)
    cluster.docker(node, "run", "-d", "--name", "kb-killed", "--entrypoint", "sleep", tc.IMAGE, "300")
    cluster.docker(node, "kill", "kb-killed")  # SIGKILL: what the OOM killer sends
    try:
        inspect = cluster.docker(node, "inspect", "kb-killed").stdout
        r = diagnose.analyse(inspect)
        assert r["kind"] == "docker-inspect"
        (c,) = r["summary"]["containers"]
        assert (c["name"], c["status"], c["exit_code"], c["oom_killed"]) == (
            "kb-killed",
            "exited",
            137,
            False,
        )
        assert (
            r["verdicts"][0]["code"] == "docker.oom_killed"
            and "exit 137 (SIGKILL)" in r["verdicts"][0]["text"]
        )
        ps = cluster.docker(node, "ps", "-a", "--filter", "name=kb-killed", "--format", "{{json .}}").stdout
        r = diagnose.analyse(ps)
        assert r["kind"] == "docker-ps-json"
        assert [(c["name"], c["exit_code"]) for c in r["summary"]["containers"]] == [("kb-killed", 137)]
        assert r["findings"][0]["id"] == "docker.oom_killed"
    finally:
        cluster.docker(node, "rm", "-f", "kb-killed", check=False)


def test_ethtool_link_down_is_named_for_each_port():
    """A real `ethtool` of two ports without carrier (LKML thread): each is named link.down."""
    r = analyse("ethtool-link-down-tg3-lkml.txt")
    assert r["kind"] == "ethtool"
    assert [(p["netdev"], p["link_detected"], p["speed_mbps"]) for p in r["summary"]["ports"]] == [
        ("eno8303", False, None),
        ("eno8403", False, None),
    ]
    assert [(f["id"], f["figures"]["netdev"]) for f in r["findings"]] == [
        ("link.down", "eno8303"),
        ("link.down", "eno8403"),
    ]
    assert r["verdicts"][0]["level"] == "warn" and r["verdicts"][0]["text"].startswith("eno8303: no link")


def test_ethtool_as_a_user_keeps_the_fields_after_its_refusal():
    """Run without root, ethtool prints 'Cannot get wake-on-lan settings' unindented among the
    fields: the port's link is still read, and no speed is not taken for a slow link."""
    r = analyse("ethtool-no-wol-permission-opennic29.txt")
    assert [(p["netdev"], p["link_detected"]) for p in r["summary"]["ports"]] == [
        ("enp24s0f0", True),
        ("enp24s0f1", True),
    ]
    assert r["findings"] == [] and all(v["level"] == "ok" for v in r["verdicts"])
    assert "no speed in this output" in r["verdicts"][0]["text"]
    ena = analyse("ethtool-no-speed-ena-amzn61.txt")
    assert [(p["netdev"], p["speed_mbps"], p["link_detected"]) for p in ena["summary"]["ports"]] == [
        ("ens3", None, True)
    ]


def test_nvidia_smi_q_of_a_580_driver_with_top_level_sections():
    """`nvidia-smi -q -d MEMORY,PERFORMANCE` of driver 580: 'CUDA Version : Not Found', a
    vGPU section before the GPUs, nested clock-event reasons."""
    r = analyse("nvidia-smi-q-d-memory-perf-580-rtxpro6000-cubecos312.txt")
    assert r["kind"] == "gpu-q"
    s = r["summary"]
    assert (s["driver_version"], s["cuda_version"], s["attached_gpus"]) == ("580.105.06", "Not Found", 4)
    (gpu,) = s["gpus"]
    assert gpu["bus_id"] == "00000000:42:00.0" and gpu["Performance State"] == "P8"
    assert gpu["Clocks Event Reasons Counters/SW Power Capping"] == "1202176 us"
    assert r["verdicts"][0]["level"] == "ok" and "memory not in this output" in r["verdicts"][0]["text"]


@pytest.mark.parametrize(
    "name, code, level",
    [
        ("docker-inspect-exit137-window-sdwebui457.txt", 137, "error"),
        ("docker-inspect-exit0-elided-exporter6.txt", 0, "ok"),
        # cut inside State itself (its Health log): State's own fields are read line by line
        ("docker-inspect-health-log-cut-compose11827.txt", 137, "error"),
    ],
)
def test_a_docker_inspect_pasted_in_part_is_still_read(name, code, level):
    """Pastes of `docker inspect` cut short (a window, an author's '...') are not JSON: each
    container's State object is read on its own; its fields are not 'not recognised' lines."""
    r = analyse(name)
    assert r["kind"] == "docker-inspect"
    (c,) = r["summary"]["containers"]
    assert (c["status"], c["exit_code"], c["oom_killed"]) == ("exited", code, False)
    assert [v["level"] for v in r["verdicts"]] == [level]
    assert "not_recognised" not in r
