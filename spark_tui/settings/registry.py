"""The one settings registry.

Every setting spark-tui has is declared here, once. Command-line flags, environment
variables, YAML validation, the wizard's fields and the README's configuration table
are all derived from SETTINGS; nothing else may list settings.

Scopes:
  cluster  cluster-wide; YAML top level of the user config or cluster file, an env var, a flag.
           With per_node=True a node entry in `nodes:` may override it.
  node     only inside a `nodes:` entry (a node's identity: name, host, data address).
  user     only in the user config, env and flags (never inside a cluster file).
"""

from __future__ import annotations

from dataclasses import dataclass

from spark_tui.secret_names import SECRET_MASK
from spark_tui.settings import kinds as k

ENV_PREFIX = "SPARK_TUI_"


@dataclass(frozen=True)
class Setting:
    key: str
    kind: k.Kind
    default: object
    doc: str
    scope: str = "cluster"
    per_node: bool = False
    secret: bool = False
    required: bool = False
    short_flag: str | None = None
    # What the setting shapes: "container" (the containers `up` creates: it counts in the config
    # hash that drift compares), "connection" (how a node is reached: an edit rebuilds that node's
    # connection), "cockpit" (only the screen), "check" (only what check measures) or "supervise"
    # (how `up` watches what it launched: restart on-failure). A setting that is not "container"
    # never makes a running container look drifted.
    role: str = "container"
    # Left unset, the value is read from the node (settings/model.py Detected, core/node/probes.py
    # detected_values) as the `detected` layer, which every configured layer beats.
    detected: bool = False
    # A port the head listens on: check finds it free before a launch.
    head_port: bool = False

    @property
    def env(self) -> str | None:
        if self.scope == "node":
            return None
        return ENV_PREFIX + self.key.upper().replace(".", "_")

    @property
    def flag(self) -> str | None:
        if self.scope == "node":
            return None
        return "--" + self.key.replace("_", "-").replace(".", "-")

    @property
    def dest(self) -> str:
        return "set_" + self.key.replace(".", "_")

    # A secret also has a file form (settings/secret_file.py): the value is then in no argv and
    # no shell history. `-` is standard input.
    @property
    def file_env(self) -> str | None:
        return self.env + "_FILE" if self.secret and self.env else None

    @property
    def file_flag(self) -> str | None:
        return self.flag + "-file" if self.secret and self.flag else None

    @property
    def file_dest(self) -> str:
        return self.dest + "_file"

    @property
    def yaml_key(self) -> str:
        return f"nodes[].{self.key}" if self.scope == "node" else self.key


def _s(key, kind, default, doc, **kw) -> Setting:
    return Setting(key, kind, default, doc, **kw)


NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}"
CONTAINER_NAME = r"[a-zA-Z0-9][a-zA-Z0-9_.-]+"
NETDEV = r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,14}"
IMAGE = r"[a-z0-9][a-z0-9._/:@-]*[a-zA-Z0-9_.-]*|[a-zA-Z0-9][\w./:@-]*"

SETTINGS: tuple[Setting, ...] = (
    # --- where the cluster is described (user level) ---
    _s("cluster", k.Str(), None, "Cluster file used when --cluster is not given.", scope="user"),
    # --- the cluster ---
    _s(
        "name",
        k.Str(NAME, "letters, digits, . _ -"),
        "local",
        "Cluster name; labels every container spark-tui starts.",
    ),
    _s("head", k.Str(NAME, "a node name"), None, "Name of the head node (default: the first node)."),
    # --- node identity (only under nodes:) ---
    _s(
        "name",
        k.Str(NAME, "letters, digits, . _ -"),
        None,
        "Node name, unique in the cluster.",
        scope="node",
        required=True,
    ),
    _s(
        "host",
        k.Host(),
        None,
        "SSH host, address or ~/.ssh/config alias; `local` = this machine without SSH.",
        scope="node",
        required=True,
        role="connection",
    ),
    _s(
        "data_ip",
        k.IPv4(),
        None,
        "Node address on the RoCE/data network, used by NCCL, Ray and vLLM (default: the SSH host if it is an address).",
        scope="node",
    ),
    # --- per-node connection settings, cluster-wide defaults ---
    _s(
        "user",
        k.Str(r"[A-Za-z_][A-Za-z0-9_.-]*", "a user name"),
        None,
        "SSH user (default: ~/.ssh/config, then the local user).",
        per_node=True,
        role="connection",
    ),
    _s(
        "port",
        k.Int(1, 65535),
        None,
        "SSH port (default: ~/.ssh/config, then 22).",
        per_node=True,
        role="connection",
    ),
    _s(
        "identity_file",
        k.Str(),
        None,
        "SSH private key file (default: ~/.ssh/config and ssh-agent).",
        per_node=True,
        role="connection",
    ),
    _s(
        "known_hosts",
        k.Str(),
        "~/.ssh/known_hosts",
        "known_hosts file used to verify host keys.",
        per_node=True,
        role="connection",
    ),
    _s(
        "host_key_policy",
        k.Choice(("strict", "accept-new")),
        "strict",
        "strict: unknown or changed host keys are refused; accept-new: unknown keys are added, changed keys still refused.",
        per_node=True,
        role="connection",
    ),
    _s(
        "connect_timeout",
        k.Float(min=0.1),
        10.0,
        "SSH connect timeout in seconds.",
        per_node=True,
        role="connection",
    ),
    _s(
        "keepalive_interval",
        k.Float(min=0),
        15.0,
        "SSH keepalive interval in seconds (0 = off).",
        per_node=True,
        role="connection",
    ),
    _s(
        "max_sessions",
        k.Int(1, 64),
        8,
        "Most SSH channels open at once per node (keep below sshd's MaxSessions, 10).",
        per_node=True,
        role="connection",
    ),
    _s(
        "docker_socket",
        k.Str(r"/.*", "an absolute path"),
        "/var/run/docker.sock",
        "Docker engine socket path on the node.",
        per_node=True,
        role="connection",
    ),
    _s(
        "netdev",
        k.Str(NETDEV, "an interface name"),
        None,
        "Ethernet netdev of the data network (default: the interface holding data_ip).",
        per_node=True,
        detected=True,
    ),
    _s(
        "hca",
        k.StrList(k.Str(NETDEV, "a RoCE device name")),
        [],
        "RoCE HCA list for NCCL_IB_HCA, both twins (default: the devices mapped to netdev and its twin).",
        per_node=True,
        detected=True,
    ),
    # --- the container ---
    _s(
        "image",
        k.Str(IMAGE, "an image reference"),
        "vllm-node:latest",
        "Container image run on every node.",
        short_flag="-t",
    ),
    _s(
        "container_name",
        k.Str(CONTAINER_NAME, "docker name: [a-zA-Z0-9][a-zA-Z0-9_.-]+"),
        "vllm_node",
        "Container name on every node.",
    ),
    _s(
        "privileged",
        k.Bool(),
        True,
        "Run privileged; false uses IPC_LOCK, /dev/infiniband and limits instead.",
        per_node=True,
    ),
    _s("shm_size", k.Size(), "64g", "Shared memory size (--shm-size).", per_node=True),
    _s("memory_limit", k.Size(), "110g", "Memory limit in non-privileged mode (--memory).", per_node=True),
    _s(
        "ulimit_nofile",
        k.Int(1024, 1 << 30),
        1048576,
        "Open-files limit in the container (--ulimit nofile=N:N).",
        per_node=True,
    ),
    _s(
        "gpus",
        k.Choice(("auto", "all", "none")),
        "auto",
        "GPUs given to the container: auto = all when the node has one.",
        per_node=True,
    ),
    _s(
        "env",
        k.EnvMap(),
        {},
        "Extra container environment, cluster-wide; a node's env is merged over it.",
        per_node=True,
        short_flag="-e",
    ),
    _s(
        "volumes",
        k.StrList(),
        ["~/.cache/huggingface:/root/.cache/huggingface"],
        "Volumes HOST:CONTAINER[:ro] (the Hugging Face cache first).",
        per_node=True,
    ),
    _s(
        "memory_floor",
        k.Size(),
        "4g",
        "Abort a launch when the node's MemAvailable falls below this while the model loads.",
        per_node=True,
    ),
    _s(
        "verify_hashes",
        k.Bool(),
        False,
        "check (model.complete) and sync model also hash the model's files against their blob names; "
        "reads all the weights, about a minute per 60 GB.",
        role="check",
    ),
    _s(
        "min_free_disk",
        k.Size(),
        "50g",
        "Free space wanted on the filesystem of the model cache (first volume); check warns below it.",
        per_node=True,
    ),
    _s(
        "hf_token",
        k.Str(),
        None,
        "Hugging Face token passed as HF_TOKEN (secret, never shown; the file form keeps it out of ps and shell history).",
        secret=True,
    ),
    # --- the model and vLLM ---
    _s(
        "executor",
        k.Choice(("solo", "ray", "native")),
        None,
        "How vLLM runs: solo (`vllm serve` on the one node, no Ray, no multi-node flags), Ray, or vLLM's "
        "native --nnodes mode (default: solo on one node, ray on two or more).",
    ),
    _s("model", k.Str(), None, "Model to serve (Hugging Face id or path in the container)."),
    _s("served_model_name", k.Str(), None, "Name the API serves the model under (default: the model)."),
    _s("tensor_parallel_size", k.Int(1, 1024), None, "Tensor parallel size (default: the number of nodes)."),
    _s("pipeline_parallel_size", k.Int(1, 1024), 1, "Pipeline parallel size."),
    _s("vllm_port", k.Int(1, 65535), 8000, "vLLM API port on the head.", head_port=True),
    _s(
        "master_port",
        k.Int(1, 65535),
        29501,
        "Ray head port (executor ray) or torch master port (native); unused by solo.",
        head_port=True,
    ),
    _s("vllm_args", k.ArgList(), [], "Extra arguments appended to `vllm serve`."),
    _s(
        "nccl_debug",
        k.Choice(("", "VERSION", "WARN", "INFO", "TRACE")),
        "INFO",
        "NCCL_DEBUG in the containers (INFO lets the NCCL pane see the transport).",
    ),
    # --- launch timeouts (seconds) ---
    _s("timeouts.container", k.Float(min=0.1), 120.0, "Seconds for containers to start."),
    _s("timeouts.ray_join", k.Float(min=0.1), 120.0, "Seconds for every Ray node and GPU to join."),
    _s(
        "timeouts.nccl_init",
        k.Float(min=0.1),
        300.0,
        "Seconds from NCCL Init START to Init COMPLETE before it counts as hung.",
    ),
    _s("timeouts.ready", k.Float(min=0.1), 1800.0, "Seconds for /health and /v1/models to answer."),
    # --- keeping it serving (role "supervise": how spark-tui watches the containers, not what they
    # are, so never in the config hash) ---
    _s(
        "restart",
        k.Choice(("no", "on-failure")),
        "no",
        "on-failure: after a container crashes, `up` (which then stays attached) or the cockpit that "
        "launched it relaunches the deployment, re-running the memory check first; Docker's own restart policy is not used (it "
        "would skip that check and restart one container of a cluster whose peers lost their rank).",
        role="supervise",
    ),
    _s(
        "restart_max",
        k.Int(1, 100),
        3,
        "Restarts allowed within restart_window; one more crash is a restart loop: stopped and named.",
        role="supervise",
    ),
    _s(
        "restart_window",
        k.Float(min=1.0),
        600.0,
        "Seconds over which restart_max counts restarts.",
        role="supervise",
    ),
    # --- the cockpit ---
    _s(
        "theme",
        k.Str(NAME, "a theme name"),
        "spark-dark",
        "Cockpit theme (themes/ and $XDG_DATA_HOME/spark-tui/themes).",
        role="cockpit",
    ),
    _s(
        "log_buffer_lines",
        k.Int(100, 10_000_000),
        100_000,
        "Lines kept per log view (older lines are dropped).",
        role="cockpit",
    ),
    _s("refresh_interval", k.Float(min=0.2), 2.0, "Seconds between dashboard refreshes.", role="cockpit"),
    _s(
        "metrics_interval",
        k.Float(min=0.5),
        5.0,
        "Seconds between scrapes of the head's vLLM /metrics once serving (rates are over this span).",
        role="cockpit",
    ),
    _s(
        "metrics_window",
        k.Float(min=5.0),
        60.0,
        "Seconds of /metrics history that TTFT, ITL and e2e latency p50/p95 are computed over.",
        role="cockpit",
    ),
    _s(
        "metrics_max_bytes",
        k.Int(4096, 256 * 1024 * 1024),
        8 * 1024 * 1024,
        "Largest /metrics answer read; a longer one is refused with a message, not parsed.",
        role="cockpit",
    ),
    _s("readonly", k.Bool(), False, "Disable launch and teardown in the cockpit.", role="cockpit"),
    _s(
        "keys",
        k.KeyMap(),
        {},
        "Key remapping: binding id = keys, e.g. teardown: ctrl+x (SPARK_TUI_KEYS: id=keys;id=keys).",
        role="cockpit",
    ),
    # --- check --fabric ---
    _s(
        "fabric_tool",
        k.Choice(("auto", "ib_write_bw", "iperf3", "tcp")),
        "auto",
        "What check --fabric measures with: auto takes ib_write_bw (perftest) where both nodes have it and "
        "the RoCE device, else iperf3, else a built-in TCP copy.",
        role="check",
    ),
    _s(
        "fabric_seconds",
        k.Float(min=0.2),
        2.0,
        "Seconds each check --fabric measurement sends for (per node pair and twin).",
        role="check",
    ),
    _s(
        "fabric_timeout",
        k.Float(min=1.0),
        15.0,
        "Seconds the whole check --fabric may take; measurements not started by then are skipped.",
        role="check",
    ),
    # --- upgrade: when a candidate image counts as a regression (it is rolled back) ---
    _s(
        "upgrade.max_decode_drop",
        k.Float(min=0.0),
        10.0,
        "Percent the candidate's decode tokens/s (per request, p50) may fall below the known-good's at "
        "any concurrency level before upgrade rolls back.",
        role="check",
    ),
    _s(
        "upgrade.max_ttft_rise",
        k.Float(min=0.0),
        20.0,
        "Percent the candidate's TTFT p95 may rise above the known-good's at any concurrency level "
        "before upgrade rolls back.",
        role="check",
    ),
    _s(
        "upgrade.max_errors",
        k.Int(0, 1_000_000),
        0,
        "Failed requests the candidate's bench may have before upgrade rolls back (0: any error).",
        role="check",
    ),
    _s(
        "upgrade.bench_recent",
        k.Float(min=0.0),
        3600.0,
        "Seconds a bench run of the known-good deployment (same setup and load) counts as recent; "
        "older, upgrade benches it first.",
        role="check",
    ),
    _s(
        "upgrade.restore_wait",
        k.Float(min=0.0),
        120.0,
        "Seconds a rollback waits for a lost node to answer again before it gives up restoring: the "
        "known-good runs on all its nodes or not at all, so nothing is removed or relaunched without it.",
        role="check",
    ),
)

CLUSTER_SETTINGS = tuple(s for s in SETTINGS if s.scope != "node")
NODE_SETTINGS = tuple(s for s in SETTINGS if s.scope == "node" or s.per_node)
BY_KEY = {s.key: s for s in CLUSTER_SETTINGS}
NODE_BY_KEY = {s.key: s for s in NODE_SETTINGS}
BY_ENV = {s.env: s for s in CLUSTER_SETTINGS}
BY_FILE_ENV = {s.file_env: s for s in CLUSTER_SETTINGS if s.file_env}
ROLES = ("container", "connection", "cockpit", "check", "supervise")
# The groups, derived: nothing else lists setting names.
CONNECTION_KEYS = tuple(s.key for s in NODE_SETTINGS if s.role == "connection")
DETECTED_KEYS = tuple(s.key for s in NODE_SETTINGS if s.detected)
TIMEOUT_KEYS = tuple(s.key for s in CLUSTER_SETTINGS if s.key.startswith("timeouts."))
HEAD_PORT_KEYS = tuple(s.key for s in CLUSTER_SETTINGS if s.head_port)

# Environment variables that look like settings but are not read by spark-tui.
# Each is what some launcher script or habit uses for a spark-tui setting.
LOOKALIKE_ENV = {
    "IMAGE_NAME": "image",
    "CONTAINER_IMAGE": "image",
    "VLLM_IMAGE": "image",
    "DOCKER_IMAGE": "image",
    "CONTAINER_NAME": "container_name",
    "ETH_IF": "netdev",
    "IB_IF": "hca",
    "NCCL_IB_HCA": "hca",
    "NCCL_SOCKET_IFNAME": "netdev",
    "NCCL_DEBUG": "nccl_debug",
    "HF_TOKEN": "hf_token",
    "MASTER_PORT": "master_port",
    "VLLM_PORT": "vllm_port",
    "MODEL": "model",
}


def how_to_set(setting: Setting) -> str:
    return f"{setting.flag} VALUE, {setting.env}=VALUE, or `{setting.key}:` in the cluster file"


def markdown_table() -> str:
    """The README's configuration table, derived from SETTINGS."""
    rows = [
        "| YAML key | environment | flag | default | per node | doc |",
        "|---|---|---|---|---|---|",
    ]
    for s in SETTINGS:
        default = (
            SECRET_MASK
            if s.secret and s.default
            else s.kind.show(s.default)
            if s.default not in (None, [], {})
            else "—"
        )
        flag = s.flag or "—"
        if s.short_flag:
            flag = f"{s.short_flag}, {flag}"
        per_node = (
            "node only"
            if s.scope == "node"
            else "yes"
            if s.per_node
            else "user config"
            if s.scope == "user"
            else ""
        )
        doc = s.doc + (" **secret**" if s.secret else "")
        env = f"`{s.env}`" if s.env else "—"
        flag = f"`{flag}`" if s.flag else "—"
        if s.file_env and s.file_flag:  # the file form: PATH, or - for standard input
            env += f", `{s.file_env}=PATH`"
            flag += f", `{s.file_flag} PATH`"
        rows.append(
            f"| `{s.yaml_key}` | {env} | "
            f"{flag} | {('`' + default + '`') if default != '—' else '—'} | "
            f"{per_node} | {doc.replace('|', '/')} |"
        )
    return "\n".join(rows)
