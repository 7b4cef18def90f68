"""The node program that receives an image for `sync image` (python3 -c, as the other programs of
core/node/sync_programs.py): the source's `docker save` stream goes into the target's `docker load`.

The source may be compromised, and `docker load` applies every tag its archive names: a stream
naming `nvcr.io/nvidia/vllm:latest` besides the image asked for would retag that image on the
target, under the operator's feet. So the receiver walks the tar as it passes (512-byte headers,
data padded to 512, as Go's archive/tar reads it: PAX and GNU long names, PAX sizes, header-only
types) and holds back the members that name images (`manifest.json`, `repositories`,
`index.json` at the archive's top) until it has read them whole: one naming anything but the
image asked for ends `docker load` before it has seen the archive's end, so nothing is tagged.
Whatever it cannot read as Go would (sparse files, unknown member types, a member under a link,
a bad checksum) is refused the same way. The stream is also capped (argv[6] bytes), and what
`docker load` says it loaded is checked once more.
"""

from __future__ import annotations

from spark_tui.core.node.sync_programs import ACCEPT

# The tar walk: Gate(write, image).feed(block) passes the archive on to `write`, holding back what
# names images until read; raises Refused. (Apart from RECEIVE so that tests run it in-process.)
TAR_GATE = r"""
import json, posixpath
def norm(ref):
    # How docker names a reference: Docker Hub's prefixes dropped, ":latest" when no tag.
    for p in ("docker.io/library/", "index.docker.io/library/", "docker.io/", "index.docker.io/"):
        if ref.startswith(p):
            ref = ref[len(p):]
            break
    return ref if "@" in ref or ":" in ref.rsplit("/", 1)[-1] else ref + ":latest"
HIGH, ZERO = bytes(range(128, 256)), bytes(512)
class Refused(Exception):
    pass
def names_in(member, data, tag):
    # The image names a tag-bearing member gives (each must be the one asked for).
    doc = json.loads(data)
    if member == "manifest.json":
        return [t for m in doc for t in (m.get("RepoTags") or [])]
    if member == "repositories":
        return [f"{repo}:{tag}" for repo, tags in doc.items() for tag in tags]
    out = []
    for m in doc.get("manifests") or []:
        notes = m.get("annotations") or {}
        out += [notes[k] for k in ("io.containerd.image.name",) if k in notes]
        ref = notes.get("org.opencontainers.image.ref.name")
        if ref is not None and ref != tag:
            out.append(ref)
    return out
def number(field):
    if field[:1] and field[0] & 0x80:  # base-256 (GNU), for sizes past 8 GiB
        if field[0] & 0x40:
            raise Refused("a negative size")
        return int.from_bytes(bytes([field[0] & 0x7F]) + field[1:], "big")
    text = field.strip(b" \0")
    return int(text, 8) if text else 0
def text(field):
    return field.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
def pax(data):
    out, i = {}, 0
    while i < len(data):
        sp = data.index(b" ", i)
        end = i + int(data[i:sp])
        if end <= sp or data[end - 1 : end] != b"\n":
            raise ValueError("a malformed PAX record")
        key, _, value = data[sp + 1 : end - 1].partition(b"=")
        out[key.decode()] = value.decode("utf-8", "surrogateescape")
        i = end
    return out
class Gate:
    def __init__(self, write, image):
        self.image, self.wanted = image, norm(image)
        self.tag = self.wanted.rsplit(":", 1)[-1] if "@" not in self.wanted else ""
        self.write, self.head, self.left, self.held, self.size = write, b"", 0, None, 0
        self.meta, self.member, self.pax, self.long, self.links, self.ended = None, None, {}, None, set(), False
    def feed(self, block):
        view, i = memoryview(block), 0
        while i < len(view):
            if self.left:
                part = view[i : i + self.left]
                i += len(part)
                self.left -= len(part)
                if self.held is None:
                    self.write(part)
                else:
                    self.held += part
                    if not self.left:
                        self.release()
                continue
            take = view[i : i + 512 - len(self.head)]
            self.head += bytes(take)
            i += len(take)
            if len(self.head) == 512:
                head, self.head = self.head, b""
                self.header(head)
    def header(self, head):
        if head == ZERO:
            self.ended = True
            self.write(head)
            return
        if self.ended:
            raise Refused("data after the archive's end")
        body = head[:148] + head[156:]  # the checksum sums the header with its own field as spaces
        unsigned = sum(body) + 8 * 32
        signed = unsigned - 256 * (len(body) - len(body.translate(None, HIGH)))
        try:
            if number(head[148:156]) not in (unsigned, signed):
                raise Refused("a header with a bad checksum")
            size, kind = number(head[124:136]), head[156:157]
        except ValueError:
            raise Refused("a header that is not tar")
        if kind in (b"x", b"L", b"K"):  # describes the next member: read whole, passed on
            if size > 1 << 20:
                raise Refused("an extended header over 1 MiB")
            self.meta = kind
            self.hold(head, size)
            return
        name = text(head[:100])
        if head[257:263] == b"ustar\0":
            prefix = text(head[345:476] if head[508:512] == b"tar\0" else head[345:500])
            name = prefix + "/" + name if prefix else name
        if any(k.startswith("GNU.sparse") for k in self.pax) or kind == b"S":
            raise Refused("a sparse member")
        name = self.long if self.long is not None else self.pax.get("path", name)
        if "size" in self.pax:
            size = int(self.pax["size"])
        self.pax, self.long = {}, None
        if kind == b"\0" and name.endswith("/"):
            kind = b"5"
        if kind in (b"1", b"2", b"3", b"4", b"5", b"6"):
            size = 0
        elif kind not in (b"0", b"\0", b"7", b"g"):
            raise Refused(f"a member of type {kind!r}")
        clean = posixpath.normpath("/" + name).lstrip("/")
        if any(clean.startswith(link + "/") for link in self.links):
            raise Refused(f"a member under the link {clean.split('/')[0]!r}")
        if kind == b"2":
            self.links.add(clean)
        if clean in ("manifest.json", "repositories", "index.json"):
            if kind not in (b"0", b"\0", b"7"):
                raise Refused(f"{clean} that is not a plain file")
            if size > 16 << 20:
                raise Refused(f"{clean} over 16 MiB")
            self.meta, self.member = None, clean
            self.hold(head, size)
            return
        self.write(head)
        self.left = size + (-size % 512)
    def hold(self, head, size):
        self.held, self.size, self.left = bytearray(head), size, size + (-size % 512)
        if not self.left:
            self.release()
    def release(self):
        held, self.held = self.held, None
        data = bytes(held[512 : 512 + self.size])
        try:
            if self.meta == b"x":
                self.pax = pax(data)
            elif self.meta == b"L":
                self.long = text(data)
            elif self.meta is None:
                others = sorted({n for n in names_in(self.member, data, self.tag) if norm(n) != self.wanted})
                if others:
                    raise Refused(f"the stream's {self.member} names {', '.join(others)[:300]}; only {self.image} was asked for")
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            raise Refused(f"an unreadable {self.member or 'extended header'}: {exc}")
        self.meta = None
        self.write(held)
"""

# Receiver of an image: argv[4] = the node's docker host, argv[5] = the image asked for, argv[6] =
# the most bytes the stream may carry.
RECEIVE = (
    ACCEPT
    + TAR_GATE
    + r"""
import subprocess, threading
image, cap = sys.argv[5], int(sys.argv[6])
load = subprocess.Popen(["docker", "-H", sys.argv[4], "load"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
said = []
reader = threading.Thread(target=lambda: said.append(load.stdout.read().decode("utf-8", "replace")), daemon=True)
reader.start()
gate, n = Gate(load.stdin.write, image), 0
try:
    while True:
        block = conn.recv(1 << 20)
        if not block:
            break
        n += len(block)
        if n > cap:
            raise Refused(f"more than {cap} bytes, the most this image may take")
        gate.feed(block)
    load.stdin.close()
except Refused as exc:  # docker load has not seen the archive's end: it tags nothing
    load.kill()
    print("REJECTED", exc, file=sys.stderr, flush=True)
    raise SystemExit(1)
except OSError as exc:  # the connection cut, or docker load gone: nothing may be tagged
    load.kill()
    print("CUT", n, exc, file=sys.stderr, flush=True)
print("RECEIVED", n, file=sys.stderr, flush=True)
code = load.wait()
reader.join(30)
loaded = [l.split(":", 1)[1].strip() for l in "".join(said).splitlines() if l.startswith("Loaded image:")]
others = [l for l in loaded if norm(l) != norm(image)]
if others:  # the gate should have stopped it; said all the same, never passed silently
    print("RETAGGED: docker load tagged", ", ".join(others)[:300], "besides", image, file=sys.stderr, flush=True)
    raise SystemExit(1)
raise SystemExit(code)
"""
)
