"""The model sync's node programs on this machine's python3, over loopback: the receiver moves a
file's bytes socket -> pipe -> file with os.splice, and must give the same files where splice is
missing (Python < 3.10) or refused by the filesystem part-way."""

import json
import os
import subprocess
import sys

import pytest

from spark_tui.core.node.sync_programs import RECEIVE_FILES, SEND_FILES

TOKEN = "0123456789abcdef"
SYNC_ID = "spark-tui-sync-test"

# Prepended to the receiver: how it runs where os.splice does not exist.
NO_SPLICE = "import os\ndel os.splice\n"
# Prepended to the receiver: a filesystem that takes no splice into a file (socket -> pipe still
# works, so the bytes already in the pipe must be written the plain way).
FS_REFUSES = """import os, stat, errno
_splice = os.splice
def _refusing(src, dst, count, *rest):
    if not stat.S_ISFIFO(os.fstat(dst).st_mode):
        raise OSError(errno.EINVAL, "splice refused by this filesystem")
    return _splice(src, dst, count, *rest)
os.splice = _refusing
"""


def tree(root):
    out = {}
    for base, _, files in os.walk(root):
        for name in files:
            path = os.path.join(base, name)
            rel = os.path.relpath(path, root)
            out[rel] = ("link", os.readlink(path)) if os.path.islink(path) else open(path, "rb").read()
    return out


def receiving(dest, prelude="", plan=None):
    """The receiver listening on loopback, given its token and `plan` (what the source's manifest
    announced: {path: [kind, size, link]}, as sync passes it); returns it and its port."""
    receiver = subprocess.Popen(
        [sys.executable, "-c", prelude + RECEIVE_FILES, "127.0.0.1", SYNC_ID, "127.0.0.1", str(dest)],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert receiver.stdin is not None and receiver.stderr is not None
    receiver.stdin.write(TOKEN + "\n" + json.dumps(plan or {}) + "\n")
    receiver.stdin.close()
    return receiver, int(receiver.stderr.readline().split()[1])


def announce(src, paths):
    """What the source's manifest says of `paths`, as sync hands it to the receiver."""
    out = {}
    for rel in paths:
        path = os.path.join(src, rel)
        link = os.path.islink(path)
        out[rel] = ["l", 0, os.readlink(path)] if link else ["f", os.path.getsize(path), ""]
    return out


def copy(src, dest, prelude=""):
    """The files and links under src (as sync sends them: directories come with their contents)."""
    paths = sorted(os.path.relpath(os.path.join(b, n), src) for b, _, fs in os.walk(src) for n in fs)
    receiver, port = receiving(dest, prelude, announce(src, paths))
    sender = subprocess.run(
        [sys.executable, "-c", SEND_FILES, str(src), SYNC_ID],
        input=f"{TOKEN}\n127.0.0.1:{port}\n{json.dumps(paths)}",
        capture_output=True,
        text=True,
        timeout=60,
    )
    err = receiver.stderr.read()
    receiver.wait(timeout=60)
    return sender, receiver.returncode, err


@pytest.mark.parametrize("prelude", ["", NO_SPLICE, FS_REFUSES], ids=["splice", "no-splice", "fs-refuses"])
def test_the_receiver_writes_the_same_files_with_or_without_splice(tmp_path, prelude):
    src = tmp_path / "src"
    (src / "blobs").mkdir(parents=True)
    (src / "snapshots" / "r1").mkdir(parents=True)
    big = os.urandom(3 * (1 << 20) + 12345)  # more than the pipe holds, not a multiple of it
    (src / "blobs" / ("b" * 64)).write_bytes(big)
    (src / "blobs" / ("5" * 40)).write_bytes(b'{"a": 1}\n')  # shorter than what one recv reads ahead
    (src / "blobs" / "empty").write_bytes(b"")
    (src / "snapshots" / "r1" / "model.safetensors").symlink_to("../../blobs/" + "b" * 64)
    sender, code, err = copy(src, tmp_path / "dest", prelude)
    assert sender.returncode == 0 and code == 0, (sender.stderr, err)
    assert "UNPACKED 3" in err
    assert tree(tmp_path / "dest") == tree(src)


@pytest.mark.parametrize("end", ["eof", "reset", "sigterm"])
def test_a_stream_cut_short_leaves_no_whole_looking_file_and_no_partial_one(tmp_path, end):
    """The sender dies (the stream ends, or the connection is reset) or the sync is cancelled
    (`pkill -f` sends SIGTERM): nothing named like the file, and no partial file of its size,
    stays (issue 23, finding 16: a shard's partial file is tens of GB)."""
    import signal
    import socket
    import struct
    import time

    dest = tmp_path / "dest"
    receiver, port = receiving(dest, plan={"blobs/x": ["f", 5 << 20, ""]})
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(TOKEN.encode() + b"\n" + json.dumps({"p": "blobs/x", "k": "f", "s": 5 << 20}).encode() + b"\n")
    s.sendall(bytes(2 << 20))
    part = dest / "blobs" / "x.spark-tui-part"
    deadline = time.monotonic() + 10
    while not (part.exists() and part.stat().st_size > 0):
        assert time.monotonic() < deadline, "the receiver never started writing"
        time.sleep(0.05)
    if end == "sigterm":
        receiver.send_signal(signal.SIGTERM)
    elif end == "reset":
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
    err = receiver.stderr.read()
    assert receiver.wait(timeout=30) != 0, err
    assert "Traceback" not in err and any(
        said in err
        for said in {
            "eof": ["SHORT blobs/x"],
            "reset": ["SHORT blobs/x", "CUT blobs/x"],
            "sigterm": ["ENDED"],
        }[end]
    )
    assert list((dest / "blobs").iterdir()) == []
