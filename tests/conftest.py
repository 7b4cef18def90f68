import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# Run in parallel (pytest-xdist, `-n 2`), each worker gets its own namespace test cluster: worker
# gwK takes SPARK_TEST_CLUSTER_ID + K. Set before tests.cluster is imported, which reads it once.
if os.environ.get("PYTEST_XDIST_WORKER", "").startswith("gw"):
    os.environ["SPARK_TEST_CLUSTER_ID"] = str(
        int(os.environ.get("SPARK_TEST_CLUSTER_ID") or 0) + int(os.environ["PYTEST_XDIST_WORKER"][2:])
    )

from spark_tui.settings.registry import ENV_PREFIX, LOOKALIKE_ENV  # noqa: E402


@pytest.fixture(autouse=True)
def private_cache(monkeypatch, tmp_path_factory):
    """Spark-tui's cache (image facts) in the test session's temp dir, never the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-cache"))


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """An environment with no spark-tui or look-alike variables and a private HOME/XDG."""
    for name in list(os.environ):
        if name.startswith(ENV_PREFIX) or name in LOOKALIKE_ENV or name.startswith("XDG_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    return tmp_path


@pytest.fixture
def run_cli(clean_env, capsys):
    """Run `spark-tui ARGS` in-process; returns (exit code, stdout, stderr)."""
    from spark_tui.cli.main import main

    def run(*argv: str):
        code = main(list(argv))
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


class ClusterHandle:
    """The session's namespace test cluster; `rebuild()` brings it up again after a test took it down."""

    def __init__(self, count: int):
        self.count = count
        self.cluster = None

    def rebuild(self):
        from tests.cluster import cluster as tc

        self.cluster = tc.up(self.count)
        return self.cluster

    @property
    def nodes(self):
        return self.cluster.nodes


@pytest.fixture(scope="session")
def test_cluster():
    """Brings the namespace test cluster up once per session (4 nodes), tears it down after."""
    from tests.cluster import cluster as tc

    reason = tc.missing_requirements()
    if reason:
        pytest.skip(f"namespace test cluster unavailable: {reason}")
    handle = ClusterHandle(int(os.environ.get("SPARK_TEST_NODES", "4")))
    handle.rebuild()
    try:
        yield handle
    finally:
        tc.down()


@pytest.fixture
def cluster(test_cluster):
    """The cluster, restored to a clean state for each test (daemons up, links up, no containers,
    the test image under its tag: a test whose sync or load failed part-way must not leave the
    next ones without it)."""
    from tests.cluster import cluster as tc

    c = test_cluster.cluster
    for node in c.nodes:
        if not tc._alive(node.sshd_pid):
            c.start_sshd(node)
        if not tc._alive(node.dockerd_pid):
            c.start_dockerd(node)
        c.link_up(node)
        c.clear_rate_limit(node)
        c.reset_meminfo(node)
    yield c
    for node in c.nodes:
        if tc._alive(node.dockerd_pid):
            c.remove_all_containers(node)
            layers = c.docker(
                node, "image", "inspect", "--format", "{{json .RootFS.Layers}}", tc.IMAGE, check=False
            )
            if layers.returncode != 0:
                c.restore_image(node)
            elif tuple(json.loads(layers.stdout)) != tc.plain_layers(c.root):
                # another image under the test tag (a variant a test loaded there): the next test on this
                # cluster would see drift it did not make
                c.import_image(node)
