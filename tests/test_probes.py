"""Connections and live probes against the namespace test cluster (real sshd, real dockerd)."""

import asyncio
import os
import subprocess
import tempfile
import time

import pytest

from spark_tui.core.node.connection import HostKeyError, NodeError, SshTransport
from spark_tui.core.node.nodes import Nodes
from spark_tui.settings.resolve import Inputs, resolve
from tests.cluster import cluster as tc


def two_node_config(cluster, tmp_path, **flags):
    """The generated cluster file, cut to the first two nodes."""
    path = cluster.cluster_file(2, tmp_path / "two.yaml")
    return resolve(
        Inputs(
            cluster_file=path, user_config="", environ={}, flags={k: (v, f"--{k}") for k, v in flags.items()}
        )
    )


async def snap(config):
    async with Nodes(config) as nodes:
        result = await nodes.snapshot_all()
        sockets = [t._docker_sock for t in nodes.transports.values()]
    assert all(os.path.dirname(s).startswith(tempfile.gettempdir()) for s in sockets)
    assert not any(os.path.exists(os.path.dirname(s)) for s in sockets)  # tunnel sockets cleaned up on close
    return result


@pytest.mark.cluster
def test_snapshot_of_two_nodes(cluster, tmp_path):
    cluster.docker(
        cluster.nodes[1],
        "run",
        "-d",
        "--name",
        "probe_me",
        "--label",
        "spark-tui.cluster=t",
        "--entrypoint",
        "sleep",
        tc.IMAGE,
        "300",
    )
    snaps = asyncio.run(snap(two_node_config(cluster, tmp_path)))
    for s, node in zip(snaps, cluster.nodes[:2], strict=True):
        assert s.reachable and s.error is None and s.docker_error is None
        assert s.host.hostname == node.name and s.host.storage_driver == "overlay2"
        data = s.data_interface
        assert (
            data.name == "enp1s0f1np1"
            and data.ipv4 == [f"{node.ip}/24"]
            and data.mtu == 9000
            and data.state == "UP"
        )
        assert data.roce_device == "rocep1s0f1" and data.roce_state == "Up"
        assert s.gpu.present and s.gpu.is_gb10 and s.gpu.unified is not None and s.gpu.unified.total_mib > 0
        assert [(p.pid, p.name, p.used_mib) for p in s.gpu.processes] == [
            (114687, "/usr/local/bin/python", 19135)
        ]
    assert snaps[0].containers == []
    c = snaps[1].containers[0]
    assert (c.name, c.image_ref, c.state) == ("probe_me", tc.IMAGE, "running")
    assert c.layers and c.env is not None and c.command == ["sleep", "300"]


@pytest.mark.cluster
def test_reconnect_after_sshd_restart(cluster, tmp_path):
    config = two_node_config(cluster, tmp_path)
    node = cluster.nodes[1]

    async def scenario():
        async with Nodes(config) as nodes:
            first = await nodes.snapshot_all()
            t = nodes.transports[node.name]
            conn_before = t.conn
            cluster.stop_sshd(node)
            # sshd -D's per-connection children keep the old session alive; kill them to drop it
            await asyncio.to_thread(cluster.kill_sshd_sessions, node)
            await asyncio.sleep(0.3)
            during = await nodes.snapshot_all()
            cluster.start_sshd(node)
            t.next_retry = 0  # skip the backoff wait in the test
            after = await nodes.snapshot_all()
            return first, during, after, conn_before, t.conn

    first, during, after, before_conn, after_conn = asyncio.run(scenario())
    assert first[1].reachable
    assert not during[1].reachable and during[1].error and during[0].reachable
    assert after[1].reachable and after_conn is not before_conn


def _hash(path) -> None:
    """`HashKnownHosts yes`, the default of Debian's and Ubuntu's ssh client: names become |1|salt|hash."""
    subprocess.run(["ssh-keygen", "-H", "-f", str(path)], check=True, capture_output=True)
    os.remove(f"{path}.old")
    assert "|1|" in path.read_text()


@pytest.mark.cluster
@pytest.mark.parametrize("hashed", [False, True], ids=["plain", "hashed"])
def test_changed_host_key_is_refused(cluster, tmp_path, hashed):
    wrong = tmp_path / "known_hosts"
    lines = open(cluster.known_hosts).read().splitlines()
    other_key = lines[0].split(" ", 1)[1]  # node 1's key, claimed for node 2
    wrong.write_text(lines[0] + "\n" + f"{cluster.nodes[1].ip} {other_key}\n")
    if hashed:
        _hash(wrong)
    before = wrong.read_text()
    config = two_node_config(cluster, tmp_path, known_hosts=str(wrong))
    t = SshTransport(config.node(cluster.nodes[1].name))
    with pytest.raises(HostKeyError) as exc:
        asyncio.run(t.run(["true"]))
    msg = str(exc.value)
    assert "CHANGED" in msg and cluster.nodes[1].ip in msg and "SHA256:" in msg and "ssh-keygen -R" in msg
    # accept-new never accepts a changed key, and never adds it to the file
    config = two_node_config(cluster, tmp_path, known_hosts=str(wrong), host_key_policy="accept-new")
    with pytest.raises(HostKeyError, match="CHANGED"):
        asyncio.run(SshTransport(config.node(cluster.nodes[1].name)).run(["true"]))
    assert wrong.read_text() == before


@pytest.mark.cluster
def test_hashed_known_hosts_still_connects_and_unknown_is_told_apart(cluster, tmp_path):
    hashed = tmp_path / "known_hosts"
    hashed.write_text(open(cluster.known_hosts).read().splitlines()[0] + "\n")  # only node 1
    _hash(hashed)
    config = two_node_config(cluster, tmp_path, known_hosts=str(hashed))
    assert (
        asyncio.run(SshTransport(config.node(cluster.nodes[0].name)).run(["echo", "ok"])).stdout.strip()
        == "ok"
    )
    with pytest.raises(HostKeyError, match="is not in"):
        asyncio.run(SshTransport(config.node(cluster.nodes[1].name)).run(["true"]))


@pytest.mark.cluster
def test_unreadable_known_hosts_is_never_taken_for_no_entry(cluster, tmp_path):
    broken = tmp_path / "known_hosts"
    broken.write_text("@bogus-marker not a host key line\n")
    config = two_node_config(cluster, tmp_path, known_hosts=str(broken), host_key_policy="accept-new")
    with pytest.raises(HostKeyError):
        asyncio.run(SshTransport(config.node(cluster.nodes[1].name)).run(["true"]))
    assert broken.read_text() == "@bogus-marker not a host key line\n"


@pytest.mark.cluster
def test_unknown_host_key_refused_then_accept_new_adds_it(cluster, tmp_path):
    empty = tmp_path / "kh"
    empty.write_text("")
    node = cluster.nodes[0]
    config = two_node_config(cluster, tmp_path, known_hosts=str(empty))
    with pytest.raises(HostKeyError) as exc:
        asyncio.run(SshTransport(config.node(node.name)).run(["true"]))
    assert "not in" in str(exc.value) and "ssh-keyscan" in str(exc.value)
    config = two_node_config(cluster, tmp_path, known_hosts=str(empty), host_key_policy="accept-new")

    async def go():
        t = SshTransport(config.node(node.name))
        try:
            return await t.run(["echo", "ok"])
        finally:
            await t.close()

    assert asyncio.run(go()).stdout.strip() == "ok"
    assert node.ip in empty.read_text()
    # now strict mode accepts it: the key was recorded
    config = two_node_config(cluster, tmp_path, known_hosts=str(empty))
    assert asyncio.run(go()).exit_status == 0


@pytest.mark.cluster
def test_dockerd_down_on_one_node_is_reported_while_others_work(cluster, tmp_path):
    node = cluster.nodes[1]
    cluster.stop_dockerd(node)
    snaps = asyncio.run(snap(two_node_config(cluster, tmp_path)))
    assert snaps[0].docker_error is None and snaps[0].host.docker_version
    assert snaps[1].reachable and snaps[1].docker_error and "docker" in snaps[1].docker_error
    assert snaps[1].interfaces  # the rest of the probe still arrived


@pytest.mark.cluster
def test_dockerd_stopped_between_refreshes_then_back(cluster, tmp_path):
    """The refresh keeps one Docker client per engine: losing the engine under it is a docker
    error on that node, and the next refresh after dockerd is back works again."""
    node = cluster.nodes[1]

    async def scenario():
        async with Nodes(two_node_config(cluster, tmp_path)) as nodes:
            before = await nodes.snapshot_all()
            await asyncio.to_thread(cluster.stop_dockerd, node)
            during = await nodes.snapshot_all()
            await asyncio.to_thread(cluster.start_dockerd, node)
            after = await nodes.snapshot_all()
            return before, during, after

    before, during, after = asyncio.run(scenario())
    assert before[1].docker_error is None
    assert during[1].reachable and during[1].docker_error and during[0].docker_error is None
    assert after[1].docker_error is None and after[1].host.docker_version


@pytest.mark.cluster
def test_arguments_are_quoted_for_the_remote_shell(cluster, tmp_path):
    config = two_node_config(cluster, tmp_path)
    canary = str(tmp_path / "canary")  # the nodes share this machine's filesystem
    hostile = f"$(touch {canary}); `touch {canary}`; ' \" \n touch {canary}"

    async def go():
        async with Nodes(config) as nodes:
            return await nodes.transports[cluster.nodes[0].name].run(["echo", hostile])

    out = asyncio.run(go())
    assert out.stdout.rstrip("\n") == hostile
    assert tc.run(cluster.nodes[0].nsenter("test", "-e", canary), check=False).returncode != 0


@pytest.mark.cluster
def test_status_command(cluster, tmp_path, run_cli):
    two_node_config(cluster, tmp_path)
    code, out, _ = run_cli("status", "--cluster", str(tmp_path / "two.yaml"))
    assert code == 0
    assert (
        f"spark-1 (head, {cluster.nodes[0].ip}): up" in out
        and "*enp1s0f1np1" in out
        and "unified memory" in out
    )
    cluster.stop_sshd(cluster.nodes[1])
    cluster.kill_sshd_sessions(cluster.nodes[1])
    code, out, _ = run_cli("status", "--cluster", str(tmp_path / "two.yaml"), "--connect-timeout", "2")
    assert (
        code == 1
        and f"spark-2 (worker, {cluster.nodes[1].ip}): UNREACHABLE" in out
        and f"spark-1 (head, {cluster.nodes[0].ip}): up" in out
    )


def test_local_node_without_ssh(run_cli):
    """No cluster file: this machine, probed without SSH; here no docker socket exists on the host."""
    import json as _json

    code, out, _ = run_cli("status", "--json", "--docker-socket", "/nonexistent/docker.sock")
    snap = _json.loads(out)["nodes"][0]
    assert snap["reachable"] and snap["host"]["hostname"] and snap["interfaces"]
    assert snap["docker_error"] and code == 1


@pytest.mark.cluster
def test_ssh_config_alias_and_proxyjump(cluster, tmp_path, monkeypatch):
    """Host aliases, User, IdentityFile and ProxyJump come from ~/.ssh/config, not from spark-tui settings."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    head, worker = cluster.nodes[0], cluster.nodes[1]
    (home / ".ssh" / "known_hosts").write_text(open(cluster.known_hosts).read())
    (home / ".ssh" / "config").write_text(
        f"Host spark-a\n  HostName {head.ip}\n  User root\n  IdentityFile {cluster.client_key}\n\n"
        f"Host spark-b\n  HostName {worker.ip}\n  User root\n  IdentityFile {cluster.client_key}\n  ProxyJump spark-a\n"
    )
    path = tmp_path / "aliases.yaml"
    path.write_text(
        f"name: testcluster\nnodes:\n  - name: a\n    host: spark-a\n    data_ip: {head.ip}\n"
        f"  - name: b\n    host: spark-b\n    data_ip: {worker.ip}\n"
    )
    config = resolve(Inputs(cluster_file=str(path), user_config="", environ={"HOME": str(home)}))

    async def scenario():
        async with Nodes(config) as nodes:
            snaps = await nodes.snapshot_all()
            tunnel = nodes.transports["b"].conn._tunnel
            return snaps, tunnel

    snaps, tunnel = asyncio.run(scenario())
    assert [s.host.hostname for s in snaps] == [head.name, worker.name], [s.error for s in snaps]
    assert all(s.reachable and s.docker_error is None for s in snaps)
    assert tunnel is not None  # b was reached through a (ProxyJump), not directly

    # A changed key for the alias's HostName: the refusal names that address, not the alias.
    kh = home / ".ssh" / "known_hosts"
    other_key = next(line for line in kh.read_text().splitlines() if line.startswith(worker.ip + " ")).split(
        " ", 1
    )[1]
    kh.write_text(
        "".join(line + "\n" for line in kh.read_text().splitlines() if not line.startswith(head.ip + " "))
        + f"{head.ip} {other_key}\n"
    )
    with pytest.raises(HostKeyError) as exc:
        asyncio.run(SshTransport(config.node("a")).run(["true"]))
    assert "CHANGED" in str(exc.value) and f"ssh-keygen -R {head.ip} " in str(exc.value)


@pytest.mark.cluster
def test_ssh_agent_authenticates_when_no_key_is_configured(cluster, tmp_path, monkeypatch):
    """No identity_file and no key in ~/.ssh: the key held by ssh-agent is what logs in."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    node = cluster.nodes[0]
    path = tmp_path / "agent.yaml"
    path.write_text(
        f"name: testcluster\nuser: root\nknown_hosts: {cluster.known_hosts}\nconnect_timeout: 5\n"
        f"nodes:\n  - name: a\n    host: {node.ip}\n"
    )
    config = resolve(Inputs(cluster_file=str(path), user_config="", environ={"HOME": str(home)}))

    async def run_true():
        t = SshTransport(config.node("a"))
        try:
            return await t.run(["echo", "agent-ok"])
        finally:
            await t.close()

    sock = str(tmp_path / "agent.sock")
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", sock], stdout=subprocess.DEVNULL)
    try:
        for _ in range(50):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        monkeypatch.setenv("SSH_AUTH_SOCK", sock)
        subprocess.run(
            ["ssh-add", cluster.client_key],
            check=True,
            capture_output=True,
            env={**os.environ, "SSH_AUTH_SOCK": sock},
        )
        assert asyncio.run(run_true()).stdout.strip() == "agent-ok"
    finally:
        agent.terminate()
        agent.wait()
    # The same settings without the agent: nothing to log in with.
    monkeypatch.delenv("SSH_AUTH_SOCK")
    with pytest.raises(NodeError, match="authentication failed"):
        asyncio.run(run_true())


@pytest.mark.cluster
def test_keepalive_notices_a_silent_link_loss(cluster, tmp_path):
    """A pulled cable sends no RST: only keepalives tell that the connection is gone."""
    node = cluster.nodes[1]
    config = two_node_config(cluster, tmp_path, keepalive_interval=0.3)

    async def scenario():
        t = SshTransport(config.node(node.name))
        try:
            await t.run(["true"])
            cluster.link_down(node)
            try:
                for tick in range(40):  # 3 unanswered keepalives at 0.3 s, then closed
                    if not t.connected:
                        return tick * 0.1
                    await asyncio.sleep(0.1)
                return None
            finally:
                cluster.link_up(node)
        finally:
            await t.close()

    noticed = asyncio.run(scenario())
    assert noticed is not None and noticed < 4.0


@pytest.mark.cluster
@pytest.mark.parametrize("bound", [2, 8])
def test_concurrent_commands_stay_within_max_sessions(cluster, tmp_path, bound):
    """20 commands at once: at most `bound` run together, and none is refused by sshd
    (MaxSessions 10 on the test nodes would refuse the 11th channel)."""
    config = two_node_config(cluster, tmp_path, max_sessions=bound)
    trace = str(tmp_path / f"sessions-{bound}")
    tc.run(cluster.nodes[0].nsenter("rm", "-f", trace))

    async def scenario():
        t = SshTransport(config.node(cluster.nodes[0].name))
        try:
            # the first command waits (5 s at most) for a second to start, so a loaded machine that starts each
            # command later than the one before has finished still shows whether two may run together
            wait = (
                f"n=0; until [ $(grep -c + {trace}) -ge 2 ] || [ $n -ge 50 ]; do sleep 0.1; n=$((n+1)); done"
            )
            cmd = ["sh", "-c", f"echo + >> {trace}; {wait}; sleep 0.2; echo - >> {trace}"]
            return await asyncio.gather(*(t.run(cmd) for _ in range(20)))
        finally:
            await t.close()

    results = asyncio.run(scenario())
    assert [r.exit_status for r in results] == [0] * 20
    running = peak = 0
    for mark in tc.run(cluster.nodes[0].nsenter("cat", trace)).stdout.split():
        running += 1 if mark == "+" else -1
        peak = max(peak, running)
    assert 2 <= peak <= bound  # in parallel, never past the bound


@pytest.mark.cluster
def test_reconnect_backs_off_and_does_not_hammer_a_dead_node(cluster, tmp_path):
    """sshd stopped: each failed connect doubles the wait (0.5, 1, 2 s ...); inside the wait a
    call fails without a new attempt; after it, with sshd back, it connects."""
    node = cluster.nodes[1]
    config = two_node_config(cluster, tmp_path, connect_timeout=2.0)
    t = SshTransport(config.node(node.name))

    async def scenario():
        cluster.stop_sshd(node)
        waits = []
        try:
            for _ in range(3):
                with pytest.raises(NodeError, match="cannot connect"):
                    await t.connect()
                waits.append(round(t.next_retry - time.monotonic(), 1))
                with pytest.raises(NodeError, match="retry in"):
                    await t.connect()  # still inside the wait: refused without a new attempt
                t.next_retry = time.monotonic()  # let the next attempt go to the network
        finally:
            cluster.start_sshd(node)
        t.next_retry = time.monotonic()
        await t.run(["true"])
        connected, failures = t.connected, t.failures
        await t.close()
        return waits, connected, failures

    waits, connected, failures = asyncio.run(scenario())
    assert waits == [0.5, 1.0, 2.0]
    assert connected and failures == 0
