"""python -m tests.cluster up N | down | status | images"""

import sys
import time

from tests.cluster import cluster as tc


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("up", "down", "status", "images"):
        print("usage: python -m tests.cluster up N | down | status | images", file=sys.stderr)
        return 2
    try:
        if argv[0] == "up":
            count = int(argv[1]) if len(argv) > 1 else 2
            start = time.monotonic()
            cluster = tc.up(count)
            print(f"{count} node(s) up in {time.monotonic() - start:.1f} s")
            for node in cluster.nodes:
                print(f"  {node.name}  {node.ip}  netns {node.netns}  docker {node.docker_host}")
            print(
                f"cluster file: {cluster.cluster_yaml}\nknown_hosts:  {cluster.known_hosts}\nkey:          {cluster.client_key}"
            )
        elif argv[0] == "images":  # the test images built (or found in the cache), no cluster
            start = time.monotonic()
            tc.build_images()
            print(f"test images ready in {time.monotonic() - start:.1f} s")
        elif argv[0] == "down":
            tc.down()
            print("down: nothing left")
        else:
            cluster = tc.Cluster.load()
            for node in cluster.nodes:
                print(
                    f"{node.name} {node.ip} sshd={'up' if tc._alive(node.sshd_pid) else 'down'} dockerd={'up' if tc._alive(node.dockerd_pid) else 'down'}"
                )
    except (tc.ClusterError, tc.images.ImageError, ValueError, FileNotFoundError) as exc:
        print(f"tests.cluster: {exc}", file=sys.stderr)
        return 1
    return 0


raise SystemExit(main(sys.argv[1:]))
