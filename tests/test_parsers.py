"""Parsers against the real outputs in tests/data (copied from ../shared/corpus; see tests/data/INDEX.md)."""

import json
from pathlib import Path

import pytest

from spark_tui import diagnose
from spark_tui.parsers import docker_text, gpu, nccl, netif, vllm
from spark_tui.parsers.text import inert, strip_ansi
from spark_tui.parsers.verdict import Verdict
from tests.helpers import DATA


def read(rel: str) -> str:
    return (DATA / rel).read_text()


# --- NCCL: one row per corpus file, what its INDEX entry says a parser must extract -----------

NCCL_EXPECT = {
    "gb10-nccltests-2node-roce-switch-init.txt": dict(
        version="2.28.9+cuda13.0",
        bootstrap_if="enp1s0f1np1",
        addrs={"192.168.100.15", "192.168.100.16"},
        socket_ifname="enp1s0f1np1",
        transport="IB",
        hcas=[("rocep1s0f1", "RoCE"), ("roceP2p1s0f1", "RoCE")],
        nranks=2,
        nnodes=2,
        init=(2, 2),
        hosts={"spark-fb97", "spark-4440"},
        verdicts={"ib", "init"},
    ),
    "gb10-nccltests-2node-roce-switch-tail.txt": dict(hosts={"spark-fb97", "spark-4440"}, verdicts=set()),
    "dgxspark-vllm-ray-ibext-channels.txt": dict(transport="IBext_v10", verdicts={"ib"}),
    "dgxspark-vllm-worker-roce-nccl2.31.txt": dict(
        version="2.31.2+cuda13.0",
        bootstrap_if="enp1s0f0np0",
        addrs={"169.254.163.17"},
        hcas=[("rocep1s0f0", "RoCE"), ("roceP2p1s0f0", "RoCE")],
        ib_hca_env="roceP2p1s0f0,rocep1s0f0",
        hosts={"edgexpert-5ead"},
    ),
    "k8s-roce-4hca-bootstrap-aibrix.txt": dict(
        version="2.25.1+cuda12.2",
        bootstrap_if="eth0",
        addrs={"192.168.0.90"},
        ib_hca_env="mlx5_",
        hcas=[("mlx5_1", "RoCE"), ("mlx5_2", "RoCE"), ("mlx5_3", "RoCE")],
    ),  # mlx5_4 is cut by the window
    "h100-torchrun-bootstrap-plugin-dlerror.txt": dict(
        version="2.20.5+cuda12.4", bootstrap_if="enp3s0", addrs={"10.150.255.205"}, hosts={"h100-2"}
    ),
    "ib-nodevice-bootstrap-ipoib-nccl952.txt": dict(
        bootstrap_if="ibp12s0", addrs={"10.149.0.32"}, hosts={"<cluster_name>"}
    ),
    "aws-socket-multi-iface-veth-ipv6-pytorch68893.txt": dict(
        version="2.7.8+cuda11.1",
        addrs={"172.31.0.137", "fe80::14ad:64ff:fe64:b31e%veth75fa783"},
        transport="Socket",
        warnings=1,
        verdicts={"socket"},
    ),
    "dgxa100-forced-socket-nccl676.txt": dict(
        version="2.11.4+cuda11.4",
        socket_ifname="en",
        bootstrap_if="enp225s0f1",
        addrs={"10.10.10.2"},
        transport="Socket",
        verdicts={"socket"},
    ),
    "ib-4hca-two-containers-nccl983.txt": dict(
        bootstrap_if="eth0",
        addrs={"10.0.1.9", "10.0.1.7"},
        transport="IB",
        hcas=[("mlx5_0", "IB"), ("mlx5_1", "IB"), ("mlx5_2", "IB"), ("mlx5_3", "IB")],
        verdicts={"ib"},
    ),
    "l40-irdma-roce-ibext-nccltests227.txt": dict(
        transport="IBext_v8", hcas=[("irdma0", "RoCE"), ("irdma3", "RoCE")], verdicts={"ib"}
    ),
    "mpirun-rank-prefix-ibv_modify_qp-invalid-nccl302.txt": dict(
        ibv={"ibv_modify_qp"}, warnings=1, hosts={"crow-ib-new-nccl-256-info-19"}, verdicts={"ib", "ibv"}
    ),
    "pdsh-host-prefix-ib-sharp-nccl1029.txt": dict(
        transport="IBext", hcas=[("mlx5_9", "IB")], sharp=True, hosts={"rdma-gpu-train-worker-0"}
    ),
    "init-timings-colon-format-16ranks-nccl1412.txt": dict(nranks=16, hosts={"swat1-04"}),
    "ray-repeated-across-cluster-internal-error-nccl1591.txt": dict(
        errors_match="NCCL error: internal error", verdicts={"error"}
    ),
    "roce-ibv_create_cq-warn-hostname-spark01-nccl380.txt": dict(
        version="2.7.8+cuda11.0",
        bootstrap_if="ens192f1",
        addrs={"10.150.178.134"},
        transport="IB",
        hcas=[("mlx5_1", "RoCE")],
        ibv={"ibv_create_cq"},
        hosts={"spark01"},
        verdicts={"ib", "ibv"},
    ),
    "ipv6-bootstrap-connect-abort-nccl975.txt": dict(
        errors_match="socketStartConnect: Connect to fe80::966d:ae03:a2:8cf0%ib1<17943> failed",
        verdicts={"error"},
    ),
    "timestamped-ibv_modify_qp-110-anonymized-nccl2013.txt": dict(
        ibv={"ibv_modify_qp"}, hosts={"host-01.example.com"}, verdicts={"ibv"}
    ),
    "ibv_reg_mr_iova2-warn-single-line-nccl1842.txt": dict(ibv={"ibv_reg_mr_iova2"}, verdicts={"ibv"}),
    "bracket-host-prefix-internal-error-bad-ifname-nccl1837.txt": dict(
        socket_ifname="eth2", hosts={"twshared1016"}, errors_match="ncclInternalError", verdicts={"error"}
    ),
    "ncclSystemError-distbackenderror-indented-last-error-empty.txt": dict(
        version="2.19.3", errors_match="ncclSystemError", verdicts={"error"}
    ),
    "vllm-ray-llmengine-prefix-proxy-call-failed-vllm798.txt": dict(
        errors_match="Proxy Call to rank 7 failed", verdicts={"error"}
    ),
    "vllm-ray-raywrapper-k8s-32ranks-ray59778.txt": dict(hosts={"k8s17", "k8s19"}),
    "vllm-ray-watchdog-timeout-ansi-stripped-vllm2734.txt": dict(
        errors_match="Watchdog caught collective operation timeout", verdicts={"error"}
    ),
}


def test_every_nccl_sample_has_expectations():
    assert sorted(p.name for p in (DATA / "nccl").glob("*.txt")) == sorted(NCCL_EXPECT)


@pytest.mark.parametrize("name", sorted(NCCL_EXPECT))
def test_nccl_sample(name):
    want = NCCL_EXPECT[name]
    s = nccl.parse_text(read(f"nccl/{name}"))
    if "version" in want:
        assert s.version == want["version"]
    if "bootstrap_if" in want:
        assert s.bootstrap and all(ifname == want["bootstrap_if"] for ifname, _ in s.bootstrap), s.bootstrap
    if "addrs" in want:
        assert {a for _, a in s.bootstrap} == want["addrs"]
    for key in ("socket_ifname", "transport", "nranks", "nnodes", "ib_hca_env", "sharp"):
        if key in want:
            assert getattr(s, key) == want[key], key
    if "hcas" in want:
        assert s.hcas == want["hcas"]
    if "init" in want:
        assert (s.init_start, s.init_complete) == want["init"]
    if "hosts" in want:
        assert set(s.hosts) >= want["hosts"]
        assert not any(h.startswith(("(", "[")) for h in s.hosts)
    if "warnings" in want:
        assert len(s.warnings) >= want["warnings"]
    if "ibv" in want:
        assert set(s.ibv_failures) == want["ibv"]
    if "errors_match" in want:
        assert any(want["errors_match"] in e for e in s.errors), s.errors
    if "verdicts" in want:
        assert {v.code for v in s.verdicts(stream_ended=True)} == want["verdicts"]


def test_ray_actor_prefix_is_recognised():
    line = read("nccl/vllm-ray-raywrapper-k8s-32ranks-ray59778.txt").splitlines()[1]
    assert nccl.actor_of(line) == ("RayWorkerWrapper", "10.225.128.18")
    assert nccl.is_nccl_line(line)


def test_network_facts_are_kept_per_origin():
    """Two DGX Sparks interleaved in one stream: each host's transport, HCAs and bootstrap apart."""
    s = nccl.parse_text(read("nccl/gb10-nccltests-2node-roce-switch-init.txt"))
    for host, ip in (("spark-fb97", "192.168.100.15"), ("spark-4440", "192.168.100.16")):
        net = s.by_origin[host]
        assert (net.transport, net.hcas) == ("IB", ["rocep1s0f1", "roceP2p1s0f1"])
        assert net.bootstrap == [("enp1s0f1np1", ip)]
    s = nccl.parse_text(read("nccl/dgxspark-vllm-worker-roce-nccl2.31.txt"))
    assert s.by_origin["edgexpert-5ead"].env["NCCL_IB_DISABLE"] == "0"
    s = nccl.parse_text(read("nccl/dgxa100-forced-socket-nccl676.txt"))
    assert s.by_origin["gpu01"].transport == "Socket"


def test_ray_worker_lines_belong_to_the_actor_address():
    worker = "(RayWorkerWrapper pid=7, ip=10.0.0.2) spark-b:7:7 [0] NCCL INFO "
    s = _stream(
        "spark-a:1:1 [0] NCCL INFO Using network IB",
        worker + "NCCL_IB_DISABLE set by environment to 1.",
        worker + "NET/Socket : Using [0]eth1:10.0.0.2<0>",
        worker + "Using network Socket",
    )
    assert s.by_origin["spark-a"].transport == "IB"
    assert s.by_origin["10.0.0.2"].transport == "Socket"
    assert s.by_origin["10.0.0.2"].env == {"NCCL_IB_DISABLE": "1"}
    assert s.by_origin["10.0.0.2"].bootstrap == [("eth1", "10.0.0.2")]


def _stream(*lines):
    p = nccl.NcclParser()
    for i, line in enumerate(lines):
        p.feed(line, now=float(i))
    return p.summary


START = "spark-a:1:1 [0] NCCL INFO ncclCommInitRank comm 0x1 rank {r} nranks 2 cudaDev 0 busId f01000 commId 0x2 - Init START"
DONE = "spark-a:1:1 [0] NCCL INFO ncclCommInitRank comm 0x1 rank {r} nranks 2 cudaDev 0 busId f01000 commId 0x2 localSize 1 used 0 bytes - Init COMPLETE"


def test_nccl_hang_verdict_after_configured_time():
    s = _stream(START.format(r=0), START.format(r=1), DONE.format(r=0))
    assert [v.code for v in s.verdicts(now=10.0, hang_after=60)] == ["init_pending"]
    hang = [v for v in s.verdicts(now=100.0, hang_after=60) if v.code == "hang"]
    assert hang and "1/2" in hang[0].text
    s = _stream(START.format(r=0), START.format(r=1), DONE.format(r=0), DONE.format(r=1))
    assert [v.code for v in s.verdicts(now=1000.0, hang_after=60)] == ["init"]


def test_nccl_one_twin_verdict():
    s = _stream(
        "spark-a:1:1 [0] NCCL INFO NET/IB : Using [0]rocep1s0f1:1/RoCE [RO]; OOB enp1s0f1np1:10.0.0.1<0>",
        "spark-a:1:1 [0] NCCL INFO Using network IB",
    )
    twin = [v for v in s.verdicts() if v.code == "one_twin"]
    assert twin and "roceP2p1s0f1" in twin[0].text
    both = nccl.parse_text(read("nccl/gb10-nccltests-2node-roce-switch-init.txt"))
    assert "one_twin" not in {v.code for v in both.verdicts()}


def test_nccl_blank_line_before_warn_and_ansi_residue():
    s = nccl.parse_text(read("nccl/aws-socket-multi-iface-veth-ipv6-pytorch68893.txt"))
    assert s.warnings == ["Failed to open libibverbs.so[.1]"]
    assert s.hosts == ["ip-172-31-0-137"]


# --- vLLM / Ray --------------------------------------------------------------------------


def test_ray_start_lines_tab_separated():
    s = vllm.parse_text(read("docker/ray-start-head-tab-separated-docker-logs.txt"))
    assert s.ray_started and s.ray_node_ips == ["172.18.0.2"]
    assert Verdict("ok", "ray_started", "Ray runtime started on 172.18.0.2") in s.verdicts()


@pytest.mark.parametrize(
    "name, nodes, gpus, cpus",
    [
        ("ray-status-2nodes-2gpu-gpustack1566.txt", 2, 2.0, 36.0),  # older `Usage:`
        ("ray-status-2.4x-total-usage-real-images-reference.txt", 2, 2.0, 40.0),  # Ray 2.4x `Total Usage:`
        ("ray-status-unindented-total-usage-pending-demands-gpustack5509.txt", 2, 1.0, 34.0),
        ("ray-status-legacy-healthy-placement-group-suffix-ray24309.txt", 1, 0.0, 8.0),
        ("ray-status-healthy-types-per-node-usage-ray36894.txt", 22, 2.0, 544.0),
    ],
)
def test_ray_status_counts_nodes_and_gpus_in_every_layout(name, nodes, gpus, cpus):
    st = vllm.parse_ray_status(read(f"docker/{name}"))
    assert (st.active_nodes, st.gpus_total, st.cpus_total) == (nodes, gpus, cpus)


def test_shard_progress_with_prefix_on_next_line():
    s = vllm.parse_text(read("docker/vllm-shard-progress-prefix-on-own-line-pp-tp-ep-vllm38476.txt"))
    assert (s.shards_done, s.shards_total) == (56, 85)
    assert s.shard_owner == "Worker_PP0_TP0_EP0"
    assert not s.errors


def test_shard_progress_tqdm_carriage_returns():
    p = vllm.VllmParser()
    p.feed(
        "Loading safetensors checkpoint shards:   0% Completed | 0/4 [00:00<?, ?it/s]\rLoading safetensors checkpoint shards:  50% Completed | 2/4 [00:01<00:01,  1.9it/s]"
    )
    assert (p.summary.shards_done, p.summary.shards_total) == (2, 4)


def test_fastsafetensors_progress():
    s = vllm.parse_text(read("docker/vllm-fastsafetensors-loading-enginecore-vllm49011.txt"))
    assert (s.shards_done, s.shards_total) == (5, 5) and s.shard_owner == "EngineCore"


def test_readiness_legacy_and_apiserver_forms():
    legacy = vllm.parse_text(read("docker/vllm-uvicorn-legacy-ready-lines-dgxspark-playbook.txt"))
    assert legacy.ready and legacy.endpoint == "http://0.0.0.0:8000"
    api = vllm.parse_text(read("docker/vllm-apiserver-ready-then-engine-throughput-metrics.txt"))
    assert api.startup_complete and api.ready  # current vLLM prints no Uvicorn line
    started = vllm.parse_text(
        "(APIServer pid=1) INFO 12-03 05:00:00 [api_server.py:1900] Starting vLLM API server 0 on http://0.0.0.0:8000"
    )
    assert started.endpoint == "http://0.0.0.0:8000" and not started.ready
    assert api.metrics == {"prompt": 10922.8, "gen": 4.0, "running": 1.0, "waiting": 0.0, "kv": 2.1}


@pytest.mark.parametrize(
    "name,code,figures",
    [
        (
            "oom-torch-outofmemoryerror-worker-tp-ep-prefix-178gib-vllm49475.txt",
            "oom",
            {
                "tried": "28.44 GiB",
                "gpu": "7",
                "total": "178.34 GiB",
                "free": "7.38 GiB",
                "inuse": "170.94 GiB",
            },
        ),
        (
            "oom-legacy-torch-cuda-outofmemoryerror-format-musetalk362.txt",
            "oom",
            {"tried": "58.00 MiB", "gpu": "0", "total": "6.00 GiB", "free": "0 bytes", "inuse": "5.13 GiB"},
        ),
        (
            "vllm-startup-free-memory-check-cuda0-format.txt",
            "startup_memory",
            {"dev": "cuda:0", "free": "4.22", "total": "79.14", "util": "0.9", "want": "71.22"},
        ),
    ],
)
def test_oom_forms_give_their_figures(name, code, figures):
    s = vllm.parse_text(read(f"docker/{name}"))
    assert len(s.oom) == 1
    assert (s.startup_memory if code == "startup_memory" else s.oom_figures) == figures
    first = s.verdicts()[0]
    assert first.level == "error" and first.code == code


def test_startup_memory_check_without_a_device_name():
    """The form the issue quotes (no `cuda:0`): the figures and the fix that fits them."""
    line = (
        "ValueError: Free memory on device (49.14/79.33 GiB) on startup is less than desired GPU memory "
        "utilization (0.7, 55.53 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes."
    )
    verdict = vllm.parse_text(line).verdicts()[0]
    assert verdict.code == "startup_memory"
    assert "49.14 of 79.33 GiB free, gpu_memory_utilization 0.7 wants 55.53 GiB" in verdict.text
    assert (
        "something else holds 30.2 GiB" in verdict.text
        and "lower --gpu-memory-utilization below 0.62" in verdict.text
    )


def test_docker_ps_table_with_padded_empty_cell():
    rows = docker_text.parse_ps_table(read("docker/docker-ps-format-table-names-image-status-ports-gb10.txt"))
    nim = next(r for r in rows if r["NAMES"] == "agentic-rag-llm-standard-1")
    assert (
        nim["IMAGE"] == "nvcr.io/nim/nvidia/nemotron-3-nano:1.7.0-variant"
        and nim["STATUS"] == "Up 14 minutes (healthy)"
    )
    assert next(r for r in rows if r["NAMES"] == "project-agentic-rag")["PORTS"] == ""


# --- nvidia-smi -----------------------------------------------------------------------------


def test_gb10_table_not_supported_and_truncated_process_memory():
    t = gpu.parse_table(read("nvidia-smi/gb10-table-vllm-enginecore-truncated-mem-580.126.txt"))
    assert (t.driver, t.cuda) == ("580.126.09", "13.0")
    g = t.gpus[0]
    assert g.is_gb10 and not g.memory_supported and g.memory_used_mib is None
    assert (g.temperature_c, g.power_w, g.power_cap_w, g.utilization_pct) == (46.0, 11.0, None, 0.0)
    procs = {p.name: p for p in t.processes}
    assert procs["/usr/lib/xorg/Xorg"].used_mib == 179 and procs["/usr/lib/xorg/Xorg"].type == "G"
    assert procs["/usr/bin/gnome-shell"].used_mib == 48
    assert (
        procs["VLLM::EngineCore"].used_mib is None
        and procs["VLLM::EngineCore"].partial
        and procs["VLLM::EngineCore"].pid == 3048280
    )


def test_gb10_table_truncated_after_processes_header():
    t = gpu.parse_table(read("nvidia-smi/gb10-table-k8s-device-plugin-1482-truncated.txt"))
    assert (
        t.driver == "580.95.05"
        and t.gpus[0].temperature_c == 40.0
        and t.gpus[0].power_w == 4.0
        and t.processes == []
    )


def test_h100_570_layout_eight_gpus():
    t = gpu.parse_table(read("nvidia-smi/h100x8-vllm-tp8-table-570.txt"))
    assert len(t.gpus) == 8 and all(
        g.memory_total_mib == 81559 and g.memory_used_mib == 79101 for g in t.gpus
    )
    assert all(112 <= g.power_w <= 122 and g.power_cap_w == 700 for g in t.gpus)
    assert [p.name for p in t.processes] == [f"VLLM::Worker_TP{i}" for i in range(8)] and {
        p.used_mib for p in t.processes
    } == {79028}


def test_b200_truncated_process_memory():
    t = gpu.parse_table(read("nvidia-smi/b200x8-vllm-ep-truncated-memory-580.txt"))
    assert len(t.gpus) == 8 and t.gpus[0].power_cap_w == 1000
    assert t.gpus[4].memory_used_mib == 4 and t.gpus[0].memory_used_mib > 160_000
    assert t.processes and all(
        p.partial and p.used_mib is None for p in t.processes if p.name.startswith("VLLM::Worker_TP0")
    )


def test_legacy_545_and_610_headers():
    old = gpu.parse_table(read("nvidia-smi/h100-legacy-545-layout-idle.txt"))
    assert old.driver == "545.23.08" and old.gpus[0].power_w == 72 and old.gpus[0].memory_used_mib == 2
    new = gpu.parse_table(read("nvidia-smi/rtx3090x2-driver610-kmd-umd-header-club3090-747-truncated.txt"))
    assert (new.driver, new.cuda) == ("610.43.03", "13.3")
    assert len(new.gpus) == 2 and new.gpus[0].memory_used_mib == 21865


def test_query_csv_forms():
    na = gpu.parse_csv(
        read("nvidia-smi/gb10-query-gpu-noheader-na-llamaswap782.txt"),
        ["memory.used", "memory.total", "utilization.memory"],
    )
    assert na == [{"memory.used": None, "memory.total": None, "utilization.memory": 0.0}]
    apps = gpu.parse_csv(
        read("nvidia-smi/gb10-compute-apps-noheader-nounits-llamaswap782.txt"),
        ["gpu_uuid", "pid", "process_name", "used_memory"],
    )
    assert apps == [
        {
            "gpu_uuid": "GPU-...",
            "pid": 114687.0,
            "process_name": "/usr/local/bin/python",
            "used_memory": 19135.0,
        }
    ]
    h200 = gpu.parse_csv(read("nvidia-smi/h200x8-query-gpu-csv-uuid-mem-util.txt"))
    assert (
        len(h200) == 8
        and h200[7]["memory.used"] == 58071
        and h200[7]["utilization.gpu"] == 0
        and h200[0]["memory.total"] == 143771
    )


def test_meminfo_unified_memory():
    m = gpu.parse_meminfo(
        "MemTotal:       125515864 kB\nMemFree:         1000 kB\nMemAvailable:   100000000 kB\n"
    )
    assert round(m.total_mib) == 122574 and round(m.used_mib) == round((125515864 - 100000000) / 1024)
    assert "unified" in m.source


# --- interfaces ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,first",
    [
        ("ibdev2netdev-dgxspark-three-sparks-all-up.txt", ("rocep1s0f0", "enp1s0f0np0", "Up")),
        ("ibdev2netdev-dgxspark-all-up-mesh-koyo-step5.txt", ("roceP2p1s0f0", "enP2p1s0f0np0", "Up")),
        ("ibdev2netdev-dgxspark-f0-up-perfguide-spark-5c2d.txt", None),
        ("ibdev2netdev-dgxspark-koyo-f0-up-with-prompt.txt", ("roceP2p1s0f0", "enP2p1s0f0np0", "Up")),
    ],
)
def test_ibdev2netdev(name, first):
    maps = netif.parse_ibdev2netdev(read(f"netif/{name}"))
    assert len(maps) == 4
    if first:
        assert (maps[0].device, maps[0].netdev, maps[0].state) == first
    by_dev = {m.device: m.state for m in maps}
    if "f0-up" in name:
        assert by_dev["rocep1s0f0"] == "Up" and by_dev["rocep1s0f1"] == "Down"
    if "all-up" in name:
        assert set(by_dev.values()) == {"Up"}


def test_ibdev2netdev_classic_mlx5_naming():
    maps = netif.parse_ibdev2netdev(read("netif/ibdev2netdev-mlx5-naming-grep-mcnode28.txt"))
    assert [(m.device, m.port, m.netdev, m.state) for m in maps] == [("mlx5_1", 1, "ens1f1", "Up")]


def test_ibv_devinfo_cx7():
    ports = {
        p.device: p
        for p in netif.parse_ibv_devinfo(read("netif/ibv_devinfo-dgxspark-cx7-4ports-f1-active.txt"))
    }
    assert len(ports) == 4
    assert ports["rocep1s0f1"].state == "PORT_ACTIVE" and ports["rocep1s0f1"].active_mtu == 4096
    assert ports["roceP2p1s0f1"].state == "PORT_ACTIVE"
    assert ports["rocep1s0f0"].state == "PORT_DOWN" and ports["rocep1s0f0"].active_mtu == 1024
    assert {p.link_layer for p in ports.values()} == {"Ethernet"}


def test_ip_o_addr_fixture():
    ifs = netif.parse_ip_addr(read("netif/ip-o-addr-dgxspark-head-from-test-fixture.txt"))
    assert ifs["enp1s0f1np1"].ipv4 == ["10.100.184.1/24"] and ifs["enP2p1s0f1np1"].ipv4 == ["10.100.185.1/24"]
    assert ifs["tailscale0"].ipv4 == ["100.94.16.2/32"] and ifs["lo"].ipv6 == ["::1/128"]
    assert "docker0" in ifs


def test_ip_addr_show_blocks():
    ifs = netif.parse_ip_addr(read("netif/ip-addr-show-dgxspark-enp1s0f0np0-koyo-step4.txt"))
    e = ifs["enp1s0f0np0"]
    assert (e.state, e.mtu, e.ipv4) == ("UP", 1500, ["10.0.1.1/24"]) and e.ipv6 == [
        "fe80::4ebb:47ff:fe2f:fb98/64"
    ]
    vf = netif.parse_ip_addr(read("netif/ip-addr-sriov-vf-altname-ipv6-only-nccl1405.txt"))
    assert vf["net4"].mtu == 4200 and vf["net4"].ipv4 == [] and vf["net4"].altnames == ["enp51s0f0v0"]
    assert vf["net4"].ipv6[0] == "fd00:1148:9000:5000:4:200:3:ff20/120"


def test_ip_brief_forms():
    link = netif.parse_ip_brief(read("netif/ip-br-link-dgxspark-redacted-mac-allup.txt"))
    assert all(
        link[n].state == "UP" for n in ("enp1s0f0np0", "enp1s0f1np1", "enP2p1s0f0np0", "enP2p1s0f1np1")
    )
    assert link["docker0"].state == "DOWN" and link["enp1s0f1np1"].ipv4 == []
    addr = netif.parse_ip_brief(read("netif/ip-br-addr-single-line-dgxspark-nm.txt"))
    assert addr["enp1s0f1np1"].ipv4 == ["192.168.100.10/24"] and addr["enp1s0f1np1"].ipv6 == [
        "fe80::4ebb:47ff:fe2f:7d3f/64"
    ]


def test_twins():
    assert netif.twin_of("rocep1s0f1") == "roceP2p1s0f1" and netif.twin_of("enP2p1s0f0np0") == "enp1s0f0np0"
    assert netif.twin_of("mlx5_0") is None


def test_every_corpus_sample_is_used_by_a_test():
    source = "".join(p.read_text() for p in Path(__file__).parent.glob("test_*.py"))
    for path in DATA.glob("*/*.txt"):
        assert path.name in source, path.name


# --- diagnose ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rel,kind",
    [
        ("nccl/gb10-nccltests-2node-roce-switch-init.txt", "nccl"),
        ("docker/vllm-shard-progress-prefix-on-own-line-pp-tp-ep-vllm38476.txt", "vllm"),
        ("nvidia-smi/gb10-table-vllm-enginecore-truncated-mem-580.126.txt", "gpu"),
        ("netif/ibdev2netdev-dgxspark-koyo-f0-up-with-prompt.txt", "netif"),
        ("netif/ip-o-addr-dgxspark-head-from-test-fixture.txt", "netif"),
    ],
)
def test_diagnose_detects_kind(rel, kind, run_cli):
    assert diagnose.detect_kind(read(rel)) == kind
    code, out, _ = run_cli("diagnose", str(DATA / rel), "--json")
    assert code == 0 and json.loads(out)["kind"] == kind


def test_diagnose_text_verdicts(run_cli):
    code, out, _ = run_cli("diagnose", str(DATA / "nccl/aws-socket-multi-iface-veth-ipv6-pytorch68893.txt"))
    assert code == 0 and "[FAIL] fell back to Socket" in out
    code, out, _ = run_cli("diagnose", str(DATA / "nccl/gb10-nccltests-2node-roce-switch-init.txt"))
    assert (
        "[OK  ] running over IB/RoCE (IB: rocep1s0f1/RoCE, roceP2p1s0f1/RoCE)" in out
        and "init complete 2/2" in out
    )
    code, _, err = run_cli("diagnose", "/nonexistent/log.txt")
    assert (
        code == 2
        and err.strip() == "spark-tui: error: /nonexistent/log.txt: cannot read: No such file or directory"
    )


def test_escape_sequences_made_inert(run_cli, clean_env):
    hostile = clean_env / "hostile.log"
    hostile.write_text(
        "spark-a:1:1 [0] NCCL INFO Bootstrap: Using eth0:10.0.0.1<0>\x1b]0;pwned\x07\x1b[2J\x1b[H\n\x1b[31mNCCL WARN red\x1b[0m\x08\n"
    )
    code, out, _ = run_cli("diagnose", str(hostile), "--kind", "nccl")
    assert code == 0 and "\x1b" not in out and "\x07" not in out and "\x08" not in out
    assert inert("a\x1b[2Jb\x1b]2;title\x07c\x00d") == "abc^@d"
    assert strip_ansi("[0m ip-1:2:3 [0] x") == " ip-1:2:3 [0] x"


def test_nccl_ranks_are_placed_by_host_or_ray_address():
    s = nccl.parse_text(read("nccl/gb10-nccltests-2node-roce-switch-init.txt"))
    assert s.rank_origin == {0: "spark-fb97", 1: "spark-4440"} and s.pending_ranks() == {}
    start_only = [
        line
        for line in read("nccl/gb10-nccltests-2node-roce-switch-init.txt").splitlines()
        if "Init COMPLETE" not in line
    ]
    assert nccl.parse_text("\n".join(start_only)).pending_ranks() == {0: "spark-fb97", 1: "spark-4440"}
    ray = nccl.parse_text(
        "(RayWorkerWrapper pid=581, ip=10.225.128.18) k8s17:581:581 [0] NCCL INFO ncclCommInitRank comm 0x1 rank 3 "
        "nranks 4 cudaDev 0 nvmlDev 0 busId 17000 commId 0x9 - Init START"
    )
    assert ray.pending_ranks() == {3: "10.225.128.18"}


@pytest.mark.parametrize(
    "name, address, words",
    [
        ("ray-start-gcs-unreachable-anonymised-address-mmeureka54.txt", ":6379", "was empty"),
        ("ray-unable-to-connect-gcs-utils-warning-ray36651.txt", "10.0.53.19:49650", "firewall"),
    ],
)
def test_ray_gcs_unreachable_is_a_verdict_with_the_address(name, address, words):
    s = vllm.parse_text(read(f"docker/{name}"))
    assert s.gcs_unreachable == address
    verdict = next(v for v in s.verdicts() if v.code == "gcs_unreachable")
    assert verdict.level == "error" and address in verdict.text and words in verdict.text


def test_vllms_warning_from_its_own_nodes_gpu_count_is_no_failure():
    """vLLM 0.11+ prints it at every healthy launch across Sparks (one GPU a node): the parser and the
    table must not take it for the launch's failure (`up` rolls back on an error)."""
    from spark_tui.knowledge import scan

    text = (DATA / "failures" / "vllm_tp_exceeds_gpus_warning.log").read_text()
    parser = vllm.VllmParser()
    for line in text.splitlines():
        parser.feed(line)
    assert parser.summary.failure() is None
    assert [v for v in parser.summary.verdicts() if v.level == "error"] == []
    assert [(f.id, f.severity) for f in scan(text)] == [("vllm.tp_exceeds_local_gpus", "info")]
