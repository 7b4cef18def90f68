"""What a node prints for a model's manifest is input: shapes are checked before use, and output of
the wrong shape is named as the node's error (a failed `model.complete` row), never a crash. Runs
on this machine (a `host: local` node) with a `python3` on PATH that prints the output under test."""

import asyncio
import json
import os
from pathlib import Path

import pytest

from spark_tui.core.models.model_files import complete_rows, manifests
from spark_tui.core.node.nodes import Nodes
from spark_tui.settings.resolve import Inputs, resolve

GOOD = {
    "exists": True,
    "ref": "r1",
    "config": True,
    "shards": ["model.safetensors"],
    "files": {"snapshots/r1/model.safetensors": ["f", 10, "", True]},
    "expected": {"snapshots/r1/model.safetensors": 10},
    "bad": {},
    "hashed": 0,
}


def printing(tmp_path: Path, text: str) -> None:
    """A python3 first on PATH that prints `text`, whatever it is asked."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "out").write_text(text)
    fake = bin_dir / "python3"
    fake.write_text(f"#!/bin/sh\ncat {bin_dir / 'out'}\n")
    fake.chmod(0o755)
    os.environ["PATH"] = f"{bin_dir}:{os.environ['PATH']}"


def rows_for(tmp_path: Path, hashes: bool = False):
    cache = tmp_path / "hf"
    (cache / "hub" / "models--test--tiny-model").mkdir(parents=True)
    path = tmp_path / "c.yaml"
    path.write_text(
        "image: x\nmodel: test/tiny-model\nnodes:\n  - name: here\n    host: local\n"
        f"    volumes: ['{cache}:/root/.cache/huggingface']\n"
    )
    env = {"SPARK_TUI_VERIFY_HASHES": "true"} if hashes else {}
    config = resolve(Inputs(cluster_file=str(path), user_config="", environ=env))

    async def go():
        async with Nodes(config) as nodes:
            return await manifests(config, nodes)

    found = asyncio.run(go())
    rows = []
    complete_rows(config, found, lambda *row: rows.append(row))
    return found["here"], rows


@pytest.fixture(autouse=True)
def keep_path(monkeypatch):
    monkeypatch.setenv("PATH", os.environ["PATH"])


def test_a_well_formed_manifest_is_read(tmp_path):
    printing(tmp_path, json.dumps(GOOD))
    m, rows = rows_for(tmp_path, hashes=True)
    assert not m.error and m.hashed == 0 and rows[0][2] == "pass", rows


@pytest.mark.parametrize(
    "change",
    [
        {"files": {"snapshots/r1/model.safetensors": ["f", "10", "", True]}},  # a size as text
        {"files": {"snapshots/r1/model.safetensors": "f"}},
        {"files": []},
        {"bad": {"blobs/x": "corrupt"}},
        {"bad": {"blobs/x": ["model.safetensors"]}},
        {"expected": {"snapshots/r1/model.safetensors": "10"}},
        {"shards": "model.safetensors"},
        {"ref": 5},
        {"hashed": "all"},
    ],
)
def test_a_manifest_of_the_wrong_shape_is_the_nodes_error_not_a_crash(tmp_path, change):
    printing(tmp_path, json.dumps(GOOD | change))
    m, rows = rows_for(tmp_path, hashes=True)
    assert m.error.startswith("no manifest from python3 on here: "), m
    assert rows[0][:3] == ("model.complete", "here", "fail") and m.error in rows[0][3]


@pytest.mark.parametrize("text", ["", "Traceback (most recent call last):\n", "[1, 2]", "null", '"x"'])
def test_no_manifest_at_all_is_the_nodes_error(tmp_path, text):
    printing(tmp_path, text)
    m, rows = rows_for(tmp_path)
    assert m.error.startswith("no manifest from python3 on here: ") and rows[0][2] == "fail", (m, rows)
