"""Programs `sync` runs on the nodes (python3 -c, as DGX OS ships Python 3; they start `docker save`
and `docker load` themselves). The bytes go from the source node to the targets over the data network; this machine
only starts the programs and reads their progress lines (stderr: `PORT n`, `SENT n`, `FAIL ...`).

A receiver listens on its node's data address, accepts only a connection from the source's
address that opens with the sync's random token, and hands what it receives to `docker load`
(an image, core/sync/sync_image_program.py: it tags nothing unless the whole stream arrived, and
nothing but the image asked for) or writes the files it carries (a
model's cache entry: each file written under a temporary name and renamed when whole, so an
interrupted sync leaves no file that looks complete). One sender fans one stream out to every
target.

The token reaches every program on its stdin, never in argv (which any user of the node can
read in `ps`); argv holds the sync's id instead, a name that is no secret, for `pkill -f`.
"""

from __future__ import annotations

# Accepts the source's connection: argv = bind address, sync id, source address; stdin = the
# token, then the receiver's input (left in `given`); leaves `conn`. Any host reaching the data address can connect: a peer other than the
# source is turned away before a byte is read, and the source's connection must bring the token
# within TOKEN_WAIT seconds (compared in constant time), so no one can hold the receiver by
# connecting first and saying nothing.
ACCEPT = r"""
import hmac, ipaddress, socket, sys, time
TOKEN_WAIT = 10
ip, source = sys.argv[1], sys.argv[3]
token = sys.stdin.readline().strip().encode()
given = sys.stdin.read()  # what follows the token: the receiver's own input
sources = {ipaddress.ip_address(a[4][0].split("%")[0]) for a in socket.getaddrinfo(source, None)}
srv = socket.socket(socket.AF_INET6 if ":" in ip else socket.AF_INET)
srv.bind((ip, 0))
srv.listen(4)
print("PORT", srv.getsockname()[1], file=sys.stderr, flush=True)
deadline = time.monotonic() + 120
while True:
    srv.settimeout(max(0.01, deadline - time.monotonic()))
    try:
        conn, peer = srv.accept()
    except socket.timeout:
        print("NO SENDER connected within 120 s", file=sys.stderr, flush=True)
        raise SystemExit(1)
    head = b""
    if ipaddress.ip_address(peer[0].split("%")[0]) in sources:
        conn.settimeout(TOKEN_WAIT)
        try:
            while len(head) < len(token) + 1 and not head.endswith(b"\n"):
                more = conn.recv(len(token) + 1 - len(head))
                if not more:
                    break
                head += more
        except OSError:
            pass
        if hmac.compare_digest(head, token + b"\n"):
            break
    print("REFUSED", peer[0], file=sys.stderr, flush=True)
    conn.close()
srv.close()
# From here the stream's own pace: `docker save` writes a whole image out before its first byte.
conn.settimeout(300)
"""

# What the senders share: connecting to every target (HOST:PORT) with the token, sending one
# stream to all of them, progress lines.
FANOUT = r"""
import socket, sys, time
class Fanout:
    def __init__(self, token, targets):
        self.socks, self.sent, self.last = {}, 0, 0.0
        for t in targets:
            host, port = t.rsplit(":", 1)
            s = socket.create_connection((host.strip("[]"), int(port)), timeout=30)
            s.sendall(token + b"\n")
            self.socks[t] = s
    def write(self, block):
        for t, s in list(self.socks.items()):
            try:
                s.sendall(block)
            except OSError as exc:
                print("FAIL", t, exc, file=sys.stderr, flush=True)
                del self.socks[t]
        if not self.socks:
            raise SystemExit("every target failed")
        self.sent += len(block)
        now = time.monotonic()
        if now - self.last >= 0.25:
            print("SENT", self.sent, file=sys.stderr, flush=True)
            self.last = now
        return len(block)
    def sendfile(self, f, size):
        # The kernel copies file to socket (os.sendfile): no pass through Python for the bytes.
        done = 0
        while done < size:
            count = min(8 << 20, size - done)
            for t, s in list(self.socks.items()):
                try:
                    sent = 0
                    while sent < count:
                        step = s.sendfile(f, offset=done + sent, count=count - sent)
                        if not step:
                            raise SystemExit(f"{f.name} shrank while being sent")
                        sent += step
                except OSError as exc:
                    print("FAIL", t, exc, file=sys.stderr, flush=True)
                    del self.socks[t]
            if not self.socks:
                raise SystemExit("every target failed")
            done += count
            self.sent += count
            now = time.monotonic()
            if now - self.last >= 0.25:
                print("SENT", self.sent, file=sys.stderr, flush=True)
                self.last = now
    def close(self):
        for s in self.socks.values():
            s.shutdown(socket.SHUT_WR)
            s.recv(1)
            s.close()
        print("SENT", self.sent, file=sys.stderr, flush=True)
        print("DONE", self.sent, " ".join(self.socks), file=sys.stderr, flush=True)
"""

# Sender of an image: argv = docker host, image, sync id; stdin = the token, then the targets'
# HOST:PORT on one line. `docker save` starts at once: Docker writes the whole image to a
# temporary directory before its first byte, while the receivers start.
SEND_STREAM = (
    FANOUT
    + r"""
import subprocess
save = subprocess.Popen(["docker", "-H", sys.argv[1], "save", sys.argv[2]], stdout=subprocess.PIPE)
token, targets = sys.stdin.readline().strip().encode(), sys.stdin.readline().split()
if not targets:  # the sync stopped before its receivers listened
    save.kill()
    raise SystemExit("no targets")
fan = Fanout(token, targets)
while True:
    block = save.stdout.read(1 << 20)
    if not block:
        break
    fan.write(block)
if save.wait() != 0:  # the targets see a stream cut short, which docker load refuses
    raise SystemExit(f"docker save {sys.argv[2]} failed")
fan.close()
"""
)

# Sender of files: argv = directory, sync id; stdin = the token, the targets' HOST:PORT on one
# line, then a JSON list of paths relative to the directory.
# Each entry goes as one JSON header line ({"p": path, "k": f|l|d, "s": size, "l": link}) and,
# for a file, its bytes.
SEND_FILES = (
    FANOUT
    + r"""
import json, os
token, targets = sys.stdin.readline().strip().encode(), sys.stdin.readline().split()
if not targets:  # the sync stopped before its receivers listened
    raise SystemExit("no targets")
fan = Fanout(token, targets)
root = os.path.expanduser(sys.argv[1])
for rel in json.load(sys.stdin):
    path = os.path.join(root, rel)
    if os.path.islink(path):
        fan.write((json.dumps({"p": rel, "k": "l", "l": os.readlink(path)}) + "\n").encode())
    elif os.path.isdir(path):
        fan.write((json.dumps({"p": rel, "k": "d"}) + "\n").encode())
    else:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            fan.write((json.dumps({"p": rel, "k": "f", "s": size}) + "\n").encode())
            fan.sendfile(f, size)
fan.close()
"""
)

# Receiver of a model's files (SEND_FILES' stream), written under the directory argv[4]; the
# sender is hostile until proven otherwise (a compromised node attacks the others through sync).
# Every path is walked from the directory one real directory at a time (O_DIRECTORY|O_NOFOLLOW
# relative to the parent's fd), so no link, wherever it points and whenever it was made, is
# walked through; a file is written under a temporary name created new (the old one unlinked,
# O_EXCL|O_NOFOLLOW: never opened through what was there) and renamed when whole, so an
# interrupted sync leaves no file that looks complete; names ending in the temporary suffix are
# ours, never the sender's. The only links accepted are the Hugging Face cache's own:
# snapshots/<rev>/[dirs/]name -> (../)*blobs/<hash>, with as many `..` as the link's real parent
# lies below the directory, so it lands on the entry's own blobs/. Anything else is refused (SKIP).
# A file's bytes go socket -> pipe -> file with os.splice (no pass through Python: on the 2-core
# test machine the copy took half the time of recv and write); where splice is missing
# (Python < 3.10) or refused by the filesystem, recv and write.
RECEIVE_FILES = (
    ACCEPT
    + r"""
import fcntl, json, os, re, signal, socket, struct
def ended(*_):  # pkill after a cancel: end through the finally blocks that remove partial files
    print("ENDED by a signal", file=sys.stderr, flush=True)
    raise SystemExit(1)
signal.signal(signal.SIGTERM, ended)
# From this machine: each path the source's manifest announced [kind, size, link]. Only those
# arrive, each once and as announced: the stream can neither grow a file past its announced
# size nor add entries.
plan = json.loads(given or "{}")
SUFFIX = ".spark-tui-part"
LINK = re.compile(r"((?:\.\./)+)blobs/(?:[0-9a-f]{40}|[0-9a-f]{64})")
DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
root = os.path.realpath(os.path.expanduser(sys.argv[4]))
os.makedirs(root, exist_ok=True)
top = os.open(root, DIR)
# Blocking, with a receive timeout the kernel keeps (splice honours it too): a stalled sender ends us.
conn.settimeout(None)
conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 300, 0))
sock, pending, buf = conn.fileno(), b"", bytearray(1 << 20)
pipe = os.pipe() if hasattr(os, "splice") else None
if pipe:
    try:
        fcntl.fcntl(pipe[1], getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except OSError:
        pass
def bad(why):
    print("BAD header:", why[:200], file=sys.stderr, flush=True)
    raise SystemExit(1)
def line():
    global pending
    while b"\n" not in pending:
        if len(pending) > 1 << 16:
            bad("longer than 64 KiB")
        try:
            more = conn.recv(1 << 16)
        except OSError as exc:  # reset, or the receive timeout between files
            print("CUT", exc, file=sys.stderr, flush=True)
            raise SystemExit(1)
        if not more:
            return b""
        pending += more
    head, _, pending = pending.partition(b"\n")
    return head
def short(rel):
    print("SHORT", rel, file=sys.stderr, flush=True)
    raise SystemExit(1)
def put(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
def copy(fd, left, rel):
    # `left` bytes of the stream into fd; with fd None (a refused file) read and dropped.
    global pending, pipe
    head, pending = pending[:left], pending[left:]
    if fd is not None:
        put(fd, head)
    left -= len(head)
    while left and pipe and fd is not None:
        try:
            got = os.splice(sock, pipe[1], min(left, 1 << 20))
        except OSError:
            pipe = None
            break
        if not got:
            short(rel)
        left -= got
        while got:
            try:
                got -= os.splice(pipe[0], fd, got)
            except OSError:
                while got:  # the filesystem refused splice: what the pipe holds, then recv
                    data = os.read(pipe[0], got)
                    put(fd, data)
                    got -= len(data)
                pipe = None
    while left:
        got = conn.recv_into(buf, min(len(buf), left))
        if not got:
            short(rel)
        if fd is not None:
            put(fd, memoryview(buf)[:got])
        left -= got
def parts_of(rel):
    # The entry's path as names, or None: absolute, `.`, `..`, empty names, NUL, our suffix.
    if not isinstance(rel, str) or not rel or rel.startswith("/") or "\0" in rel:
        return None
    parts = rel.split("/")
    if any(p in ("", ".", "..") or p.endswith(SUFFIX) for p in parts):
        return None
    return parts
def walk(names):
    # An fd of root/names, each a real directory (made when missing), or None: a name that is a
    # link or anything but a directory refuses the entry.
    fd = os.dup(top)
    try:
        for name in names:
            try:
                step = os.open(name, DIR, dir_fd=fd)
            except FileNotFoundError:
                os.mkdir(name, 0o755, dir_fd=fd)
                step = os.open(name, DIR, dir_fd=fd)
            os.close(fd)
            fd = step
        return fd
    except OSError:
        os.close(fd)
        return None
def link_ok(parts, link):
    # HF's shape only: under snapshots/<rev>/, up exactly to the directory, then blobs/<hash>.
    m = isinstance(link, str) and len(parts) >= 3 and parts[0] == "snapshots" and LINK.fullmatch(link)
    return bool(m) and len(m.group(1)) // 3 == len(parts) - 1
def fresh(fd, name):
    # The temporary name for `name` in dir fd, emptied: whatever stood there (a link, a file
    # left by an earlier run) is unlinked, never opened.
    tmp = name + SUFFIX
    try:
        os.unlink(tmp, dir_fd=fd)
    except FileNotFoundError:
        pass
    return tmp
def place(fd, tmp, name):
    try:
        os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        return True
    except OSError:  # `name` is a directory, say
        os.unlink(tmp, dir_fd=fd)
        return False
n = 0
while True:
    head = line()
    if not head:
        break
    try:
        m = json.loads(head)
    except ValueError as exc:
        bad(str(exc))
    if not isinstance(m, dict) or m.get("k") not in ("d", "f", "l"):
        bad(repr(m))
    rel, kind, size = m.get("p"), m["k"], m.get("s")
    if kind == "f" and (type(size) is not int or size < 0):
        bad(f"size {size!r}")
    want = plan.pop(rel, None) if isinstance(rel, str) else None
    if not isinstance(want, list) or len(want) < 3:
        bad(f"{str(rel)[:200]}: not announced by the manifest, or sent twice")
    if kind != want[0] or (kind == "l" and m.get("l") != want[2]):
        bad(f"{rel}: not the {want[0]} the manifest announced")
    if kind == "f" and size != want[1]:
        bad(f"{rel}: {size} bytes, the manifest announced {want[1]}")
    parts = parts_of(rel)
    if parts and kind == "l" and not link_ok(parts, m.get("l")):
        parts = None
    fd = walk(parts if kind == "d" else parts[:-1]) if parts else None
    ok, tmp = fd is not None, None
    try:
        if kind == "f":
            out = None
            if ok:
                try:
                    tmp = fresh(fd, parts[-1])
                    out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=fd)
                except OSError:
                    ok = False
            try:
                copy(out, size, rel)
            except OSError as exc:  # the connection reset, the receive timeout, a full disk
                print("CUT", rel, exc, file=sys.stderr, flush=True)
                raise SystemExit(1)
            finally:
                if out is not None:
                    os.close(out)
            ok = ok and place(fd, tmp, parts[-1])
            tmp = None
            n += ok
        elif kind == "l" and ok:
            try:
                tmp = fresh(fd, parts[-1])
                os.symlink(m["l"], tmp, dir_fd=fd)
            except OSError:
                ok = False
            ok = ok and place(fd, tmp, parts[-1])
            tmp = None
    finally:
        if fd is not None:
            if tmp is not None:  # ended before the file was whole: no partial file stays
                try:
                    os.unlink(tmp, dir_fd=fd)
                except OSError:
                    pass
            os.close(fd)
    if not ok:
        print("SKIP", str(rel)[:200], file=sys.stderr, flush=True)
print("UNPACKED", n, file=sys.stderr, flush=True)
"""
)

# Everything under a model's cache entry: argv = the entry's directory, and `hash` to hash too.
# Prints JSON: {"exists", "ref", "files": {rel: [kind, size, link, resolves]}, "shards", ...}. A
# safetensors file's own header says how long the file must be (8 + header length + the last
# tensor's end): a truncated shard is known on the node alone, without another node to compare
# with. With `hash`, every blob the snapshot links to is hashed against its own name, as the Hugging
# Face cache names blobs: 64 hex digits are the content's sha256 (weights, stored with LFS), 40
# are git's blob hash, sha1 of "blob <size>\0" + content (small files such as config.json).
MANIFEST = r"""
import json, os, struct, sys
root = os.path.expanduser(sys.argv[1])
out = {"exists": os.path.isdir(root), "ref": None, "files": {}, "expected": {}}
try:
    with open(os.path.join(root, "refs", "main")) as f:
        out["ref"] = f.read().strip()
except OSError:
    pass
for base, dirs, files in os.walk(root):
    for name in dirs + files:
        path = os.path.join(base, name)
        rel = os.path.relpath(path, root)
        if name.endswith(".spark-tui-part"):
            continue
        if os.path.islink(path):
            out["files"][rel] = ["l", 0, os.readlink(path), os.path.exists(path)]
        elif os.path.isdir(path):
            out["files"][rel] = ["d", 0, "", True]
        else:
            out["files"][rel] = ["f", os.path.getsize(path), "", True]
        if name.endswith(".safetensors") and os.path.exists(path):
            try:
                with open(path, "rb") as f:
                    (length,) = struct.unpack("<Q", f.read(8))
                    if length < 100_000_000:
                        header = json.loads(f.read(length))
                        end = max(
                            (t["data_offsets"][1] for k, t in header.items() if k != "__metadata__"),
                            default=0,
                        )
                        out["expected"][rel] = 8 + length + end
            except (OSError, ValueError, KeyError, TypeError, struct.error):
                out["expected"][rel] = -1
snap = os.path.join(root, "snapshots", out["ref"] or "-")
out["config"] = os.path.isfile(os.path.join(snap, "config.json"))
out["shards"] = None
try:
    with open(os.path.join(snap, "model.safetensors.index.json")) as f:
        out["shards"] = sorted(set(json.load(f)["weight_map"].values()))
except (OSError, ValueError, KeyError, TypeError, AttributeError):
    if os.path.lexists(os.path.join(snap, "model.safetensors")):
        out["shards"] = ["model.safetensors"]
out["bad"], out["hashed"] = {}, 0
if sys.argv[2:] == ["hash"] and os.path.isdir(snap):
    import hashlib, select
    buf = bytearray(4 << 20)
    # Whoever asked may have gone (a cancelled check closes the session): then stdout's reader is
    # closed, poll says so, and we stop rather than read the rest of the weights for nobody.
    watch = select.poll()
    watch.register(1, select.POLLERR | select.POLLHUP)
    for base, dirs, files in os.walk(snap):
        for name in sorted(files):
            path = os.path.join(base, name)
            blob = os.path.realpath(path)
            digest = os.path.basename(blob)
            if not os.path.isfile(blob) or len(digest) not in (40, 64):
                continue
            kind = "sha256" if len(digest) == 64 else "git blob sha1"
            h = hashlib.sha256() if len(digest) == 64 else hashlib.sha1()
            if len(digest) == 40:
                h.update(b"blob %d\0" % os.path.getsize(blob))
            try:
                with open(blob, "rb", buffering=0) as f:
                    while True:
                        got = f.readinto(buf)
                        if not got:
                            break
                        h.update(memoryview(buf)[:got])
                        if watch.poll(0):
                            raise SystemExit(1)
            except OSError as exc:
                out["bad"][os.path.relpath(blob, root)] = [os.path.relpath(path, snap), f"unreadable: {exc}"]
                continue
            out["hashed"] += 1
            if h.hexdigest() != digest:
                out["bad"][os.path.relpath(blob, root)] = [
                    os.path.relpath(path, snap),
                    f"{kind} is {h.hexdigest()[:12]}..., its blob name says {digest[:12]}... (corrupt)",
                ]
print(json.dumps(out))
"""
