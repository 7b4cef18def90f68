"""Rich markup from image metadata: an image's author writes its labels, ENV and package metadata.
In the wizard's image table they were str cells, which DataTable renders as markup: a label
`[@click=app.screenshot(...)]` turned a click into an app action, `[/x]` ended the cockpit."""

import asyncio
import dataclasses

from rich.text import Text

from spark_tui.core.images.image_facts import ImageFacts, from_attrs, merge_probe
from spark_tui.ui.app import SparkApp
from spark_tui.ui.screens.wizard import WizardScreen
from tests.frozen import FrozenCore, cluster_config

CLICK = "[@click=app.screenshot('x.svg','/tmp')]0.12.0[/]"


def test_a_version_label_must_look_like_a_version():
    attrs = {
        "Id": "sha256:" + "a" * 64,
        "Config": {
            "Labels": {"com.nvidia.vllm.version": CLICK},
            "Env": ["VLLM_VERSION=0.10.2+9dd9ca32.nv25.10"],
        },
    }
    facts = from_attrs(attrs)
    # The ill-formed label is passed over (the ENV still tells) and quoted, inert, in a note.
    assert facts.vllm == "0.10.2+9dd9ca32.nv25.10" and facts.vllm_from == "ENV VLLM_VERSION"
    assert any("label com.nvidia.vllm.version is not a version" in n and "@click" in n for n in facts.notes)
    bad = from_attrs({"Id": "x", "Config": {"Env": ["VLLM_VERSION=\x1b]0;t\x07[/x]"]}})
    assert bad.vllm is None and "\x1b" not in " ".join(bad.notes)
    for good in ("0.12.0", "0.11.1rc2.dev18+g1a2b3c", "v2.49.2", "0.10.2+9dd9ca32.nv25.10"):
        assert from_attrs({"Id": "x", "Config": {"Labels": {"com.nvidia.vllm.version": good}}}).vllm == good
    probed = ImageFacts("x")
    merge_probe(probed, 'SPARK_TUI_FACTS {"vllm": "[/x]", "ray": "[link=x]2.49[/link]", "transformers": 4}')
    assert probed.vllm is None and probed.ray_version is None and probed.transformers is None


class HostileImages(FrozenCore):
    """Images whose facts carry markup, as a cache written by an older spark-tui could hold them."""

    async def images(self, run_all=False):
        found = await super().images(run_all)
        for e in found.entries:
            e.facts = dataclasses.replace(e.facts, vllm="[/x]", ray_version="[@click=app.quit]2.49")
            e.row.nodes = {n: "[link=https://evil.example]id[/link]" for n in e.row.nodes}
        return found


def test_the_image_table_shows_image_text_literally_and_keeps_running():
    config, reconfigure = cluster_config(2)
    app = SparkApp(HostileImages(config, reconfigure), live_refresh=False)

    async def flow():
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.press("w")
            await pilot.pause(0.5)
            wizard = app.screen
            assert isinstance(wizard, WizardScreen)
            table = wizard.query_one("#images")
            rows = [table.get_row(key) for key in table.rows]
            await pilot.click("#images", offset=(60, 2))  # on the Ray cell of the first row
            await pilot.pause(0.2)
            return rows, app.is_running, app.return_code

    rows, running, code = asyncio.run(flow())
    assert running and code is None
    assert rows and all(isinstance(cell, Text) for row in rows for cell in row)
    plain = [cell.plain for row in rows for cell in row]
    assert (
        "[/x]" in plain
        and "[@click=app.quit]2.49" in plain
        and "[link=https://evil.example]id[/link]" in plain
    )
