"""Issue 23's findings about secrets, probes, host keys, launch answers and the image probe: each
test plays the attack on the namespace test cluster (real sshd, real dockerd) and shows it fails.

Attackers (SECURITY.md): the author of an image on a node, a host answering on a node's SSH
address, an unprivileged user on a shared node (GPU process names), a compromised node.
"""

import json

import pytest

from tests.cluster import cluster as tc

TOKEN = "hf_ConfigTokenAbcdef123456"


# --- finding 3: every --json output goes through the redactor -------------------------------------


@pytest.mark.cluster
def test_status_json_masks_the_token_and_secret_named_env_of_own_containers(cluster, tmp_path, run_cli):
    """Spark-tui's own container holds HF_TOKEN and other secret-named variables (one with a value
    the configuration no longer knows): `status --json` shows the names, never the values."""
    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    old_secret = "s3cr3t-not-in-this-config"
    cluster.docker(
        cluster.nodes[0],
        "run",
        "-d",
        "--name",
        "vllm_node",
        "--label",
        "spark-tui.cluster=spark",
        "-e",
        f"HF_TOKEN={TOKEN}",
        "-e",
        f"WANDB_API_KEY={old_secret}",
        "-e",
        f"NOTE=uses {TOKEN} inside",
        "--entrypoint",
        "sleep",
        tc.IMAGE,
        "300",
    )
    code, out, err = run_cli("status", "--cluster", path, "--hf-token", TOKEN, "--json")
    assert TOKEN not in out + err and old_secret not in out + err
    data = json.loads(out)
    own = next(c for n in data["nodes"] for c in n["containers"] if c["name"] == "vllm_node")
    assert "HF_TOKEN=***" in own["env"] and "WANDB_API_KEY=***" in own["env"]
    assert "NOTE=uses *** inside" in own["env"]  # a value holding the configured token: masked too


# --- finding 13: the image-facts cache takes only image IDs as names and only typed facts ---------


@pytest.mark.parametrize(
    "image_id", ["../../escaped", "sha256:../../../escaped", "sha256:" + "a" * 63, "sha256:" + "A" * 64, ""]
)
def test_facts_cache_refuses_an_image_id_that_is_not_a_sha256(tmp_path, image_id):
    """The ID comes from a node's engine: `../../x` wrote outside the cache directory."""
    from spark_tui.core.images.image_facts import FactsCache, ImageFacts

    cache = FactsCache(tmp_path / "a" / "b" / "images")
    cache.put(ImageFacts(image_id, vllm="0.12.0"))
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written == [] and cache.get(image_id) is None


def test_facts_cache_refuses_cached_facts_of_the_wrong_type(tmp_path):
    from spark_tui.core.images.image_facts import FactsCache, ImageFacts

    good = "sha256:" + "ab" * 32
    cache = FactsCache(tmp_path / "images")
    cache.put(ImageFacts(good, vllm="0.12.0", archs=["Qwen3ForCausalLM"], ray=True))
    assert cache.get(good).archs == ["Qwen3ForCausalLM"]
    assert (tmp_path / "images").stat().st_mode & 0o777 == 0o700
    file = next((tmp_path / "images").glob("*.json"))
    base = json.loads(file.read_text())
    for bad in (
        {"archs": "Qwen3ForCausalLM"},  # a string: `arch in archs` would match substrings
        {"archs": [1, 2]},
        {"vllm": 12},
        {"ray": "yes"},
        {"notes": "x"},
        {"entrypoint": "sh -c x"},
        {"image_id": "sha256:" + "cd" * 32},  # facts of another image
    ):
        file.write_text(json.dumps(base | bad))
        assert cache.get(good) is None, bad
    file.write_text(json.dumps([base]))
    assert cache.get(good) is None


def test_every_image_facts_field_has_a_cache_type_check():
    """A field added to ImageFacts without its check would make every cached file unreadable."""
    import dataclasses

    from spark_tui.core.images.image_facts import _FIELD_OK, ImageFacts

    assert set(_FIELD_OK) == {f.name for f in dataclasses.fields(ImageFacts)}


# --- finding 9: whatever goes wrong in a launch, what it started is removed -----------------------


def _launch(cluster, tmp_path, **flags):
    import asyncio

    from spark_tui.core.launch.launch import Launch
    from spark_tui.core.launch.live import with_detected
    from spark_tui.core.node.nodes import Nodes
    from spark_tui.settings.resolve import Inputs, resolve

    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    flags = {**tc.SANDBOX, "executor": "native", **flags}
    config = resolve(
        Inputs(
            cluster_file=path, user_config="", environ={}, flags={k: (v, f"--{k}") for k, v in flags.items()}
        )
    )
    got: list = []

    async def go():
        nonlocal config
        async with Nodes(config) as nodes:
            config, _ = await with_detected(config, nodes)
            return await Launch(config, nodes, got.append).run()

    ok = asyncio.run(go())
    left = {n.name: cluster.docker(n, "ps", "-aq").stdout.split() for n in cluster.nodes[:2]}
    return ok, got, left


@pytest.mark.cluster
def test_a_models_answer_of_the_wrong_shape_fails_the_launch_and_rolls_back(cluster, tmp_path):
    """/v1/models answering `{"data": null}` raised TypeError out of Launch.run: the containers
    stayed. Now the answer is read as "lists nothing" and the launch ends by its timeout, rolled back."""
    from spark_tui.core.launch import events as ev

    env = {"SPARK_TEST_SHARD_DELAY": "0.02", "SPARK_TEST_MODELS_BODY": '{"data": null}'}
    ok, got, left = _launch(cluster, tmp_path, env=env, **{"timeouts.ready": 8.0})
    assert ok is False and left == {"spark-1": [], "spark-2": []}
    failed = next(e for e in got if isinstance(e, ev.Failed))
    assert "vLLM ready (/health and /v1/models): not reached within 8 s" in failed.cause
    assert any(isinstance(e, ev.Removed) for e in got)


@pytest.mark.cluster
def test_any_unexpected_exception_rolls_back_and_is_named_an_internal_error(cluster, tmp_path, monkeypatch):
    """A bug of ours (here: the readiness question raising a TypeError) must not leave containers."""
    from spark_tui.core.launch import events as ev
    from spark_tui.core.launch import serving

    async def broken(config, transport):
        raise TypeError("'NoneType' object is not iterable")

    monkeypatch.setattr(serving, "ask", broken)
    ok, got, left = _launch(cluster, tmp_path)
    assert ok is False and left == {"spark-1": [], "spark-2": []}
    failed = next(e for e in got if isinstance(e, ev.Failed))
    assert failed.cause == "internal error (TypeError: 'NoneType' object is not iterable); rolled back"


# --- finding 7: a GPU process name cannot forge a probe section ------------------------------------


@pytest.mark.cluster
def test_a_gpu_process_name_cannot_replace_the_home_section(cluster, tmp_path):
    """Any user on a node chooses their process names; nvidia-smi prints a name's newlines raw. A
    name carrying the section marker replaced `home`, so `~` in a volume pointed at /tmp/evil."""
    import asyncio

    from spark_tui.core.launch.live import with_detected
    from spark_tui.core.node.nodes import Nodes
    from spark_tui.settings.resolve import Inputs, resolve

    # The stand-in drops each line's first column (the capture's gpu_uuid), as it does for real
    # captures; what it prints is one process whose name holds three newlines.
    apps = tmp_path / "hostile-apps.txt"
    apps.write_text(
        "GPU-6c1b3f0e, 4242, python3\n"
        "GPU-6c1b3f0e, @@spark-tui@@ home\n"
        "GPU-6c1b3f0e, /tmp/evil\n"
        "GPU-6c1b3f0e, @@spark-tui@@ junk, 19135\n"
    )
    node = cluster.nodes[1]
    cluster.set_standin(node, GPU_APPS=str(apps))
    try:
        path = cluster.cluster_file(2, tmp_path / "c2.yaml")
        config = resolve(Inputs(cluster_file=path, user_config="", environ={}))

        async def go():
            async with Nodes(config) as nodes:
                return await with_detected(config, nodes)

        detected, snaps = asyncio.run(go())
    finally:
        cluster.set_standin(
            node, GPU_APPS=str(tc.DATA / "nvidia-smi/gb10-compute-apps-noheader-nounits-llamaswap782.txt")
        )
    hostile = next(s for s in snaps if s.node == node.name)
    assert hostile.reachable and hostile.host.home == "/root"
    assert detected.node(node.name).home == "/root"
    assert hostile.host.memory is not None and hostile.gpu.present  # later sections still read


def test_probe_sections_are_accepted_once_and_only_under_the_call_s_marker():
    from spark_tui.core.node.probes import split_sections

    text = "M home\n/root\nM home\n/tmp/evil\nOTHER ip\n[]\nM uname\n6.11 aarch64\n"
    assert split_sections(text, "M") == {"home": "/root", "uname": "6.11 aarch64"}


# --- finding 8: accept-new creates known_hosts; strict names the missing file; hashed stays hashed -


def _ssh_transport(cluster, tmp_path, node, **flags):
    from spark_tui.core.node.connection import SshTransport
    from spark_tui.settings.resolve import Inputs, resolve

    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    config = resolve(
        Inputs(
            cluster_file=path, user_config="", environ={}, flags={k: (v, f"--{k}") for k, v in flags.items()}
        )
    )
    return SshTransport(config.node(node.name))


def _echo(transport) -> str:
    import asyncio

    async def go():
        try:
            return (await transport.run(["echo", "ok"])).stdout.strip()
        finally:
            await transport.close()

    return asyncio.run(go())


def _found_by_ssh_keygen(path, ip) -> bool:
    """OpenSSH's own lookup (it reads hashed and plain entries alike)."""
    import subprocess

    return subprocess.run(["ssh-keygen", "-F", ip, "-f", str(path)], capture_output=True).returncode == 0


@pytest.mark.cluster
def test_accept_new_creates_a_missing_known_hosts_private_to_the_user(cluster, tmp_path):
    """A fresh account has no ~/.ssh: accept-new failed with "No such file or directory"."""
    node = cluster.nodes[0]
    kh = tmp_path / "fresh" / ".ssh" / "known_hosts"
    t = _ssh_transport(cluster, tmp_path, node, known_hosts=str(kh), host_key_policy="accept-new")
    assert _echo(t) == "ok"
    assert kh.stat().st_mode & 0o777 == 0o600 and kh.parent.stat().st_mode & 0o777 == 0o700
    assert _found_by_ssh_keygen(kh, node.ip)
    assert _echo(_ssh_transport(cluster, tmp_path, node, known_hosts=str(kh))) == "ok"  # strict now


@pytest.mark.cluster
def test_strict_mode_says_the_known_hosts_file_does_not_exist(cluster, tmp_path):
    import asyncio

    from spark_tui.core.node.connection import HostKeyError

    kh = tmp_path / "nowhere" / "known_hosts"
    t = _ssh_transport(cluster, tmp_path, cluster.nodes[0], known_hosts=str(kh))
    with pytest.raises(HostKeyError) as exc:
        asyncio.run(t.run(["true"]))
    assert f"known_hosts {kh} does not exist" in str(exc.value) and "accept-new" in str(exc.value)
    assert not kh.parent.exists()


@pytest.mark.cluster
def test_accept_new_hashes_the_entry_it_adds_to_a_hashed_known_hosts(cluster, tmp_path):
    """`HashKnownHosts yes` (Debian's default) keeps host names out of the file; a plain entry
    added by spark-tui would list the cluster's addresses again."""
    import subprocess

    kh = tmp_path / "known_hosts"
    kh.write_text(open(cluster.known_hosts).read().splitlines()[0] + "\n")  # node 1 only
    subprocess.run(["ssh-keygen", "-H", "-f", str(kh)], check=True, capture_output=True)
    node = cluster.nodes[1]
    t = _ssh_transport(cluster, tmp_path, node, known_hosts=str(kh), host_key_policy="accept-new")
    assert _echo(t) == "ok"
    text = kh.read_text()
    assert node.ip not in text and all(line.startswith("|1|") for line in text.splitlines()), text
    assert _found_by_ssh_keygen(kh, node.ip)
    assert _echo(_ssh_transport(cluster, tmp_path, node, known_hosts=str(kh))) == "ok"


# --- finding 6: images are run only when they look like vLLM (or --all), and then confined --------

# An image author's python3: it takes its time (so the test can inspect the running container),
# then reports what it was allowed to do. spark-tui shows the end of an unanswering python3's output.
HOSTILE_PYTHON = """#!/bin/sh
sleep 4
touch /usr/bin/owned 2>/dev/null && echo root-writable || echo root-read-only
grep CapEff /proc/self/status
"""
HOSTILE = "evil/notes:1"


@pytest.fixture
def hostile_image(cluster, tmp_path):
    """HOSTILE on the first two nodes: the test image with the python3 above (docker cp + commit)."""
    script = tmp_path / "python3"
    script.write_text(HOSTILE_PYTHON)
    script.chmod(0o755)
    for node in cluster.nodes[:2]:
        cluster.docker(node, "rm", "-f", "hostile-build", check=False)
        cluster.docker(node, "create", "--name", "hostile-build", tc.IMAGE)
        cluster.docker(node, "cp", str(script), "hostile-build:/usr/bin/python3")
        cluster.docker(node, "commit", "hostile-build", HOSTILE)
        cluster.docker(node, "rm", "hostile-build")
    yield HOSTILE
    for node in cluster.nodes[:2]:
        cluster.docker(node, "rmi", "-f", HOSTILE, check=False)


def _created_images(cluster, node, since: float) -> list[str]:
    import time

    out = cluster.docker(
        node,
        "events",
        "--since",
        f"{since:.3f}",
        "--until",
        f"{time.time():.3f}",
        "--filter",
        "type=container",
        "--filter",
        "event=create",
        "--format",
        "{{.Actor.Attributes.image}}",
    ).stdout
    return out.split()


@pytest.mark.cluster
def test_images_runs_no_container_of_an_image_that_does_not_look_like_vllm(
    cluster, tmp_path, run_cli, hostile_image
):
    import time

    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    t0 = time.time()
    code, out, err = run_cli("images", "--cluster", path, "--json")
    assert code == 0, err
    created = sum((_created_images(cluster, n, t0) for n in cluster.nodes[:2]), [])
    hostile_id = cluster.docker(cluster.nodes[0], "image", "inspect", "-f", "{{.Id}}", hostile_image).stdout
    assert created and hostile_id.strip() not in created and hostile_image not in created, created
    rows = {i["row"]["ref"]: i for i in json.loads(out)["images"]}
    assert any("images --all" in note for note in rows[hostile_image]["facts"]["notes"])
    assert rows[tc.IMAGE]["facts"]["vllm"] == "0.12.0"  # the effective image is still asked


@pytest.mark.cluster
def test_images_all_runs_every_image_confined(cluster, tmp_path, run_cli, hostile_image):
    """`--all` asks every image; its container has no network, no capabilities, no new privileges,
    a read-only root and pids, memory, CPU and log limits (read from the engine while it runs)."""
    import threading
    import time

    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    seen: list[dict] = []
    stop = threading.Event()
    head = cluster.nodes[0]

    def watch():
        while not stop.is_set() and not seen:
            ids = cluster.docker(head, "ps", "-q", "--filter", "label=spark-tui.probe").stdout.split()
            for cid in ids:
                got = cluster.docker(head, "inspect", cid, check=False)
                if got.returncode == 0:
                    seen.extend(json.loads(got.stdout))
            time.sleep(0.2)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        code, out, err = run_cli("images", "--all", "--cluster", path, "--json")
    finally:
        stop.set()
        watcher.join()
    assert code == 0, err
    assert seen, "no probe container seen running"
    host = seen[0]["HostConfig"]
    assert host["CapDrop"] == ["ALL"] and host["SecurityOpt"] == ["no-new-privileges"]
    assert host["ReadonlyRootfs"] is True and host["NetworkMode"] == "none" and not host["Privileged"]
    assert 0 < host["PidsLimit"] <= 1024 and 0 < host["Memory"] <= 8 << 30 and 0 < host["NanoCpus"] <= 4e9
    assert host["LogConfig"]["Config"].get("max-size")
    rows = {i["row"]["ref"]: i for i in json.loads(out)["images"]}
    notes = " ".join(rows[hostile_image]["facts"]["notes"])
    assert "root-read-only" in notes and "CapEff:\t0000000000000000" in notes, notes
    assert cluster.docker(head, "ps", "-aq", "--filter", "label=spark-tui.probe").stdout == ""


# --- finding 15: secrets from a file or stdin, never in argv; a readable cluster file is told -----


def _config_of(argv, environ, stdin=None, monkeypatch=None):
    import io

    from spark_tui.cli.main import _SettingsNamespace, build_parser
    from spark_tui.settings.flags import load_config

    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    args = build_parser().parse_args(["config", *argv], namespace=_SettingsNamespace())
    return load_config(args, environ)


def test_hf_token_from_a_file_flag_an_env_file_or_stdin_names_the_file(clean_env, monkeypatch):
    secret = clean_env / "hf-token"
    secret.write_text(TOKEN + "\n")  # as `echo hf_... > file` writes it
    secret.chmod(0o600)
    config = _config_of(["--hf-token-file", str(secret)], {})
    assert config["hf_token"] == TOKEN
    assert str(config.values["hf_token"].source) == f"command line --hf-token-file {secret}"
    config = _config_of([], {"SPARK_TUI_HF_TOKEN_FILE": str(secret)})
    assert config["hf_token"] == TOKEN
    assert str(config.values["hf_token"].source) == f"environment SPARK_TUI_HF_TOKEN_FILE={secret}"
    config = _config_of(["--hf-token-file", "-"], {}, stdin=TOKEN + "\n", monkeypatch=monkeypatch)
    assert config["hf_token"] == TOKEN and str(config.values["hf_token"].source).endswith("(standard input)")


def test_hf_token_file_never_shows_the_token_and_bad_files_are_one_line(clean_env, run_cli):
    secret = clean_env / "hf-token"
    secret.write_text(TOKEN)
    code, out, err = run_cli("config", "--hf-token-file", str(secret), "--json")
    assert code == 0 and TOKEN not in out + err
    row = next(r for r in json.loads(out)["cluster"] if r["key"] == "hf_token")
    assert row["effective"] == "***" and str(secret) in row["source"]
    for content, why in (("", "is empty"), ("a\nb\n", "more than one line")):
        secret.write_text(content)
        code, out, err = run_cli("config", "--hf-token-file", str(secret))
        assert code == 2 and err.count("\n") == 1 and "--hf-token-file" in err and why in err, err
    code, _, err = run_cli("config", "--hf-token-file", str(clean_env / "absent"))
    assert code == 2 and "cannot read" in err and "Traceback" not in err
    secret.write_text(TOKEN)
    code, _, err = run_cli("config", "--hf-token-file", str(secret), "--hf-token", TOKEN)
    assert code == 2 and "not both" in err and TOKEN not in err


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o600])
def test_a_cluster_file_holding_hf_token_readable_by_others_is_warned(clean_env, run_cli, mode):
    path = clean_env / "cluster.yaml"
    path.write_text(f"hf_token: {TOKEN}\nnodes:\n  - name: a\n    host: 10.231.99.1\n")
    path.chmod(mode)
    code, out, err = run_cli("config", "--cluster", str(path))
    assert code == 0 and TOKEN not in out + err
    warned = [line for line in (out + err).splitlines() if "holds hf_token" in line]
    if mode == 0o600:
        assert warned == []
    else:
        assert warned and f"chmod 600 {path}" in warned[0] and f"{mode:o}" in warned[0], warned


# --- also sound: node programs never parsed by a login shell that is not POSIX sh ------------------


@pytest.mark.cluster
@pytest.mark.parametrize("shell", ["/usr/bin/tcsh"])
def test_commands_run_the_same_under_a_login_shell_that_is_not_posix(cluster, tmp_path, shell):
    """sshd hands an exec request to the user's login shell. shlex quotes for POSIX sh: tcsh
    refused a quoted newline ("Unmatched '."), which every `python3 -c PROGRAM` of sync holds."""
    import asyncio

    node = cluster.nodes[0]
    canary = tmp_path / "canary"
    hostile = f"two\nlines $(touch {canary}) `touch {canary}` !! \\\\ ' \" $HOME %s"
    cluster.set_login_shell(node, shell)
    try:
        t = _ssh_transport(cluster, tmp_path, node)

        async def go():
            try:
                plain = await t.run(["printf", "%s", hostile])
                piped = await t.run(
                    ["python3", "-c", "import sys\nprint(sys.stdin.read().upper())"], stdin="abc\n"
                )
                lines: list[str] = []
                streamed = await t.stream(["sh", "-c", "cat >&2; echo done"], lines.append, "x\ny\n")
                script = await t.run_script('printf "%s|" "$@"', ("a b", hostile))
                return plain, piped, streamed, lines, script
            finally:
                await t.close()

        plain, piped, streamed, lines, script = asyncio.run(go())
    finally:
        cluster.set_login_shell(node, None)
    assert plain.exit_status == 0 and plain.stdout == hostile, plain
    assert piped.stdout == "ABC\n\n"
    assert streamed.stdout == "done\n" and [line for line in lines if line] == ["x", "y"]
    assert script == f"a b|{hostile}|\n"  # the persistent shell ends what it returns with a newline
    assert not canary.exists()


@pytest.mark.cluster
def test_down_removes_only_containers_with_the_cluster_label_and_the_exact_name(cluster, tmp_path, run_cli):
    """Docker's name filter matches substrings, and a container can be named like ours by anyone:
    `down` removes the one with this cluster's label and exactly the container name, nothing else."""
    from spark_tui.settings.resolve import Inputs, resolve

    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    config = resolve(Inputs(cluster_file=path, user_config="", environ={}))
    name, ours = config["container_name"], f"spark-tui.cluster={config['name']}"
    first, second = cluster.nodes[:2]
    made = [
        (first, [(name, ours), (f"{name}_2", ours), (f"my-{name}", ours)]),
        (second, [(name, "spark-tui.cluster=other-cluster"), (f"{name}-x", "")]),
    ]
    for node, items in made:
        for cname, label in items:
            extra = ["--label", label] if label else []
            cluster.docker(
                node, "run", "-d", "--name", cname, *extra, "--entrypoint", "sleep", tc.IMAGE, "300"
            )
    code, out, err = run_cli("down", "--cluster", path, "--yes")
    assert code == 0 and out.count(f"removed {name}") == 1, out + err
    left = [set(cluster.docker(n, "ps", "-a", "--format", "{{.Names}}").stdout.split()) for n, _ in made]
    assert left == [{f"{name}_2", f"my-{name}"}, {name, f"{name}-x"}]
