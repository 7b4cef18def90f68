"""Undo how people paste into issue threads, before any parser sees the text.

- a leading `$ command` or shell prompt line (`user@host:~$ cmd`, `[root@host ~]# cmd`, behind the
  `(base) ` of an activated conda or virtualenv environment): dropped, and the command kept, for it
  says what the output is;
- `docker compose logs` prefixes (`vllm-1  | `): dropped;
- Ray's `[repeated 3x across cluster]` suffix: counted, and left for the parsers, which read it
  as they do in live logs (parsers/ray_lines.py: the line counts for the node its prefix names,
  the occurrences it does not name for none); a `[Stage-N]` prefix: dropped;
- markdown quote markers (`> `) and code fences (```): dropped;
- tqdm's carriage-return redraws: split into lines.
Log prefixes the parsers understand themselves (`(RayWorkerWrapper pid=N, ip=A)`,
`(EngineCore_DP0 pid=N)`, mpirun `[N]`, pdsh `host: `) are left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from spark_tui.parsers.ray_lines import unfold

# The virtualenv or conda environment a shell shows before its prompt: `(base) user@host:~$ cmd`,
# `(env) (base) [user@host dir]$ cmd` (no space inside, unlike a log prefix such as `(APIServer pid=1)`).
ENV_PREFIX = r"(?:\([\w.@:/+-]{1,60}\)\s+)*"
PROMPT = re.compile(
    rf"^{ENV_PREFIX}"
    r"(?:\$|#|>>>|\[[^\]\n]{1,80}\][#$]|[\w.-]+@[\w.-]+(?::[^\s$#]*)?[$#]|[\w.~-]+[$#])\s+(?P<cmd>\S.*)$"
)
COMPOSE = re.compile(r"^(?P<svc>[\w.-]+-\d+)\s+\| ?")
STAGE = re.compile(r"^\[Stage-\d+\]\s*")
FENCE = re.compile(r"^\s*```")


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
    for raw in text.replace("\r\n", "\n").split("\n"):
        for line in raw.split("\r"):  # tqdm redraws in place
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
