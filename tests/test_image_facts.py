"""The image inspector: its probe program, the checks and the cache, on the namespace test cluster.

The test images answer as real ones do (tests/cluster/image/python3 stands in for the image's
python3, answering spark-tui's probe from the image's own files; `vllm --version` and
`ray --version` answer in images without python3)."""

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spark_tui.core.images.image_checks import default_cache
from spark_tui.core.images.image_facts import PROBE, FactsCache, ImageFacts, merge_probe
from spark_tui.core.node.nodes import Nodes
from spark_tui.core.report.check import run_checks
from spark_tui.settings.resolve import Inputs, resolve
from tests.cluster import cluster as tc

NEW_ARCH = "Qwen3VLMoeForConditionalGeneration"  # vLLM 0.11.0 on: the NGC 25.10 image (0.10.2) lacks it


def test_probe_program_runs_on_a_real_python():
    """PROBE is real Python: on this machine's python3 (no vLLM, no Ray) every question gets an
    answer or a reason, never an exception."""
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    facts = ImageFacts("sha256:x")
    assert merge_probe(facts, out)
    assert facts.python is True and facts.archs is None and facts.vllm is None
    assert any("vLLM model registry: ModuleNotFoundError" in n for n in facts.notes), facts.notes


def test_probe_output_that_is_not_an_answer_is_refused():
    for text in ("", "SPARK_TUI_FACTS", "SPARK_TUI_FACTS [1, 2]", "SPARK_TUI_FACTS {bad json", "Traceback"):
        assert not merge_probe(ImageFacts("sha256:x"), text)


def test_cache_survives_a_torn_or_foreign_file(tmp_path):
    ab, cd, ef = ("sha256:" + x * 32 for x in ("ab", "cd", "ef"))
    cache = FactsCache(tmp_path)
    cache.put(ImageFacts(ab, vllm="0.12.0"))
    assert cache.get(ab).vllm == "0.12.0"
    (tmp_path / f"sha256-{'cd' * 32}.json").write_text(f'{{"image_id": "{cd}", "from_a_newer_version": 1}}')
    (tmp_path / f"sha256-{'ef' * 32}.json").write_text('{"image_id": ')
    assert cache.get(cd) is None and cache.get(ef) is None


# --- on the namespace test cluster ----------------------------------------------------------


def hf_cache(tmp_path: Path, model: str, archs: list[str]) -> Path:
    """A Hugging Face cache holding `model`'s config.json, laid out as huggingface_hub writes it."""
    root = tmp_path / "hf"
    repo = root / "hub" / ("models--" + model.replace("/", "--"))
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("0123abcd")
    snap = repo / "snapshots" / "0123abcd"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(json.dumps({"architectures": archs, "model_type": "qwen3_vl_moe"}))
    return root


def config_for(cluster, tmp_path, hf: Path | None = None, **flags):
    """The test cluster file (must-set values only); a test's own values visibly in `flags`
    (`volumes` pointing at a test Hugging Face cache when `hf` is given)."""
    path = cluster.cluster_file(2, tmp_path / "c2.yaml")
    if hf is not None:
        flags["volumes"] = [f"{hf}:/root/.cache/huggingface"]
    return resolve(
        Inputs(
            cluster_file=path,
            user_config="",
            environ={},
            flags={k: (v, f"--{k}") for k, v in flags.items()},
        )
    )


def checks(config):
    async def go():
        async with Nodes(config) as nodes:
            return await run_checks(config, nodes)

    return {(r.id, r.node): r for r in asyncio.run(go())}


def image_by(by, cid):
    found = [r for (i, _), r in by.items() if i == cid]
    assert len(found) == 1, (cid, found)
    return found[0]


@pytest.fixture
def profile_image(cluster):
    """Import a stand-in image profile on the first two nodes; removed afterwards."""
    made = []

    def imp(profile: str) -> str:
        ref = tc.IMAGES[profile].ref
        for node in cluster.nodes[:2]:
            cluster.import_image(node, ref, profile=profile)
        made.append(ref)
        return ref

    yield imp
    for ref in made:
        for node in cluster.nodes[:2]:
            cluster.docker(node, "rmi", "-f", ref, check=False)


@pytest.mark.cluster
def test_default_image_passes_every_image_check(cluster, tmp_path):
    config = config_for(cluster, tmp_path, hf_cache(tmp_path, "test/tiny-model", [NEW_ARCH]))
    by = checks(config)
    ep = image_by(by, "image.entrypoint")
    assert ep.status == "pass" and "ENTRYPOINT vllm serve, CMD none" in ep.message, ep
    assert "spark-tui sets ENTRYPOINT ray (executor ray)" in ep.message
    assert image_by(by, "image.ray").message == f"Ray 2.49.2 imports in {tc.IMAGE}"
    arch = image_by(by, "model.architecture")
    assert arch.status == "pass" and NEW_ARCH in arch.message and "vLLM 0.12.0" in arch.message, arch
    assert ("image.native", "spark-1") not in by  # executor ray: native flags are not asked


@pytest.mark.cluster
def test_old_image_fails_native_and_the_model_architecture(cluster, tmp_path, profile_image):
    """The seed's failure: an image whose vLLM predates the model, known before any load."""
    image = profile_image("ngc-25.10")
    hf = hf_cache(tmp_path, "test/tiny-model", [NEW_ARCH])
    by = checks(config_for(cluster, tmp_path, hf, image=image, executor="native"))
    native = image_by(by, "image.native")
    assert (
        native.status == "fail"
        and "vLLM 0.10.2+9dd9ca32.nv25.10 (label com.nvidia.vllm.version)" in native.message
    )
    assert "use executor ray, or an image with vLLM >= 0.11.1" == native.fix
    arch = image_by(by, "model.architecture")
    assert arch.status == "fail", arch
    assert (
        f"test/tiny-model is {NEW_ARCH}, which vLLM 0.10.2+9dd9ca32.nv25.10 in {image} does not know"
        in arch.message
    )
    assert "ENTRYPOINT /opt/nvidia/nvidia_entrypoint.sh" in image_by(by, "image.entrypoint").message


@pytest.mark.cluster
def test_image_without_ray_fails_the_ray_executor(cluster, tmp_path, profile_image):
    image = profile_image("noray")
    by = checks(config_for(cluster, tmp_path, image=image))
    r = image_by(by, "image.ray")
    assert r.status == "fail" and f"{image} has no Ray" in r.message and "No module named 'ray'" in r.message
    assert r.fix == "use executor native or an image with Ray"
    # The model is in no cache here: its architecture is skipped with the reason, never passed.
    arch = image_by(by, "model.architecture")
    assert arch.status == "skipped" and "test/tiny-model is not in" in arch.message


@pytest.mark.cluster
def test_image_without_python_answers_what_it_can_and_skips_the_rest(cluster, tmp_path, profile_image):
    image = profile_image("nopython")
    hf = hf_cache(tmp_path, "test/tiny-model", [NEW_ARCH])
    by = checks(config_for(cluster, tmp_path, hf, image=image))
    assert image_by(by, "image.ray").message == f"Ray 2.49.2 imports in {image}"  # from `ray --version`
    arch = image_by(by, "model.architecture")
    assert arch.status == "skipped" and "no python3 in the image" in arch.message, arch
    by = checks(config_for(cluster, tmp_path, hf, image=image, executor="native"))
    native = image_by(by, "image.native")
    assert native.status == "pass" and "vLLM 0.12.0 (vllm --version)" in native.message


def _creates(cluster, node, since: float) -> list[str]:
    """Containers the node's engine created since `since` (its event stream, not our bookkeeping)."""
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
def test_a_second_check_starts_no_container(cluster, tmp_path, clean_env):
    config = config_for(cluster, tmp_path)
    head = cluster.nodes[0]
    t0 = time.time()
    first = image_by(checks(config), "image.ray")
    started = _creates(cluster, head, t0)
    assert started == [next(iter(started), "")] and len(started) == 1, started  # one probe container
    cached = list(Path(default_cache().dir).glob("sha256-*.json"))
    assert len(cached) == 1
    t1 = time.time()
    second = image_by(checks(config), "image.ray")
    assert _creates(cluster, head, t1) == [] and second == first
    assert cluster.docker(head, "ps", "-aq", "--filter", "label=spark-tui.probe").stdout == ""


@pytest.mark.cluster
def test_images_command_lists_what_each_image_can_run(cluster, tmp_path, profile_image, run_cli):
    old = profile_image("ngc-25.10")
    cluster.docker(cluster.nodes[0], "rmi", old)  # on one node only
    hf = hf_cache(tmp_path, "test/tiny-model", [NEW_ARCH])
    config_for(cluster, tmp_path)
    argv = ["images", "--cluster", str(tmp_path / "c2.yaml"), "--volumes", f"{hf}:/root/.cache/huggingface"]
    code, out, err = run_cli(*argv, "--json")
    assert code == 0, err
    data = json.loads(out)
    rows = {i["row"]["ref"]: i for i in data["images"]}
    eff = rows[tc.IMAGE]
    assert (
        eff["effective"]
        and eff["source"].startswith("cluster file ")
        and eff["source"].endswith("c2.yaml:2:8")
    )
    assert eff["facts"]["vllm"] == "0.12.0" and eff["arch_ok"] is True and eff["problems"] == []
    assert rows[old]["arch_ok"] is False and list(rows[old]["row"]["nodes"]) == [cluster.nodes[1].name]
    assert rows[old]["problems"] == [f"its vLLM does not know {NEW_ARCH}"]
    code, out, _ = run_cli(*argv)
    lines = out.splitlines()
    assert lines[0].split() == ["IMAGE", "ID", "NODES", "vLLM", "RAY", "NATIVE", NEW_ARCH[:22]]
    row = next(line for line in lines if line.startswith("*"))
    assert row.split()[1] == tc.IMAGE and row.split()[-4:] == ["0.12.0", "2.49.2", "yes", "✓"]
    assert f"    ✗ its vLLM does not know {NEW_ARCH}" in lines


@pytest.mark.cluster
@pytest.mark.parametrize("executor", ["ray", "native"])
def test_an_image_on_no_node_skips_every_image_check_with_the_reason(cluster, tmp_path, executor):
    by = checks(config_for(cluster, tmp_path, image="spark-test/not-built:1", executor=executor))
    asked = "image.ray" if executor == "ray" else "image.native"
    for cid in ("image.entrypoint", asked, "model.architecture"):
        r = image_by(by, cid)
        assert r.status == "skipped", r
        assert r.message == "image spark-test/not-built:1: not on spark-1; not on spark-2", r
