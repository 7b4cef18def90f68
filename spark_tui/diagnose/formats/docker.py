"""`docker inspect` (also podman's, a State or Health object on its own, a paste cut short) and
`docker ps --format '{{json .}}'` / `docker compose ps --format json`: state, exit code, OOMKilled,
health."""

from __future__ import annotations

import re
import shlex

from spark_tui.diagnose.formats.values import (
    braced,
    json_objects,
    load_json,
    pasted_command,
    unmarked,
    verdict,
)
from spark_tui.diagnose.paste import Cleaned

STATE_KEYS = {
    "Status",
    "Running",
    "Paused",
    "Restarting",
    "OOMKilled",
    "Dead",
    "Pid",
    "ExitCode",
    "Error",
    "StartedAt",
    "FinishedAt",
}


def is_state(d: dict) -> bool:
    """A container's State object on its own (`docker inspect --format '{{json .State}}'`)."""
    return len(STATE_KEYS & set(d)) >= 5 and "ExitCode" in d


def is_health(d: dict) -> bool:
    """A container's Health object on its own (`--format '{{json .State.Health}}'`, jq)."""
    return {"Status", "FailingStreak"} <= set(d)


def is_ps_row(d: dict) -> bool:
    """A row of `docker ps --format '{{json .}}'` (any version), of `docker compose ps --format
    json` or of a compose-cli context: a container's name or ID, its image or service, a status."""
    return (
        bool({"Names", "Name", "ID", "Id"} & set(d))
        and bool({"Image", "Service"} & set(d))
        and bool({"Status", "State"} & set(d))
        and not isinstance(d.get("State"), dict)
        and "Config" not in d
    )


INSPECT_ID = re.compile(r'^\s*"Id": "(?P<id>[0-9a-f]{12,64})"', re.M)
INSPECT_STATE = re.compile(r'^\s*"State": \{', re.M)
STATE_FIELD = re.compile(r'^\s*"(\w+)": ("[^"\n]*"|-?\d+|true|false|null),?\s*$', re.M)


def cut_inspect(text: str) -> list[dict]:
    """The containers of a `docker inspect` output that is not whole JSON (a paste cut short):
    each one's Id, Name and its State object, which is read as JSON on its own."""
    rows = []
    ids = list(INSPECT_ID.finditer(text))
    for i, m in enumerate(ids):
        end = ids[i + 1].start() if i + 1 < len(ids) else len(text)
        part = text[m.start() : end]
        st = INSPECT_STATE.search(part)
        if st is None:
            continue
        state = load_json(braced(part, st.end() - 1))
        if not isinstance(state, dict):  # the paste ends inside State (a long Health log): its fields
            state = _state_fields(part[st.end() :])
            if "Status" not in state:
                continue
        name = re.search(r'^\s*"Name": "(?P<name>[^"]*)"', part, re.M)
        rows.append({"Id": m.group("id"), "Name": name.group("name") if name else "", "State": state})
    return rows


def _state_fields(text: str) -> dict:
    """A State's own fields read line by line (the paste ends inside it, or is a window of it),
    with its Health's status when the window holds it."""
    before, _, health = text[:4000].partition('"Health"')
    state: dict[str, object] = {
        k: load_json(v) for k, v in STATE_FIELD.findall(before) if k in STATE_KEYS | {"ConmonPid"}
    }
    if health:
        status = re.search(r'"Status":\s*"([^"\n]*)"', health[:300])
        streak = re.search(r'"FailingStreak":\s*(\d+)', health[:300])
        state["Health"] = {
            "Status": status.group(1) if status else None,
            "FailingStreak": int(streak.group(1)) if streak else None,
        }
    return state


def loose_state(text: str) -> dict:
    """A State object without its container around it: after an author's '...', or a window of
    its fields (podman inspect): at least five of State's own fields, ExitCode among them."""
    st = INSPECT_STATE.search(text)
    if st is not None:
        state = load_json(braced(text, st.end() - 1))
        if isinstance(state, dict) and is_state(state):
            return state
    state = _state_fields(text[st.end() :] if st else text)
    return state if len(STATE_KEYS & set(state)) >= 5 and "ExitCode" in state else {}


def _inspect_rows(text: str) -> list[dict]:
    """Containers of a docker/podman inspect paste: the whole output, a State or a Health object
    asked for with --format (or jq), a paste cut short, or a State without its container."""
    rows = []
    for d in json_objects(text):
        if isinstance(d.get("State"), dict):
            rows.append(d)
        elif is_state(d):
            rows.append({"State": d})
        elif is_health(d):
            rows.append({"State": {"Health": d}})
    if rows:
        return rows
    rows = cut_inspect(text)
    if rows:
        return rows
    state = loose_state(text)
    return [{"State": state}] if state else []


def _status(state: dict) -> str | None:
    """The container's status; derived from the flags when the paste lacks Status (old Docker,
    a podman window)."""
    if state.get("Status"):
        return str(state["Status"])
    if state.get("Restarting"):
        return "restarting"
    if state.get("Dead"):
        return "dead"
    if state.get("Running") or (isinstance(state.get("Pid"), int) and state["Pid"] > 0):
        return "running"
    if "ExitCode" in state and str(state.get("FinishedAt", "")).startswith("0001-"):
        return "created"
    return "exited" if "ExitCode" in state else None


def _inspected(cmd: str) -> str:
    """The container a `docker inspect [--format ...] NAME` command names, if it names one."""
    try:
        words = shlex.split(cmd.split("|")[0])
    except ValueError:
        return ""
    names, skip = [], False
    for w in words[2:]:
        if skip:
            skip = False
        elif w in ("-f", "--format", "--type"):
            skip = True
        elif not w.startswith("-"):
            names.append(w)
    return names[0] if len(names) == 1 and re.fullmatch(r"[\w.-]{1,128}", names[0]) else ""


def read_docker_inspect(c: Cleaned) -> dict:
    containers = []
    verdicts = []
    rows = _inspect_rows(unmarked(c.text))
    named = _inspected(pasted_command(c)) if len(rows) == 1 else ""
    for r in rows:
        state = r.get("State") or {}
        health: dict = state["Health"] if isinstance(state.get("Health"), dict) else {}
        name = str(r.get("Name", "")).lstrip("/") or str(r.get("Id", ""))[:12] or named or "this container"
        logs = [x for x in health.get("Log") or [] if isinstance(x, dict)]
        item = {
            "name": name,
            "image": (r.get("Config") or {}).get("Image") if isinstance(r.get("Config"), dict) else None,
            "status": _status(state),
            "exit_code": state.get("ExitCode"),
            "oom_killed": state.get("OOMKilled"),
            "error": state.get("Error") or None,
            "started_at": state.get("StartedAt"),
            "finished_at": state.get("FinishedAt"),
            "health": health.get("Status") or None,
            "failing_streak": health.get("FailingStreak"),
            "last_check_output": "; ".join(str(logs[-1].get("Output") or "").split("\n")).strip("; ")[:300]
            or None
            if logs
            else None,
            "last_check_exit_code": logs[-1].get("ExitCode") if logs else None,
        }
        containers.append(item)
        code = item["exit_code"]
        if item["oom_killed"]:
            verdicts.append(
                verdict(
                    "error",
                    f"{name}: killed by Docker's OOM accounting (OOMKilled, exit {code}): the memory limit or the node's memory ran out",
                    "docker.oom_killed",
                )
            )
        elif code == 137:
            verdicts.append(
                verdict(
                    "error",
                    f"{name}: exit 137 (SIGKILL) without OOMKilled: the kernel's OOM killer on the host (dmesg) or `docker kill`",
                    "docker.oom_killed",
                )
            )
        elif item["status"] == "dead":
            verdicts.append(
                verdict(
                    "error",
                    f"{name}: dead (Docker could not stop or remove it cleanly): `docker rm -f` it, restart dockerd if it stays",
                )
            )
        elif item["status"] == "restarting":
            verdicts.append(
                verdict(
                    "error",
                    f"{name}: restarting in a loop (its process exits, exit code {code}, and the restart policy starts it again): read `docker logs {name}`",
                )
            )
        elif item["status"] == "exited" and code:
            verdicts.append(
                verdict(
                    "error",
                    f"{name}: exited with code {code}" + (f": {item['error']}" if item["error"] else ""),
                )
            )
        elif item["status"]:
            verdicts.append(
                verdict(
                    "ok",
                    f"{name}: {item['status']}"
                    + (f", exit code {code}" if item["status"] == "exited" else ""),
                )
            )
        # a stopped container keeps its last health status: only a live one's is judged
        live = item["status"] in (None, "running", "restarting")
        if live and (
            item["health"] == "unhealthy"
            or (
                item["health"] == "starting"
                and isinstance(item["failing_streak"], int)
                and item["failing_streak"] > 0
            )
        ):
            last = item["last_check_output"]
            verdicts.append(
                verdict(
                    "error" if item["health"] == "unhealthy" else "warn",
                    f"{name}: health check {item['health']}, failing {item['failing_streak']} time(s) in a row"
                    + (f"; last check (exit {item['last_check_exit_code']}): {last}" if last else ""),
                )
            )
        elif item["health"] and not item["status"]:
            verdicts.append(verdict("ok", f"{name}: health check {item['health']}"))
    return {"summary": {"containers": containers}, "verdicts": verdicts}


def _ps_rows(text: str) -> list[dict]:
    return [d for d in json_objects(text) if is_ps_row(d)]


def read_docker_ps_json(c: Cleaned) -> dict:
    containers = []
    for r in _ps_rows(unmarked(c.text)):
        status = str(r.get("Status") or "")
        code = r.get("ExitCode")
        m = re.search(r"Exited \((\d+)\)", status)
        health = (
            r.get("Health")
            or (re.search(r"\((healthy|unhealthy|health: starting)\)", status) or [None, None])[1]
        )
        containers.append(
            {
                "name": r.get("Names") or r.get("Name") or r.get("ID") or r.get("Id"),
                "image": r.get("Image"),
                "service": r.get("Service"),
                "state": r.get("State"),
                "status": r.get("Status"),
                "exit_code": int(m.group(1))
                if m
                else code
                if isinstance(code, int) and str(r.get("State")) == "exited"
                else None,
                "health": health or None,
                "ports": r.get("Ports") if isinstance(r.get("Ports"), str) else None,
            }
        )
    verdicts = []
    for c_ in containers:
        what = c_["image"] or c_["service"]
        text = f"{c_['name']} ({what}): {c_['status'] or c_['state']}"
        level = "error" if c_["exit_code"] or c_["health"] == "unhealthy" else "ok"
        verdicts.append(
            verdict(
                level,
                text
                + (
                    f", {c_['health']}"
                    if c_["health"] and str(c_["health"]) not in str(c_["status"] or "")
                    else ""
                ),
            )
        )
    return {"summary": {"containers": containers}, "verdicts": verdicts}
