"""Ray's log forwarding read right: every line to its node, dedup-folded lines included.

Real samples in tests/data/ray (see tests/data/INDEX.md section 6)."""

import json
import textwrap

from spark_tui import diagnose
from spark_tui.core.launch.nccl_nodes import node_of, per_node
from spark_tui.diagnose import paste
from spark_tui.parsers import nccl, ray_lines, vllm
from spark_tui.settings.resolve import Inputs, resolve
from tests.helpers import DATA

HEAD_IP, WORKER_IP, OTHER_IP = "10.244.2.62", "10.244.1.107", "10.244.3.9"


def read(name: str) -> str:
    return (DATA / "ray" / name).read_text()


def three_nodes(tmp_path, **flags):
    """The sample's head and worker by their data addresses, and a third node with no lines."""
    path = tmp_path / "c.yaml"
    path.write_text(
        textwrap.dedent(f"""\
            name: dedup
            head: head
            image: vllm-node:latest
            executor: ray
            model: m
            netdev: eth0
            nodes:
              - {{name: head, host: {HEAD_IP}, data_ip: {HEAD_IP}}}
              - {{name: worker, host: {WORKER_IP}, data_ip: {WORKER_IP}}}
              - {{name: third, host: {OTHER_IP}, data_ip: {OTHER_IP}}}
            """)
    )
    return resolve(
        Inputs(cluster_file=str(path), user_config="", flags={k: (v, f"--{k}") for k, v in flags.items()})
    )


def test_unfold_reads_rays_suffix_in_each_form_it_takes():
    plain = "(RayWorkerWrapper pid=660) host:660:660 [6] NCCL INFO Using network IB"
    assert ray_lines.unfold(plain) == (plain, 1)
    assert ray_lines.unfold(plain + " [repeated 14x across cluster]") == (plain, 14)
    note = (
        " (Ray deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to disable log deduplication, or see "
        "https://docs.ray.io/en/master/ray-observability/user-guides/configure-logging.html#log-deduplication "
        "for more options.)"
    )
    assert ray_lines.unfold(plain + " [repeated 8x across cluster]" + note) == (plain, 8)
    # coloured by Ray (colorama green), and as a paste that lost the ESC bytes
    assert ray_lines.unfold(plain + "\x1b[32m [repeated 3x across cluster]\x1b[0m") == (plain, 3)
    residue = (DATA / "nccl" / "vllm-ray-watchdog-timeout-ansi-stripped-vllm2734.txt").read_text()
    folded = next(line for line in residue.splitlines() if "across cluster]" in line)
    text, times = ray_lines.unfold(folded)
    assert times == 6 and "repeated" not in text and text.endswith("(function operator())")


def test_a_folded_nccl_line_counts_for_its_prefix_node_and_its_others_for_no_node(tmp_path):
    """Ray folded 14 actors' NCCL lines into a head-local actor's (no ip=): the head's transport
    and init come from it, the worker's from its own plain lines; the 13 occurrences the fold does
    not name are counted, never handed to a node; the third node, whose lines are nowhere, says so."""
    parser = nccl.NcclParser()
    for name in (
        "ray-dedup-first-actor-plain-surajssd.txt",
        "ray-dedup-folded-block-surajssd.txt",
        "ray-dedup-folded-init-complete-surajssd.txt",
    ):
        parser.feed_lines(read(name).splitlines())
    s = parser.summary
    assert s.init_start == 1 + 14 and s.init_complete == 14
    assert s.folded_init == 13 + 13
    # 12 folded NCCL lines in the block, 6 in the later window, each standing for N-1 unnamed ones;
    # the two folded vLLM lines that mention nccl are not NCCL's
    assert s.folded == 11 * 13 + 13 + (5 * 13 + 5 + 6)
    assert s.by_origin[WORKER_IP].transport == "IB"
    assert s.by_origin["deepseek-v2-5-0"].transport == "IB"  # the head-local actor: NCCL's host field
    assert s.by_origin["deepseek-v2-5-0"].bootstrap == [("eth0", HEAD_IP)]
    assert s.by_origin[WORKER_IP].init_start == 1 and s.by_origin[WORKER_IP].init_complete == 1
    assert s.by_origin["deepseek-v2-5-0"].init_start == 1

    nets = per_node(three_nodes(tmp_path), {"head": s})
    assert nets["head"].transport == "IB" and nets["worker"].transport == "IB"
    assert nets["worker"].init_text() == "init complete (1/1 of its ranks)"
    assert nets["head"].init_text() == (
        "init complete not seen (0/1 of its ranks): Ray's log deduplication may have folded its lines"
    )
    third = nets["third"]
    assert third.transport is None and third.init_start == 0
    # the worker's START line folded into another actor's, its COMPLETE line plain: the COMPLETE
    # line proves the rank started, never "1/0"
    nets["worker"].init_start = 0
    assert nets["worker"].init_text() == "init complete (1/1 of its ranks)"
    # spark-tui's RAY_DEDUP_LOGS=0 is in place here (the sample's cluster had Ray's default)
    assert third.text().startswith("NCCL: not said for this node: Ray's log deduplication folded 232 NCCL")
    assert "RAY_DEDUP_LOGS=0" in third.line()
    on = per_node(three_nodes(tmp_path, env={"RAY_DEDUP_LOGS": "1"}), {"head": s})["third"]
    assert on.text().startswith(
        "NCCL: not said for this node: Ray's log deduplication is on (RAY_DEDUP_LOGS=1 from env "
        "(command line --env)) folded 232 NCCL line(s)"
    )


def test_without_folds_a_node_without_lines_is_not_blamed_on_dedup(tmp_path):
    parser = nccl.NcclParser()
    parser.feed_lines(read("ray-dedup-first-actor-plain-surajssd.txt").splitlines())
    nets = per_node(three_nodes(tmp_path), {"head": parser.summary})
    assert nets["third"].text() == "NCCL: no NCCL lines from this node yet"
    # Ray's default (RAY_DEDUP_LOGS unset, as an image's own env may leave it): said, not blamed on the node
    nets = per_node(three_nodes(tmp_path, executor="native"), {"head": parser.summary})
    assert nets["third"].text() == "NCCL: no NCCL lines from this node yet"
    assert nets["worker"].line().startswith("NCCL: IB/RoCE (IB) on mlx5_0")


def test_a_worker_ranks_oom_is_that_workers_not_the_heads(tmp_path):
    v = vllm.parse_text(read("vllm-ascend-ray-worker-oom-remote-ip.txt"))
    line, origin = v.failure()
    assert origin == "10.43.132.227" and "NPU out of memory" in line
    config = three_nodes(tmp_path)
    assert node_of(config, WORKER_IP, "head") == "worker"
    assert node_of(config, "", "head") == "head"
    assert node_of(config, "10.9.9.9", "head") == "head"  # an address of no node: where it was read


def test_a_folded_oom_of_a_driver_node_actor_stays_on_that_node():
    v = vllm.parse_text(read("vllm-ascend-ray-worker-oom-folded-1127.txt"))
    line, origin = v.failure()
    assert origin == "" and "NPU out of memory" in line and "repeated" not in line
    assert v.verdicts()[0].code == "oom"


def test_a_ray_task_error_names_the_failed_actors_node():
    v = vllm.parse_text(read("ray-task-error-oom-easyr1.txt"))
    line, origin = v.failure()
    assert origin == "10.130.71.7" and line.startswith("ray.exceptions.RayTaskError(OutOfMemoryError)")
    verdict = v.verdicts()[0]
    assert verdict.level == "error" and "ip=10.130.71.7" in verdict.text


def test_the_rank_that_failed_is_named_before_the_drivers_summary():
    """vLLM's own order under Ray: the worker's OOM with its prefix, then the engine's generic
    failure and the RayTaskError (stand-in output, in the real formats above)."""
    text = "\n".join(
        [
            "(EngineCore_DP0 pid=7) ERROR 12-03 10:00:00 [core.py:708] EngineCore failed to start.",
            f"(RayWorkerWrapper pid=9, ip={WORKER_IP}) ERROR 12-03 10:00:00 [worker_base.py:620] "
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 28.44 GiB. GPU 0 has a total "
            "capacity of 119.70 GiB of which 1.38 GiB is free.",
            "(EngineCore_DP0 pid=7) RuntimeError: Engine core initialization failed. See root cause above.",
        ]
    )
    line, origin = vllm.parse_text(text).failure()
    assert origin == WORKER_IP and "CUDA out of memory" in line


def test_paste_cleaning_and_live_parsing_read_the_suffix_alike():
    """A pasted folded log reads as the live one: the same unfold, the same nodes, the same counts."""
    folded = read("ray-dedup-folded-block-surajssd.txt")
    cleaned = paste.clean(folded)
    assert cleaned.repeated == 14 * 14
    live, pasted = nccl.parse_text(folded), nccl.parse_text(cleaned.text)
    assert live == pasted and pasted.init_start == 14 and pasted.folded == 12 * 13
    result = diagnose.analyse(folded, "nccl")
    assert result["summary"]["folded"] == 12 * 13 and result["summary"]["repeated_lines_folded_by_ray"] == 196
    assert "repeated" not in json.dumps(result["summary"]["per_host"])


def test_ray_dedup_is_turned_off_on_ray_containers_with_its_reason_and_can_be_overridden(tmp_path):
    env = {v.name: v for v in three_nodes(tmp_path).node("worker").container_env}
    dedup = env["RAY_DEDUP_LOGS"]
    assert dedup.value == "0" and dedup.overridden_by is None
    assert dedup.derived_from.startswith("executor ray (cluster file")
    assert "each with its node" in dedup.derived_from
    native = three_nodes(tmp_path, executor="native").node("worker").container_env
    assert "RAY_DEDUP_LOGS" not in {v.name for v in native}
    config = three_nodes(tmp_path, env={"RAY_DEDUP_LOGS": "1"})
    node = config.node("worker")
    derived = next(v for v in node.container_env if v.name == "RAY_DEDUP_LOGS" and v.value == "0")
    assert str(derived.overridden_by) == "command line --env"
    assert node.env_dict()["RAY_DEDUP_LOGS"] == "1"


def test_a_dead_actor_is_named_by_the_ip_line_under_actor_died_error():
    """A crash: Ray raises ActorDiedError in the driver and says the actor's node a few lines on."""
    v = vllm.parse_text(read("ray-actor-died-error-verl.txt"))
    line, origin = v.failure()
    assert origin == "10.80.8.181" and line.startswith("ray.exceptions.ActorDiedError")
    # with vLLM's process prefix on each line, as the head's log has it
    prefixed = "\n".join(
        f"(EngineCore_DP0 pid=7) {x}" for x in read("ray-actor-died-error-verl.txt").splitlines()
    )
    assert vllm.parse_text(prefixed).failure()[1] == "10.80.8.181"


def test_the_raylet_names_the_node_of_a_worker_that_died():
    v = vllm.parse_text(read("raylet-worker-died-openrlhf621.txt"))
    line, origin = v.failure()
    assert origin == "172.19.24.110" and line.startswith("(raylet) A worker died or was killed")


def test_a_ray_task_errors_remote_traceback_is_the_actors_node():
    """The driver prints Ray's RayTaskError with the actor's traceback under it, ending in the
    exception the actor raised: that OOM line is the actor's node's, not the driver's."""
    head = "(EngineCore_DP0 pid=198) "
    text = "\n".join(
        [
            head + "ERROR 12-03 17:20:00 [core.py:708] EngineCore failed to start.",
            head + "RayTaskError(OutOfMemoryError): ray::RayWorkerWrapper.determine_available_memory() "
            f"(pid=311, ip={WORKER_IP}, actor_id=7a7e28706e933f93da5fe49701000000, repr=<RayWorkerWrapper>)",
            head
            + '  File "/opt/venv/lib/python3.11/site-packages/vllm/standin/ray_executor.py", line 90, in x',
            head + "    raise OutOfMemoryError(err)",
            head + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 28.44 GiB.",
            head + "ERROR 12-03 17:20:01 [core.py:710] something after",
            head + "ValueError: the driver's own",
        ]
    )
    v = vllm.parse_text(text)
    line, origin = v.failure()
    assert origin == WORKER_IP and "CUDA out of memory" in line
    assert v.origins[head + "ValueError: the driver's own"] == ""  # the remote traceback ended


def test_a_workers_own_lines_inside_the_drivers_traceback_leave_it_the_workers():
    """Ray forwards the worker's own lines into the driver's output as they come: they can land
    between the RayTaskError's frames and the exception it ends in (a race seen in a test run under
    load). They are the worker's lines; the driver's copy of the exception is still the worker's."""
    head = "(EngineCore_DP0 pid=198) "
    worker = f"(EngineCore_DP0 pid=198) (RayWorkerWrapper pid=311, ip={WORKER_IP}) "
    text = "\n".join(
        [
            head + "ERROR 12-03 17:20:00 [core.py:708] EngineCore failed to start.",
            head + "RayTaskError(OutOfMemoryError): ray::RayWorkerWrapper.determine_available_memory() "
            f"(pid=311, ip={WORKER_IP}, actor_id=7a7e28706e933f93da5fe49701000000, repr=<RayWorkerWrapper>)",
            head
            + '  File "/opt/venv/lib/python3.11/site-packages/vllm/standin/ray_executor.py", line 96, in x',
            worker
            + "ERROR 12-03 17:20:00 [worker_base.py:620] Error executing method 'determine_available_memory'.",
            worker + "Traceback (most recent call last):",
            head + "    raise OutOfMemoryError(err)",
            head
            + "vllm.standin.ray_executor.OutOfMemoryError: CUDA out of memory. Tried to allocate 28.44 GiB.",
            worker + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 28.44 GiB.",
        ]
    )
    v = vllm.parse_text(text)
    line, origin = v.failure()
    assert origin == WORKER_IP and line.startswith(head + "vllm.standin")
    assert all(v.origins[one] == WORKER_IP for one in v.oom)
