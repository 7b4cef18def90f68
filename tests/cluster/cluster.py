"""A multi-node test cluster on one machine: network-namespace nodes with real OpenSSH and Docker.

Each node is a network namespace (interface `enp1s0f1np1` on a veth to the host bridge)
plus a private mount/UTS namespace held open by a `sleep` process. Inside it run Debian's
sshd and dockerd, with their own /run (so the node has its own /var/run/docker.sock, as a
real Spark does) and their own /usr/local/bin holding the nvidia-smi/ibdev2netdev stand-ins.

Traffic stays on the bridge 10.231.0.0/24, which exists only on this machine.
"""

from __future__ import annotations

import datetime
import functools
import json
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from tests.cluster import images

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data"
# SPARK_TEST_CLUSTER_ID (0-15) lets several test runs share one machine, each with its own
# bridge, subnet, namespaces and directory; 0, the default, is the names used so far.
CLUSTER_ID = int(os.environ.get("SPARK_TEST_CLUSTER_ID") or 0)
_SUFFIX = f"-{CLUSTER_ID}" if CLUSTER_ID else ""
ROOT = Path(
    os.environ.get("SPARK_TEST_CLUSTER_DIR")
    or Path(tempfile.gettempdir()) / f"spark-tui-testcluster{_SUFFIX}"
)
STATE = ROOT / "state.json"
BRIDGE = f"spttbr{CLUSTER_ID}"
SUBNET = f"10.231.{CLUSTER_ID}"
NS_PREFIX = f"spt{CLUSTER_ID or ''}node"
VETH_PREFIX = f"spt{CLUSTER_ID or ''}v"
TWIN_SUBNET = f"10.232.{CLUSTER_ID}"
TWIN_NETDEV = "enP2p1s0f1np1"
NETDEV = "enp1s0f1np1"
MAX_NODES = 8


# Real Ray, pinned: the version current vLLM images (0.11-0.12) ship. NGC 25.10 (vLLM 0.10.2) ships
# the one before, which also gives a test of head and worker with different Ray versions.
RAY_VERSION = "2.49.2"
RAY_VERSION_NGC = "2.48.0"


@dataclass(frozen=True)
class ImageProfile:
    """An image like one operators run (shared/reference/real-images.md): its ENTRYPOINT, labels
    and environment as the real one has them, real Debian, python3 and Ray (unless it has none),
    and the stand-in vLLM package of its version (tests/cluster/images.py builds it)."""

    ref: str
    vllm_version: str
    ray: bool
    changes: tuple[str, ...]  # `docker import --change` lines
    archs: tuple[str, ...] = ()  # the model registry of its vLLM (what image_facts asks)
    python: bool = True  # python3 on PATH (an image without it is a slimmed runtime)
    transformers: str = "4.57.1"
    ray_version: str = RAY_VERSION  # real Ray from PyPI, in the image's venv


# Model registries, trimmed to architectures operators run on DGX Spark. Qwen3-VL and
# DeepSeek-V3.2 came with vLLM 0.11.0: an older image does not know them.
ARCHS_0_10 = (
    "DeepseekV3ForCausalLM",
    "Gemma3ForCausalLM",
    "GptOssForCausalLM",
    "LlamaForCausalLM",
    "MistralForCausalLM",
    "Qwen2ForCausalLM",
    "Qwen3ForCausalLM",
    "Qwen3MoeForCausalLM",
    "Qwen3NextForCausalLM",
)
ARCHS_0_12 = tuple(
    sorted(
        ARCHS_0_10
        + ("DeepseekV32ForCausalLM", "Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration")
    )
)


IMAGES = {
    # vllm/vllm-openai from mid-2025 on: ENTRYPOINT ["vllm", "serve"], Ray still inside.
    "openai": ImageProfile(
        "spark-test/vllm:latest", "0.12.0", True, ('ENTRYPOINT ["vllm", "serve"]',), ARCHS_0_12
    ),
    # NGC 25.10: nvidia_entrypoint.sh (ends in exec "$@"); vLLM 0.10.2 predates native multi-node.
    "ngc-25.10": ImageProfile(
        "spark-test/ngc-vllm:25.10-py3",
        "0.10.2",
        True,
        (
            'ENTRYPOINT ["/opt/nvidia/nvidia_entrypoint.sh"]',
            "ENV VLLM_VERSION=0.10.2",
            "LABEL com.nvidia.vllm.version=0.10.2+9dd9ca32.nv25.10",
        ),
        ARCHS_0_10,
        transformers="4.56.2",
        ray_version=RAY_VERSION_NGC,
    ),
    # vllm/vllm-openai after Ray was dropped (0.19): `ray: not found`.
    "noray": ImageProfile(
        "spark-test/vllm-noray:v0.19.0", "0.19.0", False, ('ENTRYPOINT ["vllm", "serve"]',), ARCHS_0_12
    ),
    # An image without python3 (a slimmed runtime): only `vllm --version` and `ray --version` answer.
    "nopython": ImageProfile(
        "spark-test/vllm-slim:0.12.0",
        "0.12.0",
        True,
        ('ENTRYPOINT ["vllm", "serve"]',),
        ARCHS_0_12,
        python=False,
    ),
}
IMAGE = IMAGES["openai"].ref  # the image of the test cluster file

# What this machine's sandbox cannot give a container, and only that: every capability
# (`privileged: true`, the default) and an open-files limit above its own hard limit (the default
# 1048576). Tests that start containers set these two visibly; everything else stays at its default.
SANDBOX = {"privileged": False, "ulimit_nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[1]}
SANDBOX_FLAGS = ["--no-privileged", "--ulimit-nofile", str(SANDBOX["ulimit_nofile"])]


class ClusterError(RuntimeError):
    pass


@dataclass
class Node:
    index: int
    name: str
    netns: str
    ip: str
    host_veth: str
    dir: str
    holder_pid: int = 0
    sshd_pid: int = 0
    dockerd_pid: int = 0

    @property
    def docker_host(self) -> str:
        """The node's docker socket as seen from the host (through the holder's mount namespace)."""
        return f"unix:///proc/{self.holder_pid}/root/run/docker.sock"

    def nsenter(self, *argv: str) -> list[str]:
        return ["nsenter", "-t", str(self.holder_pid), "--mount", "--uts", "--net", *argv]


def run(argv: list[str], check: bool = True, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, capture_output=True, text=True, **kw)
    if check and proc.returncode != 0:
        raise ClusterError(
            f"{' '.join(argv)}: exit {proc.returncode}: {proc.stderr.strip() or proc.stdout.strip()}"
        )
    return proc


def missing_requirements() -> str | None:
    """Why the cluster cannot be built here, in one line, or None."""
    if os.geteuid() != 0:
        return "the namespace test cluster needs root (network namespaces, dockerd); run the tests as root"
    for tool in (
        "ip",
        "nsenter",
        "unshare",
        "dockerd",
        "docker",
        "/usr/sbin/sshd",
        "ssh-keygen",
        "debootstrap",
        "cc",
    ):
        if shutil.which(tool) is None:
            return f"{tool} is missing; bash tests/run.sh installs it with apt-get"
    return None


class Cluster:
    def __init__(self, nodes: list[Node], root: Path = ROOT):
        self.nodes = nodes
        self.root = root

    # --- files the tests use ------------------------------------------------------

    @property
    def client_key(self) -> str:
        return str(self.root / "client_key")

    @property
    def known_hosts(self) -> str:
        return str(self.root / "known_hosts")

    @property
    def cluster_yaml(self) -> str:
        return str(self.root / "cluster.yaml")

    def cluster_file(self, count: int, path) -> str:
        """A cluster file for the first `count` nodes (the generated one lists them all)."""
        settings = Path(self.cluster_yaml).read_text().partition("nodes:\n")[0]
        body = "".join(
            f"  - name: {n.name}\n    host: {n.ip}\n    data_ip: {n.ip}\n" for n in self.nodes[:count]
        )
        Path(path).write_text(settings + "nodes:\n" + body)
        return str(path)

    def ssh_argv(self, node: Node, *command: str) -> list[str]:
        return [
            "ssh",
            "-i",
            self.client_key,
            "-o",
            f"UserKnownHostsFile={self.known_hosts}",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "BatchMode=yes",
            "-o",
            "ConnectTimeout=5",
            f"root@{node.ip}",
            *command,
        ]

    def docker(self, node: Node, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
        return run(["docker", "-H", node.docker_host, *argv], check=check)

    def save(self) -> None:
        STATE.write_text(json.dumps({"root": str(self.root), "nodes": [asdict(n) for n in self.nodes]}))

    @classmethod
    def load(cls) -> Cluster:
        data = json.loads(STATE.read_text())
        return cls([Node(**n) for n in data["nodes"]], Path(data["root"]))

    # --- fault knobs ----------------------------------------------------------------

    def stop_sshd(self, node: Node) -> None:
        _kill_wait(node.sshd_pid)
        node.sshd_pid = 0
        self.save()

    def start_sshd(self, node: Node) -> None:
        node.sshd_pid = _spawn(
            node.nsenter("/usr/sbin/sshd", "-D", "-e", "-f", f"{node.dir}/sshd_config"),
            f"{node.dir}/sshd.log",
        )
        _wait_port(node, 22)
        self.save()

    def kill_sshd_sessions(self, node: Node) -> None:
        """Kill every sshd process of the node, the per-connection children too: open sessions drop."""
        for pid in _sshd_pids(node):
            _signal(pid, signal.SIGKILL)

    def drop_ssh_connections(self, node: Node) -> None:
        """Kill the node's per-connection sshd processes, its listener kept: every open SSH
        connection drops at once (a network blip), and a new one is accepted right away."""
        for pid in _sshd_pids(node):
            if pid != node.sshd_pid:
                _signal(pid, signal.SIGKILL)

    def stop_dockerd(self, node: Node) -> None:
        _kill_wait(node.dockerd_pid, timeout=30)
        node.dockerd_pid = 0
        self.save()

    def start_dockerd(self, node: Node, gpu_runtime: bool = True) -> None:
        """The node's dockerd. Its PATH holds the NVIDIA container toolkit's hook (stand-in), which
        makes dockerd register its `nvidia` GPU device driver; `gpu_runtime=False` leaves it out,
        as on a node without the toolkit: the real dockerd then refuses --gpus in its own words."""
        path = "/usr/sbin:/usr/bin:/sbin:/bin"
        env = dict(os.environ, PATH=f"{HERE / 'hostbin'}:{path}" if gpu_runtime else path)
        node.dockerd_pid = _spawn(
            node.nsenter(
                "dockerd",
                "--data-root",
                f"{node.dir}/docker",
                "--exec-root",
                f"{node.dir}/exec",
                "--pidfile",
                f"{node.dir}/dockerd.pid",
                "-H",
                "unix:///run/docker.sock",
                "--bridge",
                "none",
                "--iptables=false",
                "--ip6tables=false",
                "--ip-masq=false",
                "--userland-proxy=false",
                "--storage-driver",
                "overlay2",
            ),
            f"{node.dir}/dockerd.log",
            env=env,
        )
        deadline = time.monotonic() + 30
        while self.docker(node, "info", "--format", "{{.ServerVersion}}", check=False).returncode != 0:
            if time.monotonic() > deadline or not _alive(node.dockerd_pid):
                raise ClusterError(f"dockerd on {node.name} did not start; see {node.dir}/dockerd.log")
            time.sleep(0.1)
        self.save()

    def start_dockerd_with_image(self, node: Node) -> None:
        """Start the node's engine holding the test image, as after `docker load`: its data root
        seeded from the engine store (see engine_store) before dockerd starts."""
        for part in ENGINE_PARTS:
            _remove_tree(Path(node.dir) / "docker" / part)
        (Path(node.dir) / "docker").mkdir(exist_ok=True)
        store = engine_store()
        images.mark_used(store)
        for part in ENGINE_PARTS:
            run(["cp", "-al", str(store / part), f"{node.dir}/docker/{part}"])
        self.start_dockerd(node)

    def restore_image(self, node: Node) -> None:
        """The test image back on a node whose test removed it: an engine left with no image at all
        restarts from the engine store (a second), one holding others loads it (docker load)."""
        empty = self.docker(node, "images", "-aq").stdout.strip() == ""
        if empty and not self.docker(node, "ps", "-aq").stdout.strip() and (engine_store() / "done").exists():
            self.stop_dockerd(node)
            self.start_dockerd_with_image(node)
        else:
            self.import_image(node)

    def link_down(self, node: Node) -> None:
        run(["ip", "-n", node.netns, "link", "set", NETDEV, "down"])

    def link_up(self, node: Node) -> None:
        run(["ip", "-n", node.netns, "link", "set", NETDEV, "up"])

    def block_tcp(self, node: Node, port: int) -> None:
        """The node's outgoing TCP to `port` is refused (a firewall), the rest of its network works."""
        run(
            [
                "ip",
                "netns",
                "exec",
                node.netns,
                "iptables",
                "-I",
                "OUTPUT",
                "-p",
                "tcp",
                "--dport",
                str(port),
                "-j",
                "REJECT",
            ]
        )

    def unblock_tcp(self, node: Node, port: int) -> None:
        rule = ["OUTPUT", "-p", "tcp", "--dport", str(port), "-j", "REJECT"]
        while run(["ip", "netns", "exec", node.netns, "iptables", "-D", *rule], check=False).returncode == 0:
            pass

    def management_ip(self, node: Node) -> str:
        return f"10.232.{CLUSTER_ID}.{10 + node.index}"

    def add_management_network(self, node: Node) -> str:
        """A second network on the node, as a Spark's management port (enP7s7) with the default
        route: what Ray picks for itself unless told the address (it asks the route to the
        internet). Only its address exists; nothing else is on that link. Returns the address."""
        ip = self.management_ip(node)
        run(["ip", "-n", node.netns, "link", "add", "enP7s7", "type", "veth", "peer", "name", "enP7s7-peer"])
        run(["ip", "-n", node.netns, "addr", "add", f"{ip}/24", "dev", "enP7s7"])
        for dev in ("enP7s7", "enP7s7-peer"):
            run(["ip", "-n", node.netns, "link", "set", dev, "up"])
        run(
            [
                "ip",
                "-n",
                node.netns,
                "route",
                "add",
                "default",
                "via",
                f"10.232.{CLUSTER_ID}.1",
                "dev",
                "enP7s7",
            ]
        )
        return ip

    def remove_management_network(self, node: Node) -> None:
        run(["ip", "-n", node.netns, "link", "del", "enP7s7"], check=False)

    def set_meminfo(self, node: Node, total_gib: float, available_gib: float, swapped_out: int = 0) -> None:
        """The node's /proc/meminfo (and pswpout in /proc/vmstat) as a Spark with these figures would
        show it: files bind-mounted over /proc's inside the node's own mount namespace, so the
        node's shell (probes, the launch guard) reads them; rewritten in place on later calls."""
        total, avail = int(total_gib * 1024**2), int(available_gib * 1024**2)
        free, cached = max(0, avail - avail // 3), avail // 3
        meminfo = (
            f"MemTotal:       {total} kB\nMemFree:        {free} kB\nMemAvailable:   {avail} kB\n"
            f"Buffers:           12288 kB\nCached:         {cached} kB\nSwapCached:            0 kB\n"
            f"SwapTotal:      16777212 kB\nSwapFree:       16777212 kB\n"
        )
        files = {
            "meminfo": meminfo,
            "vmstat": f"nr_free_pages {free // 4}\npswpin 0\npswpout {swapped_out}\n",
        }
        for name, text in files.items():
            path = Path(node.dir) / f"fake-{name}"
            fresh = not path.exists()
            with open(path, "w") as fh:  # same inode: the bind mount follows the new content
                fh.write(text)
            if fresh:
                run(node.nsenter("mount", "--bind", str(path), f"/proc/{name}"))

    def reset_meminfo(self, node: Node) -> None:
        for name in ("meminfo", "vmstat"):
            path = Path(node.dir) / f"fake-{name}"
            if path.exists():
                run(node.nsenter("umount", f"/proc/{name}"), check=False)
                path.unlink()

    def set_login_shell(self, node: Node, shell: str | None) -> None:
        """root's login shell on the node (tcsh, fish: shells that are not POSIX sh), by an
        /etc/passwd bind-mounted in the node's own mount namespace, which its sshd reads at each
        login; None: the machine's own /etc/passwd again."""
        path = Path(node.dir) / "fake-passwd"
        if shell is None:
            if path.exists():
                run(node.nsenter("umount", "/etc/passwd"), check=False)
                path.unlink()
            return
        lines = []
        for line in Path("/etc/passwd").read_text().splitlines():
            fields = line.split(":")
            lines.append(":".join(fields[:6] + [shell]) if fields[0] == "root" else line)
        fresh = not path.exists()
        path.write_text("\n".join(lines) + "\n")
        if fresh:
            run(node.nsenter("mount", "--bind", str(path), "/etc/passwd"))

    def rate_limit(self, node: Node, rate: str) -> None:
        """Traffic towards the node limited to `rate` (tbf, e.g. "8mbit"); clear_rate_limit removes it."""
        run(
            [
                "tc",
                "qdisc",
                "replace",
                "dev",
                node.host_veth,
                "root",
                "tbf",
                "rate",
                rate,
                "burst",
                "32kb",
                "latency",
                "2s",
            ]
        )

    def clear_rate_limit(self, node: Node) -> None:
        run(["tc", "qdisc", "del", "dev", node.host_veth, "root"], check=False)

    def add_twin(self, node: Node, name: str = TWIN_NETDEV) -> str:
        """The data port's second PCIe half as a Spark shows it (`enP2p1s0f1np1`, which the
        ibdev2netdev capture maps to roceP2p1s0f1): a second veth on the bridge with an address in
        its own subnet. Returns the address; remove_twin takes it away."""
        ip = f"{TWIN_SUBNET}.{10 + node.index}"
        host = f"{node.host_veth}t"
        # Two interfaces on one segment: each answers ARP only for its own address (as multi-NIC
        # RoCE hosts are set up), or a peer may learn the twin's MAC for the first address.
        for key in ("arp_ignore=1", "arp_announce=2"):
            run(["ip", "netns", "exec", node.netns, "sysctl", "-qw", f"net.ipv4.conf.all.{key}"])
        run(["ip", "link", "add", host, "type", "veth", "peer", "name", name, "netns", node.netns])
        run(["ip", "link", "set", host, "master", BRIDGE, "mtu", "9000", "up"])
        run(["ip", "-n", node.netns, "addr", "add", f"{ip}/24", "dev", name])
        run(["ip", "-n", node.netns, "link", "set", name, "mtu", "9000", "up"])
        return ip

    def remove_twin(self, node: Node) -> None:
        run(["ip", "link", "del", f"{node.host_veth}t"], check=False)
        for key in ("arp_ignore=0", "arp_announce=0"):
            run(["ip", "netns", "exec", node.netns, "sysctl", "-qw", f"net.ipv4.conf.all.{key}"])
        for peer in self.nodes:  # forget the twin's MAC wherever it was learnt
            run(["ip", "-n", peer.netns, "neigh", "flush", "all"], check=False)
        run(["ip", "neigh", "flush", "dev", BRIDGE], check=False)

    def install_tool(self, node: Node, tool: str) -> None:
        """Put a host-tool stand-in (tests/cluster/hostbin) on the node's PATH; remove_tool undoes it."""
        shutil.copy(HERE / "hostbin" / tool, Path(node.dir) / "bin" / tool)

    def remove_tool(self, node: Node, tool: str) -> None:
        (Path(node.dir) / "bin" / tool).unlink(missing_ok=True)

    def delete_image(self, node: Node, image: str = IMAGE) -> None:
        self.docker(node, "rmi", "-f", image)

    def import_image(
        self,
        node: Node,
        image: str = IMAGE,
        variant: str = "",
        profile: str = "openai",
        env: dict[str, str] | None = None,
    ) -> None:
        """Load a test image (tests/cluster/images.py) into the node's engine; a non-empty variant
        gives different layers under the same tag. An engine that has the lower layers already is
        sent only the top ones (docker load reads a layer's tar only when it lacks that layer).
        `env`: ENV baked into the image's config (as a Dockerfile's ENV line), e.g. the stand-in
        vLLM's SPARK_TEST_TOKENS_PER_S: a derived image that serves at its own speed, same layers."""
        layers, config = image_layers(self.root, variant, IMAGES[profile], env)
        top = len(layers) - (2 if variant else 1)
        err = ""
        for skip in dict.fromkeys((top, 1, 0)):
            err = self._docker_load(node, image, layers, config, skip)
            if not err:
                return
        raise ClusterError(f"docker load {image} into {node.name}: {err}")

    @staticmethod
    def _docker_load(node: Node, image: str, layers, config: bytes, skip: int) -> str:
        """`docker load` of the image's archive (its first `skip` layers left out) into the node's
        engine: "" when it loaded, else the engine's message."""
        proc = subprocess.Popen(
            ["docker", "-H", node.docker_host, "load", "-q"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        assert proc.stdin is not None and proc.stderr is not None
        try:
            with proc.stdin:
                images.write_archive(proc.stdin, image, layers, config, skip=skip)
        except (BrokenPipeError, ValueError):
            pass  # the engine stopped reading: its message says why
        err = proc.stderr.read()
        return "" if proc.wait() == 0 else err.decode(errors="replace").strip() or "failed"

    def import_foreign_image(self, node: Node, image: str, programs: tuple[str, ...]) -> str:
        """The test image with `programs` replaced by executables of another CPU, its config's
        architecture set to theirs (an amd64 image on an arm64 Spark, mirrored on this machine):
        returns that architecture."""
        layers, config = image_layers(self.root, "", IMAGES["openai"])
        layer, arch = images.foreign_arch_layer(self.root, programs)
        layers = [*layers, layer]
        meta = json.loads(config)
        meta["architecture"] = arch
        meta["rootfs"]["diff_ids"].append(layer.diff_id)
        meta["history"].append(dict(meta["history"][-1]))
        err = self._docker_load(node, image, layers, json.dumps(meta, sort_keys=True).encode(), skip=3)
        if err:
            raise ClusterError(f"docker load {image} into {node.name}: {err}")
        return arch

    def set_host_tool_sample(self, node: Node, **samples: str) -> None:
        """Choose which captured output the node's stand-ins print (GPU_TABLE, GPU_APPS, IBDEV_SAMPLE)."""
        self.set_standin(node, **{k: str(DATA / v) for k, v in samples.items()})

    def set_standin(self, node: Node, **values: str) -> None:
        """Set variables of the node's stand-ins (standin.env); an empty value removes one.
        SMI_WAIT=seconds makes nvidia-smi wait that long before answering: node-side time that
        costs this machine no CPU, as a real node's work costs the client's machine none."""
        env_file = Path(node.dir) / "bin" / "standin.env"
        current = dict(line.split("=", 1) for line in env_file.read_text().split() if "=" in line)
        current.update(values)
        env_file.write_text("".join(f"{k}={v}\n" for k, v in current.items() if v))

    def kernel_says(self, node: Node, *lines: str) -> None:
        """Lines the node's kernel logs now, stamped as `dmesg --time-format iso` prints them
        (`2026-12-03T23:35:02,123456+00:00 NVRM: ...`); the dmesg stand-in's --follow shows them."""
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds").replace(".", ",")
        with open(Path(node.dir) / "kernel.log", "a", encoding="utf-8") as fh:
            fh.write("".join(f"{now} {line}\n" for line in lines))

    def remove_all_containers(self, node: Node) -> None:
        ids = self.docker(node, "ps", "-aq").stdout.split()
        if ids:
            self.docker(node, "rm", "-f", *ids)


# --- bring-up and teardown ---------------------------------------------------------------


def up(count: int, root: Path = ROOT) -> Cluster:
    if not 1 <= count <= MAX_NODES:
        raise ClusterError(f"node count must be 1..{MAX_NODES}, got {count}")
    reason = missing_requirements()
    if reason:
        raise ClusterError(reason)
    down()
    build_images()  # the first time on a machine: a few minutes (debootstrap, pip)
    root.mkdir(parents=True)
    run(
        [
            "cc",
            "-shared",
            "-fPIC",
            "-O2",
            "-o",
            str(root / "libnvidia-ml.so.1"),
            str(HERE / "nvml" / "libnvidia-ml.c"),
        ]
    )
    if not os.path.exists("/dev/infiniband"):
        os.mkdir("/dev/infiniband")  # an empty mount point on the host; each node mounts its own
        if not CLUSTER_ID:  # other clusters' nodes may still have their mounts there
            (root / "created-dev-infiniband").touch()
    run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(root / "client_key")])
    run(["ip", "link", "add", BRIDGE, "type", "bridge"])
    run(["ip", "addr", "add", f"{SUBNET}.1/24", "dev", BRIDGE])
    run(["ip", "link", "set", BRIDGE, "up"])
    # A host dockerd may have set FORWARD to DROP; let our bridge forward to itself.
    run(["iptables", "-I", "FORWARD", "-i", BRIDGE, "-o", BRIDGE, "-j", "ACCEPT"], check=False)
    nodes = [_make_node(i, root) for i in range(1, count + 1)]
    cluster = Cluster(nodes, root)
    cluster.save()
    known = []
    for node in nodes:
        cluster.start_sshd(node)
        pub = Path(node.dir, "ssh_host_ed25519_key.pub").read_text().split()
        known.append(f"{node.ip} {pub[0]} {pub[1]}\n")
    Path(cluster.known_hosts).write_text("".join(known))
    # The first cluster on a machine loads the test image into one engine with `docker load`;
    # what that engine then holds is kept (engine_store) and every later node starts with it.
    store = engine_store()
    if not (store / "done").exists():
        cluster.start_dockerd(nodes[0])
        cluster.import_image(nodes[0])
        _keep_engine_store(nodes[0], store)
    with ThreadPoolExecutor(len(nodes)) as pool:
        list(pool.map(cluster.start_dockerd_with_image, [n for n in nodes if not n.dockerd_pid]))
    images.prune()  # what earlier code versions built and nothing has used for hours
    _write_cluster_yaml(cluster)
    cluster.save()
    return cluster


# What `docker load` writes under an engine's data root (overlay2 storage): the image and layer
# metadata and the layers' files. Not engine-id, networks, containers: each engine makes its own.
ENGINE_PARTS = ("image", "overlay2")


def engine_store() -> Path:
    """The test image as an engine stores it once `docker load` has run, kept in the image cache
    for this dockerd version and these layers. Copied as hard links into a node's data root before
    its dockerd starts, it gives an engine holding the image in a second instead of a 400 MB load
    per node. Layer files are never written in place (containers write to their own upper
    directory; a removed image unlinks its own links), so engines share them safely."""
    layers, config = image_layers(ROOT)
    version = run(["dockerd", "--version"]).stdout.strip()
    key = images._key("engine", version, [layer.diff_id for layer in layers], config.decode())
    return images.CACHE / f"engine-{key}"


def _keep_engine_store(node: Node, store: Path) -> None:
    with images.locked():
        if (store / "done").exists():
            return
        work = store.with_name(store.name + ".building")
        _remove_tree(work)
        work.mkdir(parents=True)
        for part in ENGINE_PARTS:
            run(["cp", "-al", f"{node.dir}/docker/{part}", str(work / part)])
        (work / "done").touch()
        _remove_tree(store)
        work.rename(store)


def _sshd_pids(node: Node) -> list[int]:
    """The sshd processes (listener and per-connection children, `sshd: user@pts`) in the node's
    network namespace."""
    node_ns = os.readlink(f"/proc/{node.holder_pid}/ns/net")
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            comm = open(f"/proc/{pid}/comm").read().strip()
            netns = os.readlink(f"/proc/{pid}/ns/net")
        except OSError:
            continue
        if comm.startswith("sshd") and netns == node_ns:
            out.append(int(pid))
    return out


def _remove_tree(path: Path) -> None:
    if path.exists():
        shutil.rmtree(path)


def _make_node(index: int, root: Path) -> Node:
    name = f"spark-{index}"
    node = Node(
        index,
        name,
        f"{NS_PREFIX}{index}",
        f"{SUBNET}.{10 + index}",
        f"{VETH_PREFIX}{index}",
        str(root / name),
    )
    ndir = Path(node.dir)
    (ndir / "bin").mkdir(parents=True)
    run(["ip", "netns", "add", node.netns])
    run(["ip", "link", "add", node.host_veth, "type", "veth", "peer", "name", NETDEV, "netns", node.netns])
    run(["ip", "link", "set", node.host_veth, "master", BRIDGE, "up"])
    run(["ip", "-n", node.netns, "link", "set", "lo", "up"])
    run(["ip", "-n", node.netns, "addr", "add", f"{node.ip}/24", "dev", NETDEV])
    run(["ip", "-n", node.netns, "link", "set", NETDEV, "mtu", "9000", "up"])
    run(["ip", "link", "set", node.host_veth, "mtu", "9000"])
    # Host tools of a real Spark, as stand-ins printing captured outputs.
    for tool in ("nvidia-smi", "ibdev2netdev", "dmesg", "journalctl"):
        shutil.copy(HERE / "hostbin" / tool, ndir / "bin" / tool)
    # The node's kernel log as its dmesg stand-in reads it: real boot lines of a ConnectX port
    # (tests/data/not_recognised/mlx5_probe_healthy.log), stamped at the node's "boot".
    (ndir / "kernel.log").write_text(
        "".join(
            f"2026-01-05T08:00:{10 + i:02d},{642917 + i:06d}+00:00 {line.split('] ', 1)[1]}\n"
            for i, line in enumerate(
                (DATA / "not_recognised" / "mlx5_probe_healthy.log").read_text().splitlines()
            )
        )
    )
    # The driver's NVML (a stand-in: one GB10), which the --gpus hook puts into containers.
    shutil.copy(root / "libnvidia-ml.so.1", ndir / "bin" / "libnvidia-ml.so.1")
    (ndir / "bin" / "standin.env").write_text(
        f"GPU_TABLE={DATA}/nvidia-smi/gb10-table-vllm-enginecore-truncated-mem-580.126.txt\n"
        f"GPU_APPS={DATA}/nvidia-smi/gb10-compute-apps-noheader-nounits-llamaswap782.txt\n"
        f"IBDEV_SAMPLE={DATA}/netif/ibdev2netdev-dgxspark-three-sparks-all-up.txt\n"
        f"KERNEL_LOG={ndir}/kernel.log\n"
    )
    run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(ndir / "ssh_host_ed25519_key")])
    (ndir / "sshd_config").write_text(
        f"ListenAddress {node.ip}\nPort 22\nHostKey {ndir}/ssh_host_ed25519_key\n"
        f"PidFile {ndir}/sshd.pid\nAuthorizedKeysFile {root}/client_key.pub\n"
        "PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "UsePAM no\nStrictModes no\nMaxSessions 10\nMaxStartups 50:30:100\nAcceptEnv LANG\n"
    )
    # The holder keeps the node's mount+UTS namespaces alive: own /run, own /usr/local/bin, own hostname.
    # /dev/infiniband: a tmpfs private to the node with one inert char device (like /dev/null),
    # so the non-privileged container spec (--device /dev/infiniband) runs as on a Spark.
    # /sys: the node's own sysfs (its interfaces' speed and counters, as on a real node; the host's
    # would show the host's interfaces), with the host's cgroup tree moved over for dockerd.
    (ndir / "cgroup").mkdir()
    setup = (
        f"mount --rbind /sys/fs/cgroup {ndir}/cgroup && mount -t sysfs sysfs /sys && "
        f"mount --move {ndir}/cgroup /sys/fs/cgroup && "
        "mount -t tmpfs tmpfs /dev/infiniband && mknod /dev/infiniband/uverbs0 c 1 3 && "
        f"mount -t tmpfs tmpfs /run && mkdir -p /run/sshd && mount --bind {ndir}/bin /usr/local/bin "
        f"&& hostname {name} && exec sleep 2147483647"
    )
    node.holder_pid = _spawn(
        [
            "nsenter",
            f"--net=/var/run/netns/{node.netns}",
            "unshare",
            "--mount",
            "--uts",
            "--propagation",
            "private",
            "sh",
            "-c",
            setup,
        ],
        f"{ndir}/holder.log",
    )
    deadline = time.monotonic() + 5
    while not _in_own_namespace(node):
        if time.monotonic() > deadline:
            raise ClusterError(f"namespace holder for {name} did not start; see {ndir}/holder.log")
        time.sleep(0.02)
    # `unshare` forks sleep as a child: the holder pid is the sleep that owns the namespaces.
    node.holder_pid = _sleep_child(node.holder_pid)
    return node


def _in_own_namespace(node: Node) -> bool:
    pid = _sleep_child(node.holder_pid)
    if not pid:
        return False
    try:
        return os.readlink(f"/proc/{pid}/ns/uts") != os.readlink("/proc/self/ns/uts") and os.path.exists(
            f"/proc/{pid}/root/usr/local/bin/nvidia-smi"
        )
    except OSError:
        return False


def _sleep_child(pid: int) -> int:
    """The `sleep` at the bottom of nsenter -> unshare -> sh -> sleep (exec'd, so the same pid chain)."""
    seen = pid
    for _ in range(4):
        try:
            if Path(f"/proc/{seen}/comm").read_text().strip() == "sleep":
                return seen
            children = Path(f"/proc/{seen}/task/{seen}/children").read_text().split()
        except OSError:
            return 0
        if not children:
            return 0
        seen = int(children[0])
    return 0


def _write_cluster_yaml(cluster: Cluster) -> None:
    """Only what a user must set: how to reach and log in to each node, its data address, the image
    and the model. Every other setting stays at its default; a test that needs another value sets
    it itself, visibly."""
    lines = [
        "# Generated by tests/cluster for the namespace test cluster: the must-set values only.",
        f"image: {IMAGE}",
        "model: test/tiny-model",
        "user: root",
        f"identity_file: {cluster.client_key}",
        f"known_hosts: {cluster.known_hosts}",
        "nodes:",
    ]
    for node in cluster.nodes:
        lines += [f"  - name: {node.name}", f"    host: {node.ip}", f"    data_ip: {node.ip}"]
    Path(cluster.cluster_yaml).write_text("\n".join(lines) + "\n")


@functools.cache
def plain_layers(root: Path) -> tuple[str, ...]:
    """The layers (diff ids) of the test image as import_image loads it under its tag."""
    return tuple(json.loads(image_layers(root)[1])["rootfs"]["diff_ids"])


def image_layers(
    root: Path, variant: str = "", profile: ImageProfile = IMAGES["openai"], extra_env: dict | None = None
):
    """The layers and the config of a test image (tests/cluster/images.py builds and caches them)."""
    ray = profile.ray_version if profile.ray else None
    layers = [
        images.base_layer()[1],
        images.venv_layer(ray)[1],
        images.profile_layer(profile.vllm_version, ray, profile.python, profile.archs, profile.transformers)[
            1
        ],
    ]
    if variant:
        layers.append(images.variant_layer(root, variant))
    entrypoint: list[str] = []
    env: dict[str, str] = {}
    labels: dict[str, str] = {}
    for change in profile.changes:
        verb, _, rest = change.partition(" ")
        if verb == "ENTRYPOINT":
            entrypoint = json.loads(rest)
        elif verb in ("ENV", "LABEL"):
            key, _, value = rest.partition("=")
            (env if verb == "ENV" else labels)[key] = value
    env.update(extra_env or {})
    return layers, images.image_config(layers, entrypoint, env, labels)


def build_images() -> None:
    """Every profile's layers, built (or found in the cache) before any node needs them."""
    images.build_all({p.ray_version if p.ray else None for p in IMAGES.values()})
    for profile in IMAGES.values():
        image_layers(ROOT, "", profile)


def down(root: Path = ROOT) -> None:
    """Remove everything a cluster (or a crashed earlier run) created. Idempotent."""
    killed = _pids_under(str(root))
    for pid in killed:
        _signal(pid, signal.SIGKILL)
    for netns in run(["ip", "netns", "list"], check=False).stdout.split("\n"):
        name = netns.split(" ")[0]
        if name.startswith(NS_PREFIX):
            for pid in run(["ip", "netns", "pids", name], check=False).stdout.split():
                _signal(int(pid), signal.SIGKILL)
            run(["ip", "netns", "del", name], check=False)
    for pid in _pids_under(str(root)):
        _signal(pid, signal.SIGKILL)
        killed.append(pid)
    # A namespace (and its veth) lives until its last process is gone: wait, then delete
    # any host-side veth left, so a following `up` never meets "File exists".
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in killed) and time.monotonic() < deadline:
        for p in killed:
            _reap(p)
        time.sleep(0.02)
    for line in run(["ip", "-o", "link", "show"], check=False).stdout.splitlines():
        name = line.split(":")[1].strip().split("@")[0] if ":" in line else ""
        if name.startswith(VETH_PREFIX):
            run(["ip", "link", "del", name], check=False)
    run(["ip", "link", "del", BRIDGE], check=False)
    while (
        run(["iptables", "-D", "FORWARD", "-i", BRIDGE, "-o", BRIDGE, "-j", "ACCEPT"], check=False).returncode
        == 0
    ):
        pass
    if (root / "created-dev-infiniband").exists():
        try:
            os.rmdir("/dev/infiniband")
        except OSError:
            pass
    if root.exists():
        # dockerd leaves overlay mounts under its data root; unmount before removing.
        for line in reversed(Path("/proc/mounts").read_text().splitlines()):
            target = line.split()[1]
            if target == str(root) or target.startswith(f"{root}/"):
                run(["umount", "-l", target], check=False)
        shutil.rmtree(root, ignore_errors=True)


def _pids_under(root: str) -> list[int]:
    """Processes whose command line or namespace holder mentions the cluster directory."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = (
                Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            )
        except OSError:
            continue
        # `root/`, not `root`: cluster 0's directory is a prefix of cluster 1's name.
        if f"{root}/" in cmdline or f"--net=/var/run/netns/{NS_PREFIX}" in cmdline:
            out.append(int(entry))
    return out


def _spawn(argv: list[str], log: str, env=None) -> int:
    with open(log, "ab") as fh:
        proc = subprocess.Popen(
            argv,
            stdout=fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
        )
    return proc.pid


def _alive(pid: int) -> bool:
    if not pid:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _kill_wait(pid: int, timeout: float = 10) -> None:
    if not _alive(pid):
        return
    _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _alive(pid):
        _signal(pid, signal.SIGKILL)
    _reap(pid)


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def _wait_port(node: Node, port: int, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    hexport = f":{port:04X}"
    while time.monotonic() < deadline:
        tcp = Path(f"/proc/{node.holder_pid}/net/tcp").read_text()
        if any(
            line.split()[1].endswith(hexport) and line.split()[3] == "0A" for line in tcp.splitlines()[1:]
        ):
            return
        time.sleep(0.02)
    raise ClusterError(f"nothing listens on {node.ip}:{port}; see {node.dir}")
