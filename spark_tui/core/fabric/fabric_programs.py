"""Programs `check --fabric` runs on the nodes when neither perftest nor iperf3 is there: a TCP
sink on the receiving node and a TCP source on the sending node (python3 -c, as DGX OS ships
Python 3), like the sync programs: the sink listens on the receiving twin's address, accepts only
the sender's twin address opening with the check's random token (read on stdin, never in argv),
and counts what arrives; the source binds its own twin's address so the bytes cross the twin
being measured, sends zeros for the given seconds and closes. Both end by themselves: the sink
after its one connection or its accept timeout, the source after its seconds.
"""

from __future__ import annotations

from spark_tui.core.node.sync_programs import ACCEPT

# argv = bind address, check id, sender address, seconds; stdin = the token. Prints
# `RECEIVED bytes seconds` (first to last byte) on stderr.
TCP_SINK = (
    ACCEPT
    + r"""
import time
conn.settimeout(float(sys.argv[4]) + 10)
view, n, first, last = memoryview(bytearray(1 << 20)), 0, None, None
while True:
    try:
        k = conn.recv_into(view)
    except OSError as exc:
        print("CUT", n, exc, file=sys.stderr, flush=True)
        break
    if not k:
        break
    last = time.monotonic()
    first = first or last
    n += k
conn.close()
print("RECEIVED", n, "%.6f" % ((last - first) if first else 0.0), file=sys.stderr, flush=True)
"""
)

# argv = own address, seconds, check id; stdin = the token, then the sink's HOST:PORT.
TCP_SOURCE = r"""
import socket, sys, time
token, target = sys.stdin.readline().strip().encode(), sys.stdin.readline().strip()
if not target:
    raise SystemExit("no target")
host, port = target.rsplit(":", 1)
s = socket.create_connection((host.strip("[]"), int(port)), timeout=30, source_address=(sys.argv[1], 0))
s.sendall(token + b"\n")
block, sent = memoryview(bytes(1 << 20)), 0
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    s.sendall(block)
    sent += len(block)
s.shutdown(socket.SHUT_WR)
s.recv(1)
s.close()
print("SENT", sent, file=sys.stderr, flush=True)
"""
