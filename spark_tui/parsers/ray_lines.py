"""How Ray prints a worker actor's output into the driver's log, and which node a line came from.

Ray forwards what an actor prints to the driver (on spark-tui's clusters: `vllm serve` in the head's
container), prefixed `(RayWorkerWrapper pid=N, ip=A)`; an actor on the driver's own node gets no
`ip=` (`(RayWorkerWrapper pid=N)`). vLLM V1 adds its engine process in front:
`(EngineCore_DP0 pid=M) (RayWorkerWrapper pid=N, ip=A) ...`.

Ray's log deduplication (ray/_private/ray_logging, on unless RAY_DEDUP_LOGS=0) keys a line by its
words without digits or hex, prints the first occurrence at once and, when other actors print a
line of the same key within the window (5 s), prints the LAST of them later, out of order, with a
suffix: `(RayWorkerWrapper pid=660, ip=A) ... Using network IB [repeated 14x across cluster]`
(colored green; the first such line also carries `(Ray deduplicates logs by default. ...)`).
N counts the occurrences held back, the shown one included: the shown line and its prefix are that
last actor's; N-1 further occurrences came from actors it does not name. As words with digits are
dropped from the key, those others printed a line of the same shape, not necessarily the same
values (`NCCL_IB_DISABLE set by environment to 1.` folds with `... to 0.`).

A failed remote call names the actor's node as Ray raises it in the driver:
`ray.exceptions.RayTaskError(OutOfMemoryError): ray::RayWorkerWrapper.execute_method() (pid=2981,
ip=10.98.0.12, actor_id=..., repr=...)`; an actor that died (a crash, a kill) as
`ray.exceptions.ActorDiedError: ...` followed by lines `\tpid: N`, `\tip: A`; the raylet as
`(raylet) A worker died or was killed ... Worker IP address: A ...`.
"""

from __future__ import annotations

import re

ACTOR = re.compile(r"\((?P<actor>\w+) pid=(?P<pid>\d+)(?:, ip=(?P<ip>[\d.]+))?\)")
# The suffix, with or without its colour codes (an ESC byte a paste lost leaves `[32m`).
FOLDED = re.compile(
    r"\s*(?:\x1b?\[\d+m)?\s*\[repeated (?P<n>\d+)x across cluster\]"
    r"(?: \(Ray deduplicates logs by default\.[^)]*\))?\s*(?:\x1b?\[0m)?\s*$"
)
TASK_ERROR = re.compile(
    r"RayTaskError(?:\((?P<exc>\w+)\))?: ray::(?P<call>[\w.]+)\(\) \(pid=(?P<pid>\d+), ip=(?P<ip>[\d.]+)"
)

WORKER_IP = re.compile(r"Worker IP address: (?P<ip>[\d.]+)")
# The `\tip: A` line of an ActorDiedError (after any process prefix vLLM put in front).
DIED_IP = re.compile(r"(?:^|\) )\s*ip: (?P<ip>[\d.]+)\s*$")


def unfold(line: str) -> tuple[str, int]:
    """(the line without Ray's dedup suffix, how many occurrences it stands for): 1 for a plain line."""
    if "across cluster]" not in line:
        return line, 1
    m = FOLDED.search(line)
    if m is None:
        return line, 1
    return line[: m.start()], int(m.group("n"))


def actor_of(line: str) -> tuple[str, str | None] | None:
    """The Ray/vLLM process prefix of a line: (actor name, ip or None). With two prefixes
    (`(EngineCore_DP0 pid=1) (RayWorkerWrapper pid=2, ip=A)`) the one with an address wins."""
    found = [(m.group("actor"), m.group("ip")) for m in ACTOR.finditer(line[:200])]
    return next((f for f in found if f[1]), found[0] if found else None)


def origin_ip(line: str) -> str | None:
    """The address of the node a line came from, when the line says one: the actor prefix's
    `ip=`, or the `ip=` of a RayTaskError naming the failed actor call. None: the line is the
    log's own node's (no prefix, or an actor on the driver's node)."""
    if "ip" not in line and "IP address" not in line:
        return None
    m = TASK_ERROR.search(line) or WORKER_IP.search(line)
    if m:
        return m.group("ip")
    actor = actor_of(line)
    return actor[1] if actor else None
