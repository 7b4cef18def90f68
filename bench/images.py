"""Image inspection: the cost of a first look at an image (one probe container through the
node's engine) against a cached look (the facts file under the XDG cache dir), per node, in one run."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time


def bench_inspection(cluster, nodes: int = 2, cached_runs: int = 20) -> dict:
    from spark_tui.core.images.image_facts import FactsCache, facts_for
    from spark_tui.core.node.nodes import Nodes
    from spark_tui.settings.resolve import Inputs, resolve
    from tests.cluster import cluster as tc

    with tempfile.TemporaryDirectory() as tmp:
        path = cluster.cluster_file(nodes, f"{tmp}/images.yaml")
        config = resolve(Inputs(cluster_file=path, user_config="", environ={}))

        async def measure():
            out = {}
            async with Nodes(config) as all_nodes:
                for node in config.nodes:
                    cache = FactsCache(f"{tmp}/cache-{node.name}")  # each node asked afresh
                    start = time.perf_counter()
                    await all_nodes.docker(
                        node.name, lambda client, cache=cache: facts_for(client, tc.IMAGE, cache)
                    )
                    first = time.perf_counter() - start
                    cached = []
                    for _ in range(cached_runs):
                        start = time.perf_counter()
                        await all_nodes.docker(
                            node.name, lambda client, cache=cache: facts_for(client, tc.IMAGE, cache)
                        )
                        cached.append(time.perf_counter() - start)
                    med = statistics.median(cached)
                    out[node.name] = {
                        "first_ms": round(first * 1000, 1),
                        "cached_ms": round(med * 1000, 2),
                        "first_over_cached": round(first / med, 1),
                    }
            return out

        return asyncio.run(measure())
