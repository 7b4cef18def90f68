"""The exact container spec per node, derived from the resolved config.

The same spec feeds `spark-tui plan` (printed, with the equivalent `docker run` line,
secrets masked), the launcher (Docker SDK create arguments) and drift detection.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass, field

from spark_tui.core.node import labels
from spark_tui.secret_names import mask_args
from spark_tui.settings.container_env import PER_NODE_VARS
from spark_tui.settings.model import DerivedVar
from spark_tui.settings.provenance import not_set_lines
from spark_tui.settings.registry import Setting
from spark_tui.settings.resolve import Config, NodeConfig


@dataclass
class ContainerSpec:
    node: str
    role: str  # head | worker
    image: str
    name: str
    labels: dict[str, str]
    env: list[DerivedVar]  # the node's container_env without the variables an `env` entry overrode
    volumes: list[str]
    command: list[str]
    privileged: bool
    gpus: str  # all | none | auto (decided per node once its GPU is probed)
    shm_size: str
    memory_limit: str | None
    cap_add: list[str] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)
    ulimits: dict[str, tuple[int, int]] = field(default_factory=dict)
    pids_limit: int | None = None
    network: str = "host"
    ipc: str = "host"
    # `~` volumes whose node home is not known yet (node not reached): never sent to Docker.
    unexpanded: list[str] = field(default_factory=list)
    # Variables spark-tui would derive but did not, with why (HF_HUB_OFFLINE before model.complete).
    env_not_set: list[tuple[str, str]] = field(default_factory=list)

    @property
    def entrypoint(self) -> list[str]:
        """The program spark-tui runs, set as the container's ENTRYPOINT so that the image's own
        (`vllm serve` in vllm/vllm-openai, a launcher script in single-purpose images) never
        swallows the command. The community launcher and vLLM's run_cluster.sh do the same."""
        return self.command[:1]

    @property
    def cmd(self) -> list[str]:
        return self.command[1:]

    def docker_run(self, masked: bool = True) -> str:
        """The equivalent `docker run` line (secrets masked unless asked not to)."""
        argv = ["docker", "run", "-d", "--name", self.name, f"--network={self.network}", f"--ipc={self.ipc}"]
        argv += ["--privileged"] if self.privileged else []
        for cap in self.cap_add:
            argv += ["--cap-add", cap]
        for dev in self.devices:
            argv += ["--device", dev]
        if self.gpus in ("all", "auto"):
            argv += ["--gpus", "all"]
        argv += [f"--shm-size={self.shm_size}"]
        if self.memory_limit:
            argv += [f"--memory={self.memory_limit}"]
        if self.pids_limit:
            argv += [f"--pids-limit={self.pids_limit}"]
        for name, (soft, hard) in self.ulimits.items():
            argv += ["--ulimit", f"{name}={soft}:{hard}"]
        for key, value in self.labels.items():
            argv += ["--label", f"{key}={value}"]
        for vol in self.volumes:
            argv += ["-v", vol]
        for e in self.env:
            argv += ["-e", f"{e.name}={e.shown() if masked else e.value}"]
        argv += ["--entrypoint", *self.entrypoint, self.image, *(mask_args(self.cmd) if masked else self.cmd)]
        return shlex.join(argv)


def config_hash(config: Config) -> str:
    """A short hash of everything that shapes the containers, so drift and restarts can be matched:
    the registry's container settings only (cluster-wide and each node's), never a secret. How a
    node is reached, what the cockpit shows and what check measures leave a container as it is."""
    data = {
        "values": {k: v.value for k, v in config.values.items() if _shapes_container(v.setting)},
        "nodes": [
            {k: v.value for k, v in n.values.items() if _shapes_container(v.setting)} for n in config.nodes
        ],
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _shapes_container(setting: Setting) -> bool:
    return setting.role == "container" and not setting.secret


def _command(config: Config, node: NodeConfig, head: NodeConfig) -> list[str]:
    ex = config["executor"]
    port = str(config["master_port"])
    if ex == "solo":
        # One node: `vllm serve` alone, no Ray, no rendezvous, so no address and no master port.
        return vllm_serve_args(config)
    if ex == "ray":
        if node.is_head:
            return [
                "ray",
                "start",
                "--block",
                "--head",
                "--port",
                port,
                "--node-ip-address",
                head["data_ip"] or "",
                "--include-dashboard=false",
                "--disable-usage-stats",
            ]
        return [
            "ray",
            "start",
            "--block",
            f"--address={head['data_ip']}:{port}",
            "--node-ip-address",
            node["data_ip"] or "",
        ]
    rank = (
        sorted(n.index for n in config.nodes if not n.is_head).index(node.index) + 1
        if not node.is_head
        else 0
    )
    argv = vllm_serve_args(config) + [
        "--nnodes",
        str(len(config.nodes)),
        "--node-rank",
        str(rank),
        "--master-addr",
        head["data_ip"] or "",
        "--master-port",
        port,
    ]
    return argv + (["--headless"] if not node.is_head else [])


def vllm_serve_args(config: Config) -> list[str]:
    """`vllm serve` as run on the head (Ray) or on every node (native)."""
    argv = [
        "vllm",
        "serve",
        config["model"] or "",
        "--served-model-name",
        config["served_model_name"] or config["model"] or "",
        "--tensor-parallel-size",
        str(config["tensor_parallel_size"]),
        "--pipeline-parallel-size",
        str(config["pipeline_parallel_size"]),
        "--port",
        str(config["vllm_port"]),
    ]
    if config["executor"] == "ray":
        argv += ["--distributed-executor-backend", "ray"]
    return argv + list(config["vllm_args"])


def build(config: Config) -> list[ContainerSpec]:
    head = config.head
    chash = config_hash(config)
    specs = []
    for node in config.nodes:
        role = "head" if node.is_head else "worker"
        env = [v for v in node.container_env if v.overridden_by is None]
        privileged = node["privileged"]
        volumes, unexpanded = _volumes(node)
        specs.append(
            ContainerSpec(
                node=node.name,
                role=role,
                image=config["image"],
                name=config["container_name"],
                labels={
                    labels.CLUSTER: config["name"],
                    labels.ROLE: role,
                    labels.NODE: node.name,
                    labels.CONFIG_HASH: chash,
                    labels.EXECUTOR: config["executor"],
                },
                env=env,
                volumes=volumes,
                unexpanded=unexpanded,
                command=_command(config, node, head),
                privileged=privileged,
                gpus=node["gpus"],
                shm_size=node["shm_size"],
                memory_limit=None if privileged else node["memory_limit"],
                cap_add=[] if privileged else ["IPC_LOCK"],
                # RDMA devices only for traffic between nodes: a solo container needs none.
                devices=[] if privileged or config["executor"] == "solo" else ["/dev/infiniband"],
                pids_limit=None if privileged else 4096,
                ulimits={"nofile": (node["ulimit_nofile"], node["ulimit_nofile"])},
                env_not_set=list(node.env_not_set),
            )
        )
    return specs


def _volumes(node: NodeConfig) -> tuple[list[str], list[str]]:
    """Volumes with `~` expanded to the node's own home (Docker takes `~` for a volume name and
    refuses it), and those that cannot be expanded yet because the node was not reached."""
    volumes, unexpanded = [], []
    for volume in node["volumes"]:
        host, sep, rest = volume.partition(":")
        expanded = node.expand_home(host)
        if expanded is None:
            unexpanded.append(volume)
            volumes.append(volume)
        else:
            volumes.append(expanded + sep + rest)
    return volumes, unexpanded


def volume_notes(node: NodeConfig, spec: ContainerSpec) -> list[str]:
    """Where each volume's host path came from, when it was rewritten."""
    notes = []
    for requested, used in zip(node["volumes"], spec.volumes, strict=True):
        if requested in spec.unexpanded:
            notes.append(
                f"{requested.split(':')[0]}: ~ NOT expanded ({node.name} not reached: its home is unknown); up refuses it"
            )
        elif requested != used:
            where = "this machine's home" if node.local else f"{node.home_source}, detected"
            notes.append(f"{requested} -> {used.split(':')[0]} (~ = {where})")
    return notes


ENTRYPOINT_WHY = "whatever ENTRYPOINT the image has would otherwise run in front of the command"


def keep_per_node_script() -> str:
    """Shell run on the head before `vllm serve` (executor ray): the per-node variables listed in
    vLLM's ray_non_carry_over_env_vars.json, where vLLM looks for it (VLLM_CONFIG_ROOT, else
    $XDG_CONFIG_HOME/vllm, else ~/.config/vllm)."""
    names = shlex.quote(json.dumps(sorted(PER_NODE_VARS)))
    return (
        'd="${VLLM_CONFIG_ROOT:-${XDG_CONFIG_HOME:-$HOME/.config}/vllm}"; '
        f'mkdir -p "$d" && printf %s {names} > "$d/ray_non_carry_over_env_vars.json"; '
    )


def as_text(
    specs: list[ContainerSpec], config: Config, entrypoint_notes: dict[str, str] | None = None
) -> str:
    """The plan as text; `entrypoint_notes` says per node what the image's own ENTRYPOINT is."""
    entrypoint_notes = entrypoint_notes or {}
    lines = []
    if config.warnings:
        lines += ["WARNINGS"] + [f"  ! {w}" for w in config.warnings] + [""]
    if config["executor"] == "ray":
        lines.append(f"then on the head: {shlex.join(mask_args(vllm_serve_args(config)))}")
        lines.append(
            "  with ray_non_carry_over_env_vars.json listing "
            + ", ".join(sorted(PER_NODE_VARS))
            + " (vLLM would give every worker the head's values)"
        )
        lines.append("")
    for spec in specs:
        node = config.node(spec.node)
        lines.append(f"NODE {spec.node} ({spec.role})  container {spec.name}  image {spec.image}")
        lines.append(
            "  labels: "
            + ", ".join(f"{k}={v}" for k, v in spec.labels.items())
            + f" (and, set by up: {labels.LAUNCHED_BY}, {labels.LAUNCHED_AT})"
        )
        lines.append("  env:")
        for e in spec.env:
            lines.append(f"    {e.name}={e.shown()}  <- {e.derived_from}")
        lines += not_set_lines(spec.env_not_set)
        lines.append("  volumes: " + (", ".join(spec.volumes) or "none"))
        lines += [f"    {note}" for note in volume_notes(node, spec)]
        mode = (
            "privileged"
            if spec.privileged
            else f"non-privileged: cap IPC_LOCK, {''.join(f'device {d}, ' for d in spec.devices)}memory {spec.memory_limit}, pids 4096"
        )
        lines.append(
            f"  network host, ipc host, shm {spec.shm_size}, gpus {spec.gpus}, ulimit nofile {spec.ulimits['nofile'][0]}, {mode}"
        )
        lines.append(
            f"  entrypoint: {shlex.join(spec.entrypoint)} (set by spark-tui: {entrypoint_notes.get(spec.node, ENTRYPOINT_WHY)})"
        )
        lines.append("  command: " + shlex.join(mask_args(spec.command)))
        lines.append("  " + spec.docker_run())
        lines.append("")
    return "\n".join(lines).rstrip()
