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


# --- f17: real pastes the readers had never seen (each with its thread in a .source) --------


@pytest.mark.parametrize(
    "name, top, gpu",
    [
        # old drivers: no CUDA Version line (390, 396), an Azure bus id, a root prompt with `-a`
        (
            "f17_gpu-q-390-8gpus-no-cuda-line-nvidiadocker756.txt",
            ("390.48", None, 8),
            {"bus_id": "00000000:04:00.0", "name": "GeForce GTX 1080 Ti"},
        ),
        (
            "f17_gpu-q-k80-396-azure-busid-nvidiadocker816.txt",
            ("396.37", None, 1),
            {"bus_id": "3E3F8E05:00:00.0", "name": "Tesla K80"},
        ),
        (
            "f17_gpu-q-gtx960m-410-netdata4892.txt",
            ("410.72", "10.0", 1),
            {"bus_id": "00000000:01:00.0", "name": "GeForce GTX 960M"},
        ),
        (
            "f17_gpu-q-a100-470-prompt-cudalibsamples104.txt",
            ("470.103.01", "11.4", 1),
            {"bus_id": "00000000:94:00.0", "name": "NVIDIA A100-SXM4-80GB", "MIG Mode/Current": "Disabled"},
        ),
        # `-d TEMPERATURE` after a bare command line: the temperatures as numbers
        (
            "f17_gpu-q-d-temperature-465-thermald300.txt",
            ("465.27", "11.3", 1),
            {
                "temperature_c": 56.0,
                "slowdown_temp_c": 97.0,
                "shutdown_temp_c": 102.0,
                "max_operating_temp_c": 57.0,
            },
        ),
        # f18: `-d PERFORMANCE` of 495 after a bare command line: Idle active, no slowdown
        (
            "f18_gpu-q-d-performance-495-idle-active-mangohud636.txt",
            ("495.44", "11.5", 1),
            {"bus_id": "00000000:0E:00.0", "Performance State": "P0", "clock_event_reasons_active": ["Idle"]},
        ),
        # the whole output re-indented by 4 spaces (a markdown indented block), command line included
        (
            "f18_gpu-q-d-performance-indented-465-nvsettings67.txt",
            ("465.27", "11.3", 1),
            {
                "bus_id": "00000000:2D:00.0",
                "Clocks Throttle Reasons/HW Thermal Slowdown": "Not Active",
                "clock_event_reasons_active": [],
            },
        ),
    ],
)
def test_nvidia_smi_q_of_any_driver_gives_its_figures_as_values(name, top, gpu):
    r = analyse(name)
    assert r["kind"] == "gpu-q"
    s = r["summary"]
    assert (s["driver_version"], s["cuda_version"], s["attached_gpus"]) == top
    assert {k: s["gpus"][0][k] for k in gpu} == gpu
    assert r["verdicts"][0]["level"] == "ok" and r["verdicts"][0]["text"].startswith(
        f"{s['gpus'][0]['name'] or 'GPU'} at {s['gpus'][0]['bus_id']}: driver {top[0]}"
    )


def test_nvidia_smi_q_of_a_gb10_says_its_memory_is_unified_and_reads_the_gh200_beside_it():
    """DGX Spark's `nvidia-smi -q` (580, bus 0000000F:01:00.0) and a GH200, elided by the author."""
    r = analyse("f17_gpu-q-gb10-gh200-elided-nomad87.txt")
    assert r["kind"] == "gpu-q" and r["command"] == "nvidia-smi -q"
    assert [(g["bus_id"], g["name"]) for g in r["summary"]["gpus"]] == [
        ("0000000F:01:00.0", "NVIDIA GB10"),
        ("00000000:DD:00.0", "NVIDIA GH200 480GB"),
    ]
    assert "memory fields N/A (GB10: unified memory" in r["verdicts"][0]["text"]


def test_a_section_of_nvidia_smi_q_without_its_header_warns_of_remapped_rows_pending():
    """Only the Remapped Rows section was pasted: a GPU that needs a reset to remap its rows."""
    r = analyse("f17_gpu-q-remapped-rows-pending-gpud80.txt")
    assert r["kind"] == "gpu-q"
    (gpu,) = r["summary"]["gpus"]
    assert (gpu["remapped_rows_pending"], gpu["remapped_rows_uncorrectable"]) == (True, 4)
    assert r["verdicts"][0]["level"] == "warn" and "row remapping pending" in r["verdicts"][0]["text"]
    assert "not_recognised" not in r  # `Uncorrectable Error : 4` is a field the reader read, not a log line


@pytest.mark.parametrize(
    "name, figures",
    [
        (
            "f17_gpu-q-window-retired-pages-dcgmexporter16.txt",
            {
                "retired_pages_pending": False,
                "retired_pages_double_bit": 0,
                "temperature_c": 24.0,
                "power_limit_w": 250.0,
            },
        ),
        # a window that starts inside Temperature: the bare key is still the slowdown temperature
        (
            "f17_gpu-q-window-temp-power-k8sdeviceplugin331.txt",
            {"slowdown_temp_c": 93.0, "power_draw_w": 60.06, "power_limit_w": 250.0},
        ),
        (
            "f17_gpu-q-throttle-reasons-grep-kubeflow68.txt",
            {"clock_event_reasons_active": ["Idle"]},
        ),
    ],
)
def test_windows_and_greps_of_nvidia_smi_q_are_read_as_one_gpus_sections(name, figures):
    r = analyse(name)
    assert r["kind"] == "gpu-q"
    (gpu,) = r["summary"]["gpus"]
    assert gpu["bus_id"] is None and {k: gpu[k] for k in figures} == figures
    assert [v["level"] for v in r["verdicts"]] == ["ok"]  # idle is not heat; no page pending


@pytest.mark.parametrize(
    "name, ports, finding",
    [
        ("f17_ethtool-4space-indent-no-command-xdpd3.txt", [("eth14", 1000, 1000, True)], None),
        ("f17_ethtool-link-no-with-speed-openwrt14281.txt", [("lan12", 1000, 1000, False)], "link.down"),
        ("f17_ethtool-no-command-link-no-rtl8126-4.txt", [("enp14s0", None, 5000, False)], "link.down"),
        (
            "f17_ethtool-speed-unknown-link-no-fibre-openwrt22126.txt",
            [("lan12", None, 10000, False)],
            "link.down",
        ),
        # the SFP module's `ethtool -m` after it is not taken for the port's fields
        (
            "f17_ethtool-speed-unknown-then-module-zyxelgpon8.txt",
            [("enp1s0", None, 1000, False)],
            "link.down",
        ),
        # a VM's port: no modes ('Not reported' is no mode), a link, no speed
        ("f17_ethtool-virtio-speed-unknown-link-yes-lxd8669.txt", [("enp5s0", None, None, True)], None),
        # pasted straight after a URL: a 100G port whose speed is past the window
        ("f17_ethtool-100g-glued-to-url-checkbox331.txt", [("enp22s0f1", None, 100000, None)], None),
    ],
)
def test_ethtool_pastes_give_each_ports_speed_best_mode_and_link(name, ports, finding):
    r = analyse(name)
    assert r["kind"] == "ethtool"
    got = [
        (p["netdev"], p["speed_mbps"], p["max_supported_mbps"], p["link_detected"])
        for p in r["summary"]["ports"]
    ]
    assert got == ports
    assert [f["id"] for f in r["findings"]] == ([finding] if finding else [])
    assert all(p["duplex"] in (None, "Full") for p in r["summary"]["ports"])  # never 'Unknown!'
    if not finding:
        assert [v["level"] for v in r["verdicts"]] == ["ok"]


@pytest.mark.parametrize(
    "name, ports",
    [
        ("f17_ethtool-i-mlx5-sudo-prompt-ethq8.txt", [("p3p1", "mlx5_core", "14.23.1020", "0000:af:00.0")]),
        (
            "f17_ethtool-i-mlx4-trailing-spaces-ethq21.txt",
            [("this port", "mlx4_en", "2.42.5000", "0000:83:00.0")],
        ),
        (
            "f17_ethtool-i-i40e-bare-command-openshiftchecks22.txt",
            [("ens3f0", "i40e", "6.00 0x800036cb 1.1747.0", "0000:d8:00.0")],
        ),
        ("f17_ethtool-i-igb-then-stats-ethq4.txt", [("eth0", "igb", "1.61, 0x8000090e", "0000:02:00.0")]),
        ("f17_ethtool-i-r8169-no-firmware-ethq3.txt", [("enp1s0", "r8169", None, "0000:01:00.0")]),
        ("f17_ethtool-i-dpaa2-bus-dprc-ethq29.txt", [("this port", "fsl_dpaa2_eth", "7.17", "dprc.1")]),
        (
            "f17_ethtool-i-two-ports-ice-iavf-ethq27.txt",
            [
                ("enp59s0f0", "ice", "4.22 0x80010446 1.3197.0", "0000:3b:00.0"),
                ("enp59s0f0v0", "iavf", "N/A", "0000:3b:01.0"),
            ],
        ),
    ],
)
def test_ethtool_i_names_each_ports_driver_firmware_and_bus(name, ports):
    r = analyse(name)
    assert r["kind"] == "ethtool-i"
    got = [
        (f["figures"]["netdev"], f["figures"]["driver"], f["figures"].get("firmware"), f["figures"]["bus"])
        for f in r["findings"]
    ]
    assert got == ports
    assert r["summary"]["firmware"] == ports[0][2]  # an empty firmware-version is None, not ''
    assert len(r["verdicts"]) == len(ports)


@pytest.mark.parametrize(
    "name, container, level",
    [
        # `--format '{{ json .State }}'` as a markdown indented block, the command not prompted
        ("f17_docker-inspect-format-json-state-exit1-engine181.txt", ("test", "exited", 1, None), "error"),
        (
            "f17_docker-inspect-state-restarting-elided-scope970.txt",
            ("this container", "restarting", 0, None),
            "error",
        ),
        # podman's State window: no Status line, running (its Pid), an empty Health
        (
            "f17_docker-inspect-podman-state-window-podman20765.txt",
            ("this container", "running", 0, None),
            "ok",
        ),
        (
            "f17_docker-inspect-running-unhealthy-cut-moby41410.txt",
            ("251e469f3c42", "running", 0, "unhealthy"),
            "error",
        ),
        # Health objects alone (--format '{{json .State.Health}}', jq, quoted with '> ')
        (
            "f17_docker-inspect-health-unhealthy-jq-dockertor77.txt",
            ("196f25856b9d", None, None, "unhealthy"),
            "error",
        ),
        (
            "f17_docker-inspect-health-starting-prompt-otf642.txt",
            ("otf-otfd-1", None, None, "starting"),
            "warn",
        ),
        (
            "f17_docker-inspect-health-quoted-starting-ctop226.txt",
            ("this container", None, None, "starting"),
            "warn",
        ),
        # f18: a root prompt with two spaces before the command, a Synology engine's extra fields
        (
            "f18_docker-inspect-restarting-exit127-prompt-crashplan402.txt",
            ("crashplan-pro", "restarting", 127, None),
            "error",
        ),
        # the State object alone, indented as cut from the output, or between single backticks
        (
            "f18_docker-inspect-state-exit137-4space-cli2665.txt",
            ("this container", "exited", 137, None),
            "error",
        ),
        (
            "f18_docker-inspect-state-in-backticks-k8s19825.txt",
            ("this container", "exited", 137, None),
            "error",
        ),
    ],
)
def test_docker_inspect_states_and_health_objects_are_read_and_judged(name, container, level):
    r = analyse(name)
    assert r["kind"] == "docker-inspect"
    (c,) = r["summary"]["containers"]
    assert (c["name"], c["status"], c["exit_code"], c["health"]) == container
    assert max((v["level"] for v in r["verdicts"]), key=["ok", "warn", "error"].index) == level
    assert "not_recognised" not in r  # a health check's output is a field, not a failure line


def test_an_unhealthy_containers_last_check_output_is_told_on_one_line():
    r = analyse("f17_docker-inspect-health-unhealthy-jq-dockertor77.txt")
    (c,) = r["summary"]["containers"]
    assert (c["failing_streak"], c["last_check_exit_code"]) == (4, 1)
    assert c["last_check_output"].startswith("curl: (7) Failed to connect to localhost port 23")
    assert "\n" not in r["verdicts"][0]["text"]


@pytest.mark.parametrize(
    "name, rows",
    [
        # Docker 23's JSON lines after a bare command, the reporter's '.' after the last one
        (
            "f17_docker-ps-json-two-lines-trailing-period-cli4071.txt",
            [("bar", "nginx:alpine", "running"), ("foo", "nginx:alpine", "running")],
        ),
        ("f17_docker-ps-json-in-backticks-moby46906.txt", [("python38", "python:3.8", "running")]),
        # compose-cli's one JSON array without Names; the `ls` outputs after it are no containers
        ("f17_docker-ps-json-aci-array-then-other-ls-composecli823.txt", [("nginx_app", "nginx", None)]),
        # `docker compose ps --format json | jq`: Name, Service, no Image
        (
            "f17_docker-ps-json-compose-ps-jq-nerdctl1567.txt",
            [("compose-ps-json-db-1", None, "running"), ("compose-ps-json-wordpress-1", None, "running")],
        ),
        # f18: `--format '{{ json .}}'` (a space in the template) of 2022, Labels with \u003c escapes
        (
            "f18_docker-ps-json-format-template-3-lines-cli2936.txt",
            [
                ("stupefied_kirch", "fedora:35", "running"),
                ("foo", "nginx:alpine", "running"),
                ("keen_dubinsky", "quay.io/goswagger/swagger:0.7.4", "running"),
            ],
        ),
    ],
)
def test_docker_ps_json_of_any_version_lists_its_containers(name, rows):
    r = analyse(name)
    assert r["kind"] == "docker-ps-json"
    assert [(c["name"], c["image"], c["state"]) for c in r["summary"]["containers"]] == rows
    assert [v["level"] for v in r["verdicts"]] == ["ok"] * len(rows)


@pytest.mark.parametrize(
    "name, kind",
    [
        # podman-compose's '--format json' prints Python dicts: not JSON, not a docker ps output
        ("f17_not-docker-ps-podman-compose-ls-python-dicts-podmancompose1334.txt", "vllm"),
        # plain `ip addr` stays the netif reader's
        ("f17_not-ip-json-plain-ip-addr-iproute2mac62.txt", "netif"),
        # f18: networkctl's JSON of an interface (Name, Index, no ifname) is no `ip -j`
        ("f18_not-ip-json-networkctl-json-pretty-systemd39047.txt", "vllm"),
    ],
)
def test_a_paste_that_only_looks_like_a_format_is_not_taken_for_it(name, kind):
    assert analyse(name)["kind"] == kind


def test_a_bare_command_line_over_an_error_does_not_make_the_paste_that_commands_output():
    """`nvidia-smi -a -i 0` in backticks over its error message: the error is what is read."""
    r = diagnose.analyse((DATA / "failures" / "nvidia_smi_device_handle_unknown.log").read_text())
    assert r["kind"] != "gpu-q"
    assert [f["id"] for f in r["findings"]] == ["driver.nvml_lost_in_container"]


@pytest.mark.parametrize(
    "name, nodes",
    [
        # `ray list nodes --detail`: a YAML list, memory as a GiB string
        (
            "f17_ray-list-nodes-detail-yaml-list-ray37322.txt",
            [("127.0.0.1", True, "ALIVE", 0, 34.758)],
        ),
        # a table window: no '======== List:' line, a backtick glued to the header, empty STATE_MESSAGE
        (
            "f17_ray-list-nodes-table-window-backtick-ray64469.txt",
            [("10.0.249.179", True, "ALIVE", 0, 28.8)],
        ),
        # f18: `ray.nodes()` printed by Python: a dead node without resources
        ("f18_ray-nodes-python-dead-node-ray9927.txt", [("11.159.250.23", None, "DEAD", 0, None)]),
        # pprint's sorted keys in a REPL, cut inside Resources: its GPUs are not known, not 0
        ("f18_ray-nodes-pprint-repl-cut-kuberay290.txt", [("10.244.0.12", None, "ALIVE", None, None)]),
    ],
)
def test_ray_nodes_in_every_layout_give_ip_head_state_gpus_and_memory(name, nodes):
    r = analyse(name)
    assert r["kind"] == "ray-nodes"
    got = [
        (n["node_ip"], n["is_head"], n["state"], n["gpus"], n["memory_gib"]) for n in r["summary"]["nodes"]
    ]
    assert got == nodes


@pytest.mark.parametrize(
    "name, interfaces",
    [
        (
            "f17_ip-json-addr-oneline-down-ifb-this-machine.json",
            [
                ("lo", "UNKNOWN", ["127.0.0.1"], ["::1"]),
                ("ifb0", "DOWN", [], []),
                ("ifb1", "DOWN", [], []),
                ("eth0", "UP", ["192.0.2.2"], ["fd00::2", "fe80::fc:ff:fe00:1"]),
            ],
        ),
        (
            "f17_ip-json-pretty-ipv6-prompt-this-machine.txt",
            [("lo", "UNKNOWN", [], ["::1"]), ("eth0", "UP", [], ["fd00::2", "fe80::fc:ff:fe00:1"])],
        ),
        (
            "f17_ip-json-link-no-addresses-this-machine.txt",
            [
                ("lo", "UNKNOWN", [], []),
                ("ifb0", "DOWN", [], []),
                ("ifb1", "DOWN", [], []),
                ("eth0", "UP", [], []),
            ],
        ),
        # cut short: the whole objects read, the cut one field by field
        (
            "f17_ip-json-d-link-jq-cut-incus1741.txt",
            [("lo", "UNKNOWN", [], []), ("enP2p4s0", "UP", [], [])],
        ),
        ("f17_ip-json-tun0-object-cut-cloudinit1210.txt", [("tun0", "UNKNOWN", [], [])]),
    ],
)
def test_ip_json_gives_each_interfaces_state_and_addresses_as_values(name, interfaces):
    r = analyse(name)
    assert r["kind"] == "ip-json"
    got = [(i["ifname"], i["state"], i["ipv4"], i["ipv6"]) for i in r["summary"]["interfaces"]]
    assert got == interfaces
    assert [v["level"] == "warn" for v in r["verdicts"]] == [i[1] == "DOWN" for i in interfaces]


def test_every_format_paste_survives_crlf_truncation_and_quoting():
    """Nothing a paste holds crashes diagnose: each real sample, with CRLF line ends, quoted
    with '> ', and cut at every 97th character, gives a result --json can print."""
    for p in sorted(FORMATS.glob("*.txt")) + sorted(FORMATS.glob("*.json")):
        text = p.read_text()
        variants = [text.replace("\n", "\r\n"), "> " + text.replace("\n", "\n> ")]
        variants += [text[:i] for i in range(0, len(text), 97)]
        for v in variants:
            json.dumps(diagnose.analyse(v))
        assert diagnose.analyse(variants[0])["kind"] == diagnose.analyse(text)["kind"]


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000,
        '{"a":' * 50_000,
        '"State": {' + "{" * 30_000,
        "node_id: 0123456789abcdef0123\n" + "[" * 50_000,
    ],
)
def test_json_nested_deeper_than_python_recurses_is_no_crash(text):
    json.dumps(diagnose.analyse(text))


# --- f18: real pastes of round 2 (each with its thread in a .source) ------------------------


def test_gpu_q_idle_clock_reason_is_no_slowdown_warning():
    for name in (
        "f18_gpu-q-d-performance-495-idle-active-mangohud636.txt",
        "f18_gpu-q-d-performance-indented-465-nvsettings67.txt",
    ):
        assert [v["level"] for v in analyse(name)["verdicts"]] == ["ok"]


def test_docker_inspect_exit_137_without_oomkilled_is_named_sigkill_and_a_restart_loop_its_exit():
    for name in (
        "f18_docker-inspect-state-exit137-4space-cli2665.txt",
        "f18_docker-inspect-state-in-backticks-k8s19825.txt",
    ):
        r = analyse(name)
        assert r["verdicts"][0]["code"] == "docker.oom_killed"
        assert "exit 137 (SIGKILL) without OOMKilled" in r["verdicts"][0]["text"]
        assert r["summary"]["containers"][0]["oom_killed"] is False
    r = analyse("f18_docker-inspect-restarting-exit127-prompt-crashplan402.txt")
    assert r["command"] == "docker inspect crashplan-pro"
    assert "restarting in a loop" in r["verdicts"][0]["text"] and "exit code 127" in r["verdicts"][0]["text"]


def test_a_dead_node_in_ray_nodes_python_output_is_named():
    r = analyse("f18_ray-nodes-python-dead-node-ray9927.txt")
    assert r["kind"] == "ray-nodes"
    (v,) = r["verdicts"]
    assert (v["level"], v["code"]) == ("error", "ray.node_dead")
    assert v["text"].startswith("Ray node 11.159.250.23 is DEAD")
    cut = analyse("f18_ray-nodes-pprint-repl-cut-kuberay290.txt")
    assert [v["level"] for v in cut["verdicts"]] == ["ok"]  # no 'has no GPU' from a cut paste


def test_a_ray_node_quoted_inside_a_log_line_is_no_ray_nodes_paste():
    text = "INFO worker.py:1 -- nodes: [{'NodeID': 'cbe06de143783c289223071cfde58aef2811c9f3', 'Alive': False}]\n"
    assert diagnose.analyse(text)["kind"] != "ray-nodes"


def test_ibstat_port_down_polling_is_named_and_an_ibpanic_line_names_the_unreadable_device():
    r = analyse("f18_ibstat-port-down-polling-gpud482.txt")
    assert r["kind"] == "ibstat"
    (port,) = r["summary"]["ports"]
    assert (port["ca"], port["port"], port["state"], port["physical_state"], port["rate"]) == (
        "mlx5_10",
        1,
        "Down",
        "Polling",
        "10",
    )
    assert [f["id"] for f in r["findings"]] == ["link.ib_port_not_active"]
    assert r["findings"][0]["figures"] == {"phys_state": "Polling"}
    assert {v["level"] for v in r["verdicts"]} == {"warn"}
    tail = analyse("f18_ibstat-tabs-elided-then-ibpanic-gpud752.txt")
    assert tail["kind"] == "ibstat"
    assert [(p["ca"], p["state"], p["physical_state"], p["rate"]) for p in tail["summary"]["ports"]] == [
        ("mlx5_7", "Active", "LinkUp", "200")
    ]
    # ibstat's panic on a device it cannot read is link.ibstat_device_unreadable since session 35 (t35d)
    assert "not_recognised" not in tail
    assert [(f["id"], f["figures"]) for f in tail["findings"]] == [
        ("link.ibstat_device_unreadable", {"device": "mlx5_8", "error": "No such file or directory"})
    ]


def test_a_window_of_the_nvidia_smi_table_without_header_is_a_gpu_table():
    """A V100 row (no 'NVIDIA' before its name) whose power reads ERR!: a GPU table, not a log."""
    r = analyse("f18_nvidia-smi-table-err-power-window-azhpc77.txt")
    assert r["kind"] == "gpu"
    (gpu,) = r["summary"]["gpus"]
    assert (gpu["index"], gpu["name"], gpu["power_w"], gpu["power_cap_w"]) == (
        1,
        "Tesla V100-PCIE...",
        None,
        250.0,
    )


def test_an_err_cell_of_the_nvidia_smi_table_is_told():
    r = analyse("f18_nvidia-smi-table-err-power-window-azhpc77.txt")
    assert any("ERR!" in v["text"] for v in r["verdicts"])


def test_nvidia_smi_csv_after_a_bare_windows_command_line_is_a_gpu_csv():
    r = analyse("f18_nvidia-smi-csv-unknown-error-windows-mindminer627.txt")
    assert r["kind"] == "gpu"


def test_an_unknown_error_cell_of_the_nvidia_smi_csv_is_told_and_not_listed_as_unrecognised():
    r = analyse("f18_nvidia-smi-csv-unknown-error-windows-mindminer627.txt")
    assert any("power.default_limit" in v["text"] for v in r["verdicts"])
    assert "not_recognised" not in r


def test_nvidia_smi_csv_after_a_bare_command_line_gives_its_row():
    r = analyse("f18_nvidia-smi-csv-unknown-error-windows-mindminer627.txt")
    (row,) = r["summary"]["csv"]
    assert (row["utilization.gpu"], row["power.draw"]) == (100.0, 228.82)


def test_a_docker_ps_table_row_is_read_by_its_container_id():
    r = analyse("f18_docker-ps-table-restarting-minus1-moby20400.txt")
    assert r["kind"] == "docker-ps"
    assert r["summary"]["containers"][0]["CONTAINER ID"] == "78d87d7f4ac8"


def test_a_docker_ps_row_not_aligned_with_its_header_keeps_its_status():
    r = analyse("f18_docker-ps-table-restarting-minus1-moby20400.txt")
    assert r["summary"]["containers"][0]["STATUS"] == "Restarting (-1) About an hour ago"


def test_docker_ps_rows_without_their_header_name_exit_137_and_only_it():
    """Rows pasted without the table's header: the knowledge base names the killed containers
    (Exited (137)); rows that exited 0 or 1 are no failure."""
    r = analyse("f18_docker-ps-table-exited137-rows-no-header-codalab2348.txt")
    assert [f["id"] for f in r["findings"]] == ["docker.oom_killed"]
    assert r["verdicts"][0]["code"] == "docker.oom_killed"
    quiet = analyse("f18_docker-ps-table-exited-rows-no-header-moby12328.txt")
    assert quiet["findings"] == [] and "not_recognised" not in quiet


def test_docker_ps_rows_without_their_header_are_a_docker_ps_table():
    r = analyse("f18_docker-ps-table-exited137-rows-no-header-codalab2348.txt")
    assert r["kind"] == "docker-ps" and len(r["summary"]["containers"]) == 7


def test_ethtool_of_a_virtual_port_without_link_modes_is_not_called_its_best_mode():
    """A pod's veth: 10000Mb/s, 'Not reported' modes, the WoL refusal among the fields."""
    r = analyse("f18_ethtool-veth-10g-wol-refusal-prompt-k8srdma30.txt")
    assert r["kind"] == "ethtool" and r["command"] == "ethtool eth0"
    (port,) = r["summary"]["ports"]
    assert (port["speed_mbps"], port["max_supported_mbps"], port["link_detected"]) == (10000, None, True)
    (v,) = r["verdicts"]
    assert v["level"] == "ok" and "lists no link modes" in v["text"] and "best" not in v["text"]


def test_ethtool_i_of_a_veth_has_no_firmware_and_no_bus():
    r = analyse("f18_ethtool-i-veth-empty-firmware-bus-prompt-k8srdma30.txt")
    assert r["kind"] == "ethtool-i"
    assert r["summary"] == {
        "netdev": "eth0",
        "driver": "veth",
        "version": "1.0",
        "firmware": None,
        "bus": None,
    }


def test_show_gids_with_its_prompt_gives_the_roce_v2_ipv4_index():
    r = analyse("f18_gids-cx6-ipv4-at-5-prompt-spectrumscale4.txt")
    assert r["kind"] == "gids" and r["command"] == "show_gids mlx5_0"
    assert r["summary"]["roce_v2_index"] == {"mlx5_0": 5}
    assert len(r["summary"]["gids"]) == 6
    assert (
        r["verdicts"][0]["text"]
        == "mlx5_0: RoCE v2 GID with IPv4 at index 5 (NCCL_IB_GID_INDEX=5 selects it)"
    )


def test_show_gids_that_found_none_is_a_gids_paste_without_gids():
    r = analyse("f18_gids-none-found-prompt-k8srdma30.txt")
    assert r["kind"] == "gids" and r["summary"] == {"gids": [], "roce_v2_index": {}}


def test_show_gids_that_found_none_warns_that_nccl_has_no_roce_gid():
    r = analyse("f18_gids-none-found-prompt-k8srdma30.txt")
    assert any(v["level"] in ("warn", "error") for v in r["verdicts"])


def test_a_docker_ps_table_after_other_commands_of_a_session_is_a_docker_ps_table():
    """`$ docker run`, `$ docker ps -a`, `$ docker stop`, `$ docker ps -a`: the first command is
    not the table's, the table's header says what the paste is."""
    r = analyse("f18_docker-ps-table-exited0-prompt-session-vic5610.txt")
    assert r["kind"] == "docker-ps"
    assert r["summary"]["containers"][0]["STATUS"] == "Up 15 seconds"


def test_each_docker_ps_table_of_a_session_is_read_by_its_own_header():
    r = analyse("f18_docker-ps-table-exited0-prompt-session-vic5610.txt")
    assert [c["STATUS"] for c in r["summary"]["containers"]] == ["Up 15 seconds", "Exited (0) 12 seconds ago"]


def test_ibdev2netdev_with_a_prompt_names_each_port_up_or_down_and_a_down_port_beside_an_up_one_is_info():
    r = analyse("f18_netif-ibdev2netdev-bond-up-down-prompt-stepmesh15.txt")
    assert r["kind"] == "netif" and r["command"] == "ibdev2netdev"
    assert [(m["device"], m["netdev"], m["state"]) for m in r["summary"]["roce"]][:3] == [
        ("mlx5_0", "ibs108", "Down"),
        ("mlx5_1", "ens12f0np0", "Up"),
        ("mlx5_2", "ens12f1np1", "Up"),
    ]
    assert len(r["summary"]["roce"]) == 7
    assert [v["level"] for v in r["verdicts"]] == ["info", "ok", "ok", "info", "info", "info", "ok"]


def test_the_nvidia_smi_table_of_a_dgx_spark_reads_its_gb10_and_says_memory_is_unified():
    r = analyse("f18_nvidia-smi-table-gb10-580-not-supported-arctictraining345.txt")
    assert r["kind"] == "gpu"
    s = r["summary"]
    assert (s["driver"], s["cuda"]) == ("580.126.09", "13.0")
    (gpu,) = s["gpus"]
    assert (
        gpu["name"],
        gpu["temperature_c"],
        gpu["power_w"],
        gpu["power_cap_w"],
        gpu["memory_supported"],
    ) == (
        "NVIDIA GB10",
        36.0,
        3.0,
        None,
        False,
    )
    assert "normal on GB10" in r["verdicts"][0]["text"]


@pytest.mark.parametrize(
    "name, keys, verdict",
    [
        # starts two levels deep (PCI link generation): the sections after it nest by their own indent
        (
            "f18_gpu-q-window-p2-unknown-reason-active-mcx18.txt",
            {
                "Link Width/Current": "8x",
                "Bridge Chip/Type": "N/A",
                "Performance State": "P2",
                "clock_event_reasons_active": ["Unknown"],
                "memory_total_mib": 6143.0,
            },
            "GPU (part of nvidia-smi -q): memory 144 MiB used of 6143 MiB; clock-event reasons active: Unknown",
        ),
        # a recent driver's sections (Conf Compute, JPEG/OFA), the window inside FB Memory Usage
        (
            "f18_gpu-q-window-570-conf-compute-dram-encryption-ogkm874.txt",
            {
                "Conf Compute Protected Memory Usage/Total": "0 MiB",
                "Utilization/OFA": "0 %",
                "memory_used_mib": 20294.0,
                "memory_total_mib": 46068.0,
            },
            "GPU (part of nvidia-smi -q): memory 20294 MiB used of 46068 MiB",
        ),
    ],
)
def test_a_window_of_nvidia_smi_q_keeps_its_sections_nesting_and_tells_its_memory(name, keys, verdict):
    r = analyse(name)
    assert r["kind"] == "gpu-q"
    (gpu,) = r["summary"]["gpus"]
    assert {k: gpu[k] for k in keys} == keys
    assert [(v["level"], v["text"]) for v in r["verdicts"]] == [("ok", verdict)]


def test_a_docker_inspect_with_a_quote_marker_at_both_ends_of_every_line_is_read():
    """A broken quote-reply: '> ' before and after every line; the command named in the prose."""
    r = analyse("f18_docker-inspect-quoted-markers-at-both-ends-memcached100.txt")
    assert r["kind"] == "docker-inspect"
    (c,) = r["summary"]["containers"]
    assert (c["name"], c["status"], c["exit_code"], c["oom_killed"]) == ("26e267333903", "exited", 137, False)
    assert r["verdicts"][0]["code"] == "docker.oom_killed" and "not_recognised" not in r


def test_a_state_object_after_a_sentence_names_a_segfault_exit_139():
    r = analyse("f18_docker-inspect-state-exit139-after-prose-argo9415.txt")
    assert r["kind"] == "docker-inspect"
    (c,) = r["summary"]["containers"]
    assert (c["status"], c["exit_code"], c["oom_killed"]) == ("exited", 139, False)
    assert r["findings"][0]["id"] == "docker.container_crashed"
    assert r["findings"][0]["figures"] == {"code": 139, "code_name": "SIGSEGV, a segmentation fault"}


def test_a_docker_ps_table_under_a_two_line_prompt_is_read():
    r = analyse("f18_docker-ps-table-two-line-prompt-cut-cosmos139.txt")
    assert r["kind"] == "docker-ps" and r["command"] == "docker ps"
    (c,) = r["summary"]["containers"]
    assert (c["NAMES"], c["STATUS"], c["IMAGE"]) == (
        "cosmos-self-updater-agent",
        "Up Less than a second",
        "azukaar/docker-self-updater:latest",
    )


def test_lines_ending_with_a_tag_are_not_taken_for_quote_markers():
    from spark_tui.diagnose.formats.values import unmarked

    xml = "<gpu>\n<fan_speed>0 %</fan_speed>\n<performance_state>P8</performance_state>\n</gpu>\n"
    assert unmarked(xml) == xml


def test_ethtool_and_ethtool_i_in_one_paste_give_the_ports_speed_and_its_driver():
    """VyOS' `show interfaces ethernet eth4 physical` behind an obfuscated prompt: ethtool, its
    'netlink error' (left not recognised, honestly), then the driver's fields."""
    r = analyse("f18_ethtool-then-ethtool-i-vyos-obfuscated-prompt-bpir4-1.txt")
    assert r["kind"] == "ethtool"
    (port,) = r["summary"]["ports"]
    assert (port["netdev"], port["speed_mbps"], port["max_supported_mbps"], port["link_detected"]) == (
        "eth4",
        10000,
        10000,
        True,
    )
    assert r["summary"]["driver"] == {
        "netdev": "eth4",
        "driver": "mtk_soc_eth",
        "version": "6.18.0-vyos",
        "firmware": None,
        "bus": "15100000.ethernet",
    }
    assert [f["id"] for f in r["findings"]] == ["link.driver_firmware"]
    assert r["not_recognised"] == ["netlink error: Operation not supported"]


def test_ibstat_after_ibwarn_debug_lines_reads_both_ports_and_a_disabled_port_beside_an_active_one_is_info():
    r = analyse("f18_ibstat-mlx4-after-ibwarn-debug-lines-rdmacore847.txt")
    assert r["kind"] == "ibstat"
    assert [(p["port"], p["state"], p["physical_state"], p["rate"]) for p in r["summary"]["ports"]] == [
        (1, "Down", "Disabled", "10"),
        (2, "Active", "LinkUp", "56"),
    ]
    assert [v["level"] for v in r["verdicts"]] == ["info", "ok"] and r["findings"] == []
