"""The model sync's receiver against a hostile sender (issue 23: a compromised node attacking the
others through sync), over loopback against the real receiver program: whatever entries arrive,
nothing outside the target directory is created or changed."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from spark_tui.core.node.sync_programs import SEND_FILES
from tests.test_sync_programs import SYNC_ID, TOKEN, receiving

HEX40, HEX64 = "a1" * 20, "b2" * 32


def send_raw(port, entries, source=("127.0.0.1", 0)):
    """A hostile sender: `entries` as (header, bytes) straight onto the wire (a header given as
    bytes goes as it is)."""
    with socket.create_connection(("127.0.0.1", port), source_address=source) as s:
        s.sendall(TOKEN.encode() + b"\n")
        for header, data in entries:
            line = header if isinstance(header, bytes) else json.dumps(header).encode()
            try:
                s.sendall(line + b"\n" + data)
            except OSError:  # the receiver gave up on us: what it wrote so far is what counts
                return


def announced(entries) -> dict:
    """A plan announcing every entry as it is sent: the source's manifest lies as its stream
    does (the receiver's own checks must hold whatever the plan)."""
    plan: dict = {}
    for header, _ in entries:
        if isinstance(header, dict) and isinstance(header.get("p"), str):
            plan.setdefault(header["p"], [header.get("k"), header.get("s", 0), header.get("l", "")])
    return plan


def receive(dest, entries, plan=None):
    """Run the receiver for `entries` (announced as sent unless `plan` says otherwise); its exit
    status and stderr."""
    receiver, port = receiving(dest, plan=announced(entries) if plan is None else plan)
    send_raw(port, entries)
    err = receiver.stderr.read()
    return receiver.wait(timeout=30), err


def test_a_link_planted_before_its_target_exists_cannot_carry_a_file_out_of_the_entry(tmp_path):
    """Finding 1: a link whose first component did not exist yet resolved "inside"; the next link
    made that component an ancestor; the file entry then opened its temporary name, the first
    link, and wrote through it: here into <home>/.ssh/authorized_keys."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    dest = home / "cache" / "hub" / "models--x" / "entry"  # four levels below home
    receive(
        dest,
        [
            ({"p": "p/q/r", "k": "d"}, b""),
            ({"p": "p/q/r/L.spark-tui-part", "k": "l", "l": "X/../../../../.ssh/authorized_keys"}, b""),
            ({"p": "p/q/r/X", "k": "l", "l": "../../.."}, b""),
            ({"p": "p/q/r/L", "k": "f", "s": 13}, b"ssh-ed25519 A"),
        ],
    )
    assert not (home / ".ssh" / "authorized_keys").exists()
    assert sorted(p.name for p in home.iterdir()) == [".ssh", "cache"]


def test_only_the_hf_cache_link_shape_is_accepted(tmp_path):
    dest = tmp_path / "entry"
    code, err = receive(
        dest,
        [
            ({"p": f"blobs/{HEX64}", "k": "f", "s": 3}, b"abc"),
            ({"p": "snapshots/r1/model.safetensors", "k": "l", "l": f"../../blobs/{HEX64}"}, b""),
            ({"p": "snapshots/r1/sub/config.json", "k": "l", "l": f"../../../blobs/{HEX40}"}, b""),
            ({"p": "snapshots/r1/wrong-depth", "k": "l", "l": f"../blobs/{HEX64}"}, b""),
            ({"p": "snapshots/r1/too-far", "k": "l", "l": f"../../../blobs/{HEX64}"}, b""),
            ({"p": "snapshots/r1/not-a-blob", "k": "l", "l": "../../refs/main"}, b""),
            ({"p": "snapshots/r1/absolute", "k": "l", "l": f"/{dest}/blobs/{HEX64}"}, b""),
            ({"p": "blobs/elsewhere", "k": "l", "l": f"../blobs/{HEX64}"}, b""),
            ({"p": "refs/main.spark-tui-part", "k": "f", "s": 2}, b"r1"),
        ],
    )
    assert code == 0, err
    snap = dest / "snapshots" / "r1"
    assert (snap / "model.safetensors").read_bytes() == b"abc"
    assert os.readlink(snap / "sub" / "config.json") == f"../../../blobs/{HEX40}"
    assert sorted(p.name for p in snap.iterdir()) == ["model.safetensors", "sub"]
    assert sorted(p.name for p in (dest / "blobs").iterdir()) == [HEX64]
    assert not (dest / "refs").exists()
    for refused in ("wrong-depth", "too-far", "not-a-blob", "absolute"):
        assert f"SKIP snapshots/r1/{refused}" in err
    assert "SKIP blobs/elsewhere" in err and "SKIP refs/main.spark-tui-part" in err


def test_a_link_already_in_the_entry_is_never_followed(tmp_path):
    """A directory or temporary name that is a link (left by anyone) is not walked through or
    written through: the entry is refused, and the outside file stays as it was."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim").write_text("precious")
    dest = tmp_path / "entry"
    (dest / "blobs").mkdir(parents=True)
    (dest / "snapshots").symlink_to(outside)
    (dest / "blobs" / f"{HEX64}.spark-tui-part").symlink_to(outside / "victim")
    code, err = receive(
        dest,
        [
            ({"p": "snapshots/victim", "k": "f", "s": 4}, b"evil"),
            ({"p": "snapshots/new", "k": "d"}, b""),
            ({"p": f"blobs/{HEX64}", "k": "f", "s": 4}, b"good"),
        ],
    )
    assert code == 0, err
    assert (outside / "victim").read_text() == "precious" and sorted(os.listdir(outside)) == ["victim"]
    assert "SKIP snapshots/victim" in err and "SKIP snapshots/new" in err
    assert (dest / "blobs" / HEX64).read_bytes() == b"good"  # its stale temporary name replaced
    assert not (dest / "blobs" / f"{HEX64}.spark-tui-part").exists()


def test_a_malformed_header_ends_the_receiver_with_a_line_not_a_traceback(tmp_path):
    for header in (
        b"{not json",
        json.dumps([1, 2]).encode(),
        json.dumps({"p": "a", "k": "f", "s": -1}).encode(),
    ):
        code, err = receive(tmp_path / "entry", [(header, b"")])
        assert code == 1 and "Traceback" not in err and "BAD header" in err, err


# --- the general rule --------------------------------------------------------------------

PARTS = ["p", "X", "L", "..", ".", "", "blobs", "snapshots", "r1", "L.spark-tui-part", HEX64, "outside"]
DEPTH = 4  # the target directory's depth below the sandbox
SANDBOX = "@SANDBOX@"  # replaced by the example's sandbox directory


def paths():
    """Entry names and link targets: compositions of awkward parts (`..`, links named like the
    temporary suffix, names later made links), the HF shape at every depth, absolute paths."""
    relative = st.lists(st.sampled_from(PARTS), min_size=1, max_size=7).map("/".join)
    shaped = st.tuples(st.integers(1, 6), st.sampled_from([HEX40, HEX64, "x"])).map(
        lambda t: "../" * t[0] + "blobs/" + t[1]
    )
    escaping = st.tuples(
        st.sampled_from(["", "X/", "p/X/"]),
        st.integers(1, DEPTH + 1),
        st.sampled_from(["outside/victim", ""]),
    ).map(lambda t: t[0] + "../" * t[1] + t[2])
    absolute = st.sampled_from(["/", SANDBOX, SANDBOX + "/outside/victim", SANDBOX + "/outside/new"])
    return st.one_of(relative, shaped, escaping, absolute, relative.map(lambda p: "/" + p))


ENTRY = st.tuples(st.sampled_from("dlf"), paths(), paths(), st.binary(max_size=20))
# The four-entry stream of finding 1, aimed at the sandbox's outside/victim.
FINDING_1 = [
    ("d", "p/q/r", "", b""),
    ("l", "p/q/r/L.spark-tui-part", "X/../../../../outside/victim", b""),
    ("l", "p/q/r/X", "../../..", b""),
    ("f", "p/q/r/L", "", b"evil"),
]


def state(top: Path, skip: Path) -> dict[str, tuple]:
    """Everything under `top` but `skip`: kind, link target, content, mode and times."""
    out = {}
    for base, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if Path(base, d) != skip]
        for name in dirs + files + ["."]:
            path = Path(base, name)
            st_ = path.lstat()
            data = os.readlink(path) if path.is_symlink() else path.read_bytes() if path.is_file() else None
            out[str(path)] = (st_.st_mode, st_.st_mtime_ns, st_.st_ino, data)
    return out


@settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ENTRY, min_size=1, max_size=8))
@example(FINDING_1)
def test_no_entry_stream_touches_anything_outside_the_target_directory(stream):
    with tempfile.TemporaryDirectory() as tmp:
        sandbox = Path(tmp) / "sandbox"
        (sandbox / "outside" / "dir").mkdir(parents=True)
        (sandbox / "outside" / "victim").write_text("precious")
        dest = sandbox.joinpath(*["d"] * (DEPTH - 1), "dest")
        (dest / "blobs").mkdir(parents=True)
        (dest / "snapshots" / "r1").mkdir(parents=True)
        (dest / "blobs" / HEX64).write_bytes(b"blob")
        before = state(sandbox, dest)

        def real(p: str) -> str:
            return p.replace(SANDBOX, str(sandbox))

        entries = []
        for kind, path, link, data in stream:
            header = {"p": real(path), "k": kind}
            if kind == "l":
                header["l"] = real(link)
            if kind == "f":
                header["s"] = len(data)
            entries.append((header, data if kind == "f" else b""))
        code, err = receive(dest, entries)
        assert "Traceback" not in err, err
        assert state(sandbox, dest) == before


# --- who may connect (finding 10) --------------------------------------------------------


def one_file_tree(tmp_path: Path) -> tuple[Path, list[str]]:
    src = tmp_path / "src"
    (src / "blobs").mkdir(parents=True)
    (src / "blobs" / HEX64).write_bytes(b"weights")
    return src, [f"blobs/{HEX64}"]


def receiving_one_file(tmp_path: Path):
    return receiving(tmp_path / "dest", plan={f"blobs/{HEX64}": ["f", 7, ""]})


def send_files(src: Path, port: int, names: list[str], timeout: float) -> subprocess.CompletedProcess:
    """The real sender, from 127.0.0.1 (the receiver's source address in these tests)."""
    return subprocess.run(
        [sys.executable, "-c", SEND_FILES, str(src), SYNC_ID],
        input=f"{TOKEN}\n127.0.0.1:{port}\n{json.dumps(names)}",
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def closed_on_us(s: socket.socket) -> bool:
    """The receiver closed this connection (a reset when it left bytes unread)."""
    s.settimeout(30)
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True


def test_a_silent_host_other_than_the_source_cannot_hold_the_receiver(tmp_path):
    """Any host reaching the data address could connect first and say nothing: the receiver read
    from it for 300 s while the source waited. Now it is turned away unread, at once."""
    src, names = one_file_tree(tmp_path)
    receiver, port = receiving_one_file(tmp_path)
    with socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.2", 0)) as squatter:
        assert closed_on_us(squatter)  # without a byte read or sent
        assert receiver.stderr.readline().split() == ["REFUSED", "127.0.0.2"]
        sent = send_files(src, port, names, timeout=20)
    assert sent.returncode == 0, sent.stderr
    assert receiver.wait(timeout=10) == 0 and (tmp_path / "dest" / "blobs" / HEX64).read_bytes() == b"weights"


def test_a_silent_connection_from_the_source_is_dropped_after_a_short_wait(tmp_path):
    """From the source's own address (another program there, a stale connection): the token must
    come within seconds, then the real sender gets in."""
    src, names = one_file_tree(tmp_path)
    receiver, port = receiving_one_file(tmp_path)
    with socket.create_connection(("127.0.0.1", port)) as silent:
        assert closed_on_us(silent)
        assert receiver.stderr.readline().split() == ["REFUSED", "127.0.0.1"]
    sent = send_files(src, port, names, timeout=20)
    assert sent.returncode == 0, sent.stderr
    assert receiver.wait(timeout=10) == 0


def test_a_wrong_token_is_refused_and_the_right_one_still_gets_in(tmp_path):
    src, names = one_file_tree(tmp_path)
    receiver, port = receiving_one_file(tmp_path)
    for wrong in (TOKEN[:-1] + "0", TOKEN[:8], TOKEN + "00", ""):
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(wrong.encode() + b"\n")
            assert closed_on_us(s)
        assert receiver.stderr.readline().split() == ["REFUSED", "127.0.0.1"]
    sent = send_files(src, port, names, timeout=20)
    assert sent.returncode == 0 and receiver.wait(timeout=10) == 0, sent.stderr


# --- limits (finding 16) ------------------------------------------------------------------


def test_a_file_longer_than_its_manifest_announced_is_refused_before_a_byte_is_written(tmp_path):
    dest = tmp_path / "entry"
    code, err = receive(
        dest,
        [({"p": f"blobs/{HEX64}", "k": "f", "s": 1 << 20}, bytes(1 << 20))],
        {f"blobs/{HEX64}": ["f", 3, ""]},
    )
    assert code == 1 and f"BAD header: blobs/{HEX64}: 1048576 bytes, the manifest announced 3" in err, err
    assert not (dest / "blobs").exists()


def test_entries_the_manifest_did_not_announce_or_sent_twice_are_refused(tmp_path):
    plan = {f"blobs/{HEX64}": ["f", 3, ""], "snapshots/r1/a": ["l", 0, f"../../blobs/{HEX64}"]}
    cases = {
        "blobs/other": [({"p": "blobs/other", "k": "f", "s": 3}, b"abc")],
        f"blobs/{HEX64}": [({"p": f"blobs/{HEX64}", "k": "f", "s": 3}, b"abc")] * 2,
        "snapshots/r1/a": [({"p": "snapshots/r1/a", "k": "l", "l": f"../../blobs/{HEX40}"}, b"")],
        "snapshots/r1/b": [({"p": "snapshots/r1/b", "k": "d"}, b"")],
    }
    for refused, entries in cases.items():
        code, err = receive(tmp_path / "entry", entries, plan)
        assert code == 1 and f"BAD header: {refused}: " in err and "Traceback" not in err, err
    assert sorted(os.listdir(tmp_path / "entry")) == ["blobs"]


def test_a_connection_reset_between_entries_ends_the_receiver_with_a_line(tmp_path):
    import struct

    receiver, port = receiving(tmp_path / "entry", plan={})
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(TOKEN.encode() + b"\n" + b'{"p": "a"')  # half a header, then a reset
    time.sleep(0.5)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
    err = receiver.stderr.read()
    assert receiver.wait(timeout=30) == 1 and "Traceback" not in err and "CUT" in err, err
