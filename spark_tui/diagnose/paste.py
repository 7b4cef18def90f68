"""Undo how people paste into issue threads, before any parser sees the text.

- a leading `$ command` or shell prompt line (`user@host:~$ cmd`, `[root@host ~]# cmd`, behind the
  `(base) ` of an activated conda or virtualenv environment): dropped, and the command kept, for it
  says what the output is;
- `docker compose logs` prefixes (`vllm-1  | `): dropped;
- Ray's `[repeated 3x across cluster]` suffix: counted, and left for the parsers, which read it
  as they do in live logs (parsers/ray_lines.py: the line counts for the node its prefix names,
  the occurrences it does not name for none); a `[Stage-N]` prefix: dropped;
- markdown quote markers (`> `) and code fences (```): dropped;
- tqdm's carriage-return redraws: split into lines;
- lines a terminal cut at 80 columns (a log copied from a terminal window, or from a viewer that
  wraps): joined again, so a failure line reads as the one line its program printed.
Log prefixes the parsers understand themselves (`(RayWorkerWrapper pid=N, ip=A)`,
`(EngineCore_DP0 pid=N)`, mpirun `[N]`, pdsh `host: `) are left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from spark_tui.parsers.ray_lines import unfold

# The virtualenv or conda environment a shell shows before its prompt: `(base) user@host:~$ cmd`,
# `(env) (base) [user@host dir]$ cmd` (no space inside, unlike a log prefix such as `(APIServer pid=1)`).
# A prompt may show the git branch after its folder: `(test) user@host:~/ray1 user/branch$ cmd`.
ENV_PREFIX = r"(?:\([\w.@:/+-]{1,60}\)\s+)*"
PROMPT = re.compile(
    rf"^{ENV_PREFIX}"
    r"(?:\$|#|>>>|\[[^\]\n]{1,80}\][#$]|[\w.-]+@[\w.-]+(?::[^\s$#]*)?(?: [\w./-]+)?[$#]|[\w.~-]+[$#])"
    r"\s+(?P<cmd>\S.*)$"
)
# `docker compose up` / `logs` print each line behind its container's name, padded, and ` | `: Compose v2
# `vllm-1  | `, v1 `vllm_1  | `, a service with a container_name (`openedai-images-flux  | `) no index.
# A log level in that place is a logger's own column (loguru's `INFO     | `), never a container.
COMPOSE = re.compile(
    r"^(?!(?:TRACE|DEBUG|INFO|NOTICE|SUCCESS|WARN|WARNING|ERROR|CRITICAL|FATAL)\s)"
    r"(?P<svc>[A-Za-z][\w.-]{0,62})\s+\|(?: |$)"
)
STAGE = re.compile(r"^\[Stage-\d+\]\s*")
FENCE = re.compile(r"^\s*```")
# The width a terminal wrapped a pasted log at: several lines exactly this long and none longer
# (odysseus-dev/odysseus#207, #500, #3667: vLLM logs copied from an 80-column terminal, a line cut
# mid-word or at a space the copy dropped).
WRAP_WIDTH = 80
# What starts a line of its own, so never the rest of a wrapped one: a blank line, a process prefix
# (`(EngineCore pid=1)`, `(RayWorkerWrapper pid=2, ip=A)`), a bracket or table border, a log level,
# a date, a traceback and its frames.
RECORD_START = re.compile(
    r"^(?:\s*$|\(\w[\w ]*(?:pid|rank)=|[\[|+]|(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\b"
    r"|\d{4}-\d\d-\d\d|Traceback|\s+File \")"
)
# A line that begins as the one before it does (`nvmlDeviceGetMemoryInfo    -> ...` then
# `nvmlDeviceGetMemoryInfo_v2 -> ...`, both 80 wide) is the next row, not the rest of a wrapped one.
ROW_START = 8


@dataclass
class Cleaned:
    text: str
    commands: list[str] = field(default_factory=list)  # the `$ cmd` lines the paste held
    services: set[str] = field(default_factory=set)  # compose services whose prefix was dropped
    repeated: int = 0  # lines Ray folded as [repeated Nx across cluster]

    @property
    def command(self) -> str:
        return self.commands[0] if self.commands else ""


def clean(text: str) -> Cleaned:
    out: Cleaned = Cleaned("")
    lines: list[str] = []
    physical = [line for raw in text.replace("\r\n", "\n").split("\n") for line in raw.split("\r")]
    for line in unwrap(physical):  # tqdm redraws in place (\r); a terminal's wraps
        if FENCE.match(line):
            continue
        if line.startswith("> "):
            line = line[2:]
        m = PROMPT.match(line)
        if m and _looks_like_command(m.group("cmd")):
            out.commands.append(m.group("cmd").strip())
            continue
        m = COMPOSE.match(line)
        if m:
            out.services.add(m.group("svc"))
            line = line[m.end() :]
        if line.startswith("[Stage-"):
            line = STAGE.sub("", line, count=1)
        times = unfold(line)[1]
        if times > 1:  # counted; the suffix stays for the parsers, which unfold it as live logs
            out.repeated += times
        lines.append(line)
    out.text = "\n".join(lines)
    return out


def unwrap(lines: list[str]) -> list[str]:
    """Join the lines a terminal cut at WRAP_WIDTH columns. Only a paste that shows the cut (two
    lines or more exactly that wide, none wider) is touched; a line of the full width goes on in the
    next one unless that one starts a record of its own; a line one short lost the space it was cut
    at (copies drop trailing spaces), so it is joined with one."""
    widths = [len(line) for line in lines]
    if not widths or max(widths) != WRAP_WIDTH or widths.count(WRAP_WIDTH) < 2:
        return lines
    out: list[str] = []
    last = ""  # the physical line that ends out[-1]
    for line in lines:
        if (
            out
            and len(last) in (WRAP_WIDTH, WRAP_WIDTH - 1)
            and not RECORD_START.match(line)
            and line[:ROW_START] != last[:ROW_START]  # aligned rows of one table or logger, full width each
        ):
            out[-1] += ("" if len(last) == WRAP_WIDTH else " ") + line
        else:
            out.append(line)
        last = line
    return out


# A prompt line is only taken for one when what follows reads like a command someone runs to
# get diagnostics (a `# comment` or a log line starting with `#` must not be eaten).
COMMANDS = (
    "nvidia-smi",
    "ibstat",
    "ibstatus",
    "show_gids",
    "ibdev2netdev",
    "ibv_devinfo",
    "ip ",
    "ip\t",
    "docker",
    "ray ",
    "vllm",
    "cat ",
    "kubectl",
    "journalctl",
    "dmesg",
    "mpirun",
    "torchrun",
    "python",
    "./",
    "sudo ",
    "all_reduce_perf",
    "grep",
    "tail",
    "ssh ",
    "spark-tui",
    "free",
    "lspci",
    "ethtool",
)


def _looks_like_command(cmd: str) -> bool:
    return cmd.startswith(COMMANDS) or cmd in ("ip", "ibstat", "nvidia-smi", "show_gids", "ibdev2netdev")
