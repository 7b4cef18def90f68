"""Fixed cockpit input for snapshot tests: the core's answers frozen, so screenshots are stable.

Snapshots compare pixels of text, so live values (round-trip times, clocks, image IDs
that change with every test-cluster build) cannot be in them. FrozenCore answers the
same calls as CockpitCore with fixed data: node views built from the parsers' own
dataclasses and the NCCL corpus sample of a DGX Spark worker. Behaviour against real
nodes is tested in test_cockpit.py; these tests pin what the screens look like.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from spark_tui.core.image_table import ImageEntry, ImageListing
from spark_tui.core.images.image_facts import ImageFacts
from spark_tui.core.launch import events as ev
from spark_tui.core.launch.nccl_nodes import per_node
from spark_tui.core.models.model_cache import ModelConfig
from spark_tui.core.monitor import ImageRow, NodeView
from spark_tui.core.node.logs import LogLines, StreamState
from spark_tui.core.node.probes import ContainerState, GpuState, HostInfo, NodeSnapshot
from spark_tui.core.node.redact import Redactor
from spark_tui.core.report.check import CheckResult
from spark_tui.parsers import gpu, netif
from spark_tui.parsers.nccl import NcclParser
from spark_tui.settings.resolve import Inputs, relayer, resolve

DATA = Path(__file__).resolve().parent / "data"
ARCHS = ["LlamaForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM", "Qwen3MoeForCausalLM"]
ARCHS_0_7 = ["LlamaForCausalLM", "Qwen2ForCausalLM", "Qwen2MoeForCausalLM"]  # before Qwen3 (0.8.4)
TAKEN_AT = 1796200000.0  # a fixed clock for "last refresh"
IMAGE = "vllm-node:latest"


# A fixed place under the temp dir: file:line provenance is part of the screenshots.
FROZEN_DIR = Path(tempfile.gettempdir()) / "spark-tui-snapshots"


def cluster_config(count: int, environ=None, interactive=None):
    lines = ["name: duo", f"image: {IMAGE}", "model: Qwen/Qwen3-30B-A3B", "nodes:"]
    for i in range(1, count + 1):
        lines += [f"  - name: spark-{i}", f"    host: 10.231.0.{10 + i}"]
    FROZEN_DIR.mkdir(exist_ok=True)
    path = FROZEN_DIR / f"frozen{count}.yaml"
    # Test workers run in parallel and share this path: write aside and rename, so a reader
    # never finds the file truncated halfway through another worker's write (CI of stop 61).
    aside = path.with_name(f"{path.name}.{os.getpid()}")
    aside.write_text("\n".join(lines) + "\n")
    os.replace(aside, path)

    base = resolve(Inputs(cluster_file=str(path), user_config="", environ=environ or {}))

    def reconfigure(edits, detected):
        """Edits re-layer what was read once (resolve.relayer), as the real core does."""
        return relayer(base, interactive=edits, detected=detected)

    return reconfigure(interactive or {}, {}), reconfigure


def node_view(config, name: str, reachable: bool = True, drift: bool = False) -> NodeView:
    node = config.node(name)
    role = "head" if node.is_head else "worker"
    if not reachable:
        snap = NodeSnapshot(
            name, False, error="cannot connect to " + node["host"] + ": Connection refused", taken_at=TAKEN_AT
        )
        return NodeView(name, node["host"], role, snap, retry_in=8.0)
    ip = node["data_ip"]
    ifaces = {
        "enP7s7": netif.Interface("enP7s7", "UP", 1500, ["192.168.1.20/24"]),
        "enp1s0f1np1": netif.Interface(
            "enp1s0f1np1", "UP", 9000, [f"{ip}/24"], roce_device="rocep1s0f1", roce_state="Up", is_data=True
        ),
        "enP2p1s0f1np1": netif.Interface(
            "enP2p1s0f1np1", "UP", 9000, [], roce_device="roceP2p1s0f1", roce_state="Up"
        ),
    }
    card = gpu.Gpu(0, "NVIDIA GB10", 41.0, 11.3, None, 3.0, None, None, memory_supported=False)
    unified = gpu.UnifiedMemory(121_000.0, 87_500.0 if node.is_head else 84_000.0, 33_500.0)
    procs = [gpu.GpuProcess(4242, "VLLM::EngineCore" if node.is_head else "ray::RayWorkerWrapper", None)]
    labels = {"spark-tui.cluster": config["name"], "spark-tui.role": role}
    image = "vllm-node:old" if drift else IMAGE
    containers = [
        ContainerState("vllm_node", image, "sha256:" + "ab" * 32, [], [], "running", None, "", 0, labels)
    ]
    snap = NodeSnapshot(
        name,
        True,
        rtt_ms=3.0,
        taken_at=TAKEN_AT,
        host=HostInfo(
            name,
            "aarch64",
            "6.11.0-1016-nvidia",
            "28.3.3",
            "overlayfs",
            "io.containerd.snapshotter.v1",
            memory=unified,
        ),
        interfaces=ifaces,
        gpu=GpuState(True, gpus=[card], processes=procs, unified=unified),
        containers=containers,
    )
    parser = NcclParser(tail=12)  # as the monitor reads a log: NCCL lines split once, by the parser
    parser.feed_lines(
        (DATA / "nccl" / "dgxspark-vllm-worker-roce-nccl2.31.txt").read_text().splitlines(), 0.0
    )
    history = [0.05, 0.1, 0.2, 0.35, 0.5, 0.62, 0.7, 0.72, 0.72, 0.71]
    total = unified.total_mib / 1024
    cache = [2.0, 6.0, 14.0, 22.0, 30.0, 31.0, 31.5, 31.5, 31.6, 31.6]  # page cache grows as shards are read
    view = NodeView(
        name,
        node["host"],
        role,
        snap,
        memory_history=history,
        memory_series={
            "used": [f * total for f in history],
            "available": [(1 - f) * total for f in history],
            "page cache": cache,
        },
        nccl=parser.summary,
        nccl_tail=list(parser.tail or ())[-4:],
        nccl_verdicts=parser.summary.verdicts(0.0),
        nccl_net=per_node(config, {name: parser.summary})[name],
    )
    if drift:
        view.drifted = {"vllm_node": [f"image vllm-node:old (requested {IMAGE})"]}
    return view


class FrozenCore:
    """Answers like CockpitCore, from fixed data; records what the UI asked for."""

    def __init__(self, config, reconfigure, unreachable=(), drift=(), log_lines=None, serving=False):
        self.config = config
        self.serving_on = serving  # answer serving() with the 0.11 samples (None: not serving yet)
        self.log_lines = log_lines  # what followed containers print (default: a DGX Spark NCCL log)
        self._reconfigure = reconfigure
        self.interactive: dict = {}
        self.unreachable = set(unreachable)
        self.drift = set(drift)
        self.calls: list[str] = []
        self.redact = Redactor(lambda: self.config)

    def edit(self, key, value):
        edits = dict(self.interactive)
        edits[key] = value
        self.config = self._reconfigure(edits, {})
        self.interactive = edits
        return self.config

    async def refresh(self, node):
        return node_view(self.config, node, node not in self.unreachable, node in self.drift)

    async def images(self, run_all=False):
        """A mix of good and unusable images, as a node with some history holds them."""
        self.calls.append("images --all" if run_all else "images")
        nodes = [n.name for n in self.config.nodes]
        layers = ("sha256:" + "1" * 64, "sha256:" + "2" * 64)
        new = ARCHS + ["Qwen3VLMoeForConditionalGeneration"]  # ARCHS: what vLLM 0.10.2 lists, trimmed

        def entry(ref, held, digest, vllm, ray, archs, effective=False, mismatch=False):
            ids = {n: ("0a1b2c3d4e5f" if mismatch and i else "5f1b2c3d4e5f") for i, n in enumerate(held)}
            lay = {n: (layers[: 1 + (mismatch and i > 0)]) for i, n in enumerate(held)}
            row = ImageRow(ref, ids, lay, "sha256:" + digest * 64, 18342.0, "2026-11-28T09:12:44")
            facts = ImageFacts(
                "sha256:" + digest * 64,
                ["vllm", "serve"],
                None,
                vllm,
                "python metadata",
                ray,
                "2.49.2" if ray else None,
                "4.57.1",
                archs,
                True,
            )
            source = "cluster file c4.yaml:1" if effective else ""
            return ImageEntry(row, facts, effective=effective, source=source)

        return ImageListing(
            [
                entry(IMAGE, nodes, "9", "0.12.0", True, new, effective=True),
                entry("nvcr.io/nvidia/vllm:25.10-py3", nodes, "8", "0.10.2+9dd9ca32.nv25.10", True, ARCHS),
                entry("vllm/vllm-openai:v0.19.0", nodes[:1], "7", "0.19.0", False, new),
                entry("vllm/vllm-openai:v0.7.3", nodes, "5", "0.7.3", True, ARCHS_0_7),
                entry("vllm-node:old", nodes, "6", "0.11.0", True, new, mismatch=True),
            ],
            ModelConfig(
                nodes[0],
                True,
                "",
                "/root/.cache/huggingface/hub/models--Qwen--Qwen3-30B-A3B/snapshots/ad44e77/config.json",
                ["Qwen3MoeForCausalLM"],
            ),
        )

    async def check(self, emit, fabric=False):
        self.calls.append("check --fabric" if fabric else "check")
        results = []
        for n in self.config.nodes:
            results += [
                CheckResult(
                    "ssh.reachable", n.name, "pass", f"SSH to {n['host']} authenticated, host key verified"
                ),
                CheckResult(
                    "docker.engine",
                    n.name,
                    "pass",
                    "Docker 28.3.3, storage overlayfs / io.containerd.snapshotter.v1",
                ),
                CheckResult(
                    "image.present", n.name, "pass", f"{self.config['image']} present (5f1b2c3d4e5f)"
                ),
                CheckResult("container.absent", n.name, "pass", "no container named vllm_node"),
                CheckResult("gpu.present", n.name, "pass", "1 GPU(s): NVIDIA GB10 (GB10: unified memory)"),
                CheckResult(
                    "net.data_interface", n.name, "pass", f"enp1s0f1np1 UP, {n['data_ip']}/24, MTU 9000"
                ),
                CheckResult(
                    "disk.free", n.name, "pass", "812 GiB free on the filesystem of ~/.cache/huggingface"
                ),
                CheckResult(
                    "model.cached",
                    n.name,
                    "warn",
                    f"Qwen/Qwen3-30B-A3B not in ~/.cache/huggingface on {n.name}",
                    "download it there first (huggingface-cli download Qwen/Qwen3-30B-A3B)",
                ),
            ]
        for r in results:
            emit(r)
        return results

    async def launch(self, emit):
        self.calls.append("launch")
        head = self.config.head.name
        t = 0.0
        for n in self.config.nodes:
            t += 0.4
            emit(ev.Stage(n.name, "container", "done", "5f1b2c3d4e5f", t))
        emit(ev.Stage("cluster", "ray_join", "done", f"{len(self.config.nodes)} nodes", 6.2, 1.0))
        for i, (a, b) in enumerate([(110.0, 112.0), (96.0, 99.0), (74.0, 80.0), (61.0, 66.0), (58.0, 64.0)]):
            for n, avail in zip(self.config.nodes, (a, b), strict=False):
                emit(ev.Memory(n.name, 121_000.0, avail * 1024, 20.0 + 5 * i))
        emit(ev.Stage(head, "shards", "progress", "7/16", 41.0, 7 / 16))
        emit(ev.Stage(head, "shards", "progress", "16/16", 73.5, 1.0))
        emit(
            ev.Ready(
                f"http://{self.config.head['data_ip']}:8000/v1",
                self.config["served_model_name"],
                96.4,
                [
                    ev.NcclNet(
                        n.name,
                        "ok",
                        f"NCCL: IB/RoCE (IB) on rocep1s0f1, roceP2p1s0f1 over enp1s0f1np1 {n['data_ip']}",
                    )
                    for n in self.config.nodes
                ],
            )
        )
        return True

    async def sync(self, what, emit):
        self.calls.append(f"sync {what}")
        for i, n in enumerate(self.config.nodes[1:]):
            emit(
                ev.Stage(
                    n.name,
                    f"sync_{what}",
                    "progress",
                    f"{40 * (i + 1)}/120 MB from spark-1",
                    1.0,
                    (i + 1) / 3,
                )
            )
            emit(ev.Stage(n.name, f"sync_{what}", "done", f"{what}: verified", 2.0, 1.0))
        return True

    running = ""  # the image the head's container runs ("" : nothing serves; a test sets it)

    def running_image(self):
        return self.running

    def supervision(self):
        return ""  # the frozen configuration leaves restart at its default: nothing supervised

    async def supervise(self, emit):
        self.calls.append("supervise")
        return ""

    async def teardown_targets(self):
        return {
            n.name: ["vllm_node (running, image vllm-node:latest)"]
            if n.name not in self.unreachable
            else "unreachable: Connection refused"
            for n in self.config.nodes
        }

    async def teardown(self, emit):
        self.calls.append("teardown")
        return True

    async def upgrade(self, image, emit):
        from spark_tui.core.upgrade import UpgradeOutcome, UpgradeStep

        self.calls.append(f"upgrade {image}")
        good = self.config["image"]
        emit(UpgradeStep("known-good", "done", f"{good}, bench run 7 (recent)", 0.4))
        emit(
            UpgradeStep(
                "check", "done", f"{image}: image, executor, model architecture and memory fit pass", 9.0
            )
        )
        emit(ev.Failed("spark-1: vLLM failed: [bold]boom[/bold]"))
        outcome = UpgradeOutcome(
            "refused",
            f"{image} failed to launch; {good} relaunched and serving",
            image,
            good,
            7,
            None,
            [],
            good,
            3,
        )
        emit(outcome)
        return outcome

    async def serving(self):
        self.calls.append("serving")
        return serving_look(self.config) if self.serving_on else None

    def follower(self, node, container, emit, tail=500):
        return _FrozenFollower(node, container, emit, self.log_lines)

    async def close(self):
        return None


class _FrozenFollower:
    def __init__(self, node, container, emit, lines=None):
        self.node, self.container, self.emit = node, container, emit
        self.lines = (
            lines
            if lines is not None
            else (DATA / "nccl" / "dgxspark-vllm-worker-roce-nccl2.31.txt").read_text().splitlines()
        )

    def start(self):
        self.emit(StreamState(self.node, self.container, "following"))
        self.emit(LogLines(self.node, self.container, list(self.lines)))

    async def stop(self):
        return None


def serving_look(config):
    """Two scrapes of the 0.11 samples 5 s apart, the head's GPU thermally slowed, twin idle."""
    from spark_tui.core.node.probes import new_marker
    from spark_tui.core.serving.node_load import NodeLoadTracker
    from spark_tui.core.serving.serving_metrics import MetricsWindow
    from spark_tui.core.serving.serving_signals import all_signals
    from spark_tui.core.serving.serving_watch import ServingLook
    from spark_tui.parsers.vllm_metrics import parse

    metrics = Path(__file__).parent / "data" / "metrics"
    window = MetricsWindow(60.0)
    for at, name in ((0.0, "t0"), (5.0, "t1")):
        window.add(parse((metrics / f"vllm-0.11-new-names-{name}.txt").read_text(), at))
        figures = window.figures("0.11.0")
    loads = {}
    mark = new_marker()
    for i, node in enumerate(config.nodes):
        tracker = NodeLoadTracker(node.name, "enp1s0f1np1")
        reason = "Active" if i == 0 else "Not Active"
        for at, rx in ((0.0, 0), (5.0, 25_000_000)):
            text = (
                f"{mark} clocks_event_reasons\n0, 71, 38.52, 1113, 0x0, Not Active, Not Active, Not Active, [N/A], {reason}\n"
                f"{mark} net\nenp1s0f1np1 {rx} {rx}\nenP2p1s0f1np1 0 0\n{mark} kmsg\n"
            )
            loads[node.name] = tracker.read(text, at, mark)
    history = list(window.history)
    signals = all_signals(config.head.name, history, {n: [x] for n, x in loads.items()})
    return ServingLook(figures, loads, signals, history)
