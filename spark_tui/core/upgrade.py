"""`spark-tui upgrade IMAGE`: try a candidate image and keep it only when it serves as well.

The loop ties together operations that exist on their own, in this order:

    known-good  the running deployment (image, configuration) recorded, with a bench run of it
                (a recent one from the results store, else one measured now)
    sync        the candidate copied to every node that lacks it (core/sync/sync.py)
    check       the candidate checked (core/report/check.py) while the known-good still runs: image
                present and the same everywhere, its vLLM knows the model, it supports the
                executor, the model fits (the known-good's own vLLM budget counted as freed)
    teardown    the known-good removed (core/launch/teardown.py)
    launch      the candidate launched (core/launch/launch.py: rolls itself back on failure)
    bench       the candidate benched with the known-good run's parameters (core/bench_run.py)
    verdict     kept when nothing regressed beyond the upgrade.* thresholds; else rolled back

Transactional: until `teardown` nothing the known-good runs is touched, so a refusal there
leaves it serving. From `teardown` on, any failure, a lost node, Ctrl-C (CancelledError or
KeyboardInterrupt) or a regression removes what the candidate started and relaunches the
known-good configuration; the restore itself is shielded from a second Ctrl-C. A candidate is
kept only when, after its bench, every node still runs it (the bench measures the head alone).

A lost node: the restore needs every node (the known-good runs on all its nodes or not at all,
never on fewer: that would be another deployment than the one recorded). It waits up to
`upgrade.restore_wait` for every node to answer; one that stays lost ends the upgrade `failed`
with RestoreFailed's text, and nothing more is removed or relaunched: whatever still serves (the
candidate, when it got that far) keeps serving. Every outcome then says what each node holds and
what serves, as the nodes show it (core/upgrade_nodes.py), never as assumed; the CLI exits 3 when
nothing serves. The outcome (with both bench runs and the nodes' states) goes into the results
database. Every step is an UpgradeStep event; launch, sync and teardown events pass through
unchanged. No Textual here: the CLI and the cockpit both consume these events.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from spark_tui.core import bench_run, upgrade_nodes
from spark_tui.core.bench import loadgen
from spark_tui.core.bench.bench_store import Run, Store, StoreError, Upgrade, add_upgrade, setup_key
from spark_tui.core.launch.drift import drift
from spark_tui.core.launch.events import Failed
from spark_tui.core.launch.launch import Launch
from spark_tui.core.launch.live import with_detected
from spark_tui.core.launch.teardown import teardown
from spark_tui.core.models.memory_fit import fit, utilization, weights
from spark_tui.core.models.model_cache import first_model_config
from spark_tui.core.models.model_files import manifests
from spark_tui.core.node.nodes import Nodes
from spark_tui.core.report.check import CheckResult, run_checks
from spark_tui.core.sync.sync import sync_image
from spark_tui.errors import RestoreFailed, UpgradeRefused
from spark_tui.settings.model import Candidate, Source
from spark_tui.settings.resolve import Config, resolve_layers

Emit = Callable[[object], object]
StepName = Literal["known-good", "sync", "check", "teardown", "launch", "bench", "verdict", "restore"]
StepStatus = Literal["started", "done", "failed", "skipped"]
Verdict = Literal["kept", "rolled back", "refused", "interrupted", "failed"]
SOURCE = "spark-tui upgrade IMAGE"  # where the candidate's image value came from (its provenance)
# The check rows that judge the candidate (its image, the model on its vLLM, the memory it needs)
# and the nodes it needs reachable. Other rows (the container name and ports the known-good holds
# until the teardown, links and caches the known-good runs with) are not the candidate's to pass.
GATES = ("image.", "model.architecture", "memory.fit", "ssh.reachable", "docker.engine")
HELD_BY_KNOWN_GOOD = ("container.absent", "port.vllm_port", "port.master_port")


@dataclass
class UpgradeStep:
    step: StepName
    status: StepStatus
    detail: str = ""
    elapsed: float = 0.0


@dataclass
class UpgradeOutcome:
    verdict: Verdict
    reason: str
    candidate: str
    known_good: str
    before_run: int | None = None
    after_run: int | None = None
    figures: list[str] = field(default_factory=list)  # one line per concurrency level compared
    serving: str = ""  # which image serves now, as its endpoint answers ("" when nothing does)
    record: int | None = None  # the row in the results database's `upgrades` table
    nodes: list[str] = field(default_factory=list)  # what each node holds once the upgrade ended


def candidate_config(config: Config, image: str) -> Config:
    """The known-good configuration with only the image replaced, the new value's source named:
    the layers already read, with the candidate as a flag (no file is read again)."""
    assert config.layers is not None, "a Config built by resolve() knows its layers"
    requests = {**config.layers.requests}
    requests["image"] = [*requests["image"], Candidate(image, Source("flag", SOURCE))]
    interactive = dict(config.interactive)
    if "image" in interactive:  # a wizard edit sits above flags: the candidate replaces it there
        interactive["image"] = image
    return resolve_layers(dataclasses.replace(config.layers, requests=requests), interactive, config.detected)


@dataclass(frozen=True)
class Thresholds:
    decode_drop: float  # percent
    ttft_rise: float  # percent
    errors: int

    @classmethod
    def of(cls, config: Config) -> Thresholds:
        return cls(
            config["upgrade.max_decode_drop"], config["upgrade.max_ttft_rise"], config["upgrade.max_errors"]
        )


def judge(before: Run, after: Run, limits: Thresholds) -> tuple[list[str], list[str]]:
    """(regressions, figure lines): every level of `after` against the same level of `before`.
    Decode tokens/s is one request's output over its decode time (p50), TTFT the p95."""
    regressions: list[str] = []
    lines: list[str] = []
    old = {lv.get("concurrency"): lv for lv in before.levels}
    errors = sum(sum((lv.get("errors") or {}).values()) for lv in after.levels)
    for lv in after.levels:
        c = lv.get("concurrency")
        was = old.get(c)
        if was is None:
            continue
        parts = []
        a, b = _num(lv.get("request_tps_p50")), _num(was.get("request_tps_p50"))
        if a is not None and b:
            change = (a - b) / b * 100
            parts.append(f"decode {b:.1f} -> {a:.1f} tok/s ({change:+.1f}%)")
            if change < -limits.decode_drop:
                regressions.append(
                    f"c={c}: decode {b:.1f} -> {a:.1f} tok/s ({change:+.1f}%, limit -{limits.decode_drop:g}%)"
                )
        elif b:
            regressions.append(f"c={c}: no decode rate measured (known-good {b:.1f} tok/s)")
        a, b = _num(lv.get("ttft_p95")), _num(was.get("ttft_p95"))
        if a is not None and b:
            change = (a - b) / b * 100
            parts.append(f"TTFT p95 {b * 1000:.0f} -> {a * 1000:.0f} ms ({change:+.1f}%)")
            if change > limits.ttft_rise:
                regressions.append(
                    f"c={c}: TTFT p95 {b * 1000:.0f} -> {a * 1000:.0f} ms ({change:+.1f}%, "
                    f"limit +{limits.ttft_rise:g}%)"
                )
        errs = sum((lv.get("errors") or {}).values())
        parts.append(f"errors {sum((was.get('errors') or {}).values())} -> {errs}")
        lines.append(f"c={c}: " + ", ".join(parts))
    if errors > limits.errors:
        kinds: dict[str, int] = {}
        for lv in after.levels:
            for kind, n in (lv.get("errors") or {}).items():
                kinds[kind] = kinds.get(kind, 0) + n
        said = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
        regressions.append(f"{errors} failed request(s) ({said}; limit {limits.errors})")
    return regressions, lines


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class UpgradeRun:
    """One upgrade. `params`: the bench load (the known-good run's and the candidate's)."""

    def __init__(
        self,
        config: Config,
        nodes: Nodes,
        emit: Emit,
        candidate: str,
        store: Store,
        params: loadgen.Params,
    ):
        self.known_good, self.nodes = config, nodes
        self.ledger = upgrade_nodes.Ledger()  # what this upgrade last did on each node

        self.failed = ""  # the last failure a sync, teardown or launch named (its cause, shown)

        def seen_then(event: object) -> None:
            self.ledger.see(event)
            if isinstance(event, Failed):
                self.failed = event.cause
            emit(event)

        self.emit: Emit = seen_then
        self.candidate_image = candidate
        self.store, self.params = store, params
        self.t0 = time.monotonic()
        self.torn_down = False  # the known-good was removed: from here on, a failure restores it
        self.before: Run | None = None
        self.after: Run | None = None

    def step(self, step: StepName, status: StepStatus, detail: str = "") -> None:
        self.emit(UpgradeStep(step, status, detail, time.monotonic() - self.t0))

    async def run(self) -> UpgradeOutcome:
        try:
            outcome = await self._verified(self._run())
        except (asyncio.CancelledError, KeyboardInterrupt):
            outcome = await self._shielded(self._verified(self._interrupted()))
            self._finish(outcome)
            raise
        except StoreError as exc:  # the results database went bad mid-way: still restore
            outcome = await self._shielded(self._verified(self._roll_back("failed", str(exc), [])))
        except Exception as exc:  # a bug of ours or an answer nobody foresaw: still restore
            cause = f"internal error ({type(exc).__name__}: {str(exc)[:200]})"
            outcome = await self._shielded(self._verified(self._roll_back("failed", cause, [])))
        self._finish(outcome)
        return outcome

    async def _verified(self, work) -> UpgradeOutcome:
        """The outcome with what each node holds and what serves, as the nodes answer now: the
        verdict never claims an image serves that does not."""
        outcome: UpgradeOutcome = await work
        claimed = outcome.serving
        try:
            outcome.nodes = await upgrade_nodes.states(self.known_good, self.nodes, self.ledger)
            outcome.serving = await upgrade_nodes.serving_image(self.known_good, self.nodes)
        except Exception as exc:  # asking the nodes failed as nothing foresaw: said, never assumed
            outcome.nodes.append(f"the nodes could not be asked: {type(exc).__name__}: {str(exc)[:160]}")
            outcome.serving = ""
        if claimed and outcome.serving != claimed:  # it served a moment ago; the nodes' word wins
            outcome.reason += f"; asked again at the end, {outcome.serving or 'nothing'} serves"
        return outcome

    async def _shielded(self, work) -> UpgradeOutcome:
        """Run a restore to its end even when Ctrl-C comes again: never nothing running."""
        task = asyncio.ensure_future(work)
        while True:
            try:
                return await asyncio.shield(task)
            except asyncio.CancelledError:
                if task.done():
                    raise
                self.step(
                    "restore", "started", "interrupted again: restoring the known-good deployment first"
                )

    def _finish(self, outcome: UpgradeOutcome) -> None:
        record = Upgrade(
            0,
            time.time(),
            outcome.verdict,
            outcome.candidate,
            outcome.known_good,
            outcome.reason,
            outcome.before_run,
            outcome.after_run,
            {"figures": outcome.figures, "serving": outcome.serving, "nodes": outcome.nodes},
        )
        try:
            outcome.record = add_upgrade(self.store, record).id
        except StoreError as exc:
            self.step("verdict", "failed", f"not recorded: {exc}")
        self.emit(outcome)

    def _outcome(self, verdict: Verdict, reason: str, figures: list[str], serving: str) -> UpgradeOutcome:
        return UpgradeOutcome(
            verdict,
            reason,
            self.candidate_image,
            self.known_good["image"],
            self.before.id if self.before else None,
            self.after.id if self.after else None,
            figures,
            serving,
        )

    async def _run(self) -> UpgradeOutcome:
        good = self.known_good["image"]
        if self.candidate_image == good:
            return self._outcome(
                "refused", f"{good} is the running image already: nothing to upgrade", [], good
            )
        try:
            await self._record_known_good()
            candidate = candidate_config(self.known_good, self.candidate_image)
            await self._sync(candidate)
            await self._check(candidate)
        except UpgradeRefused as exc:
            return self._outcome("refused", str(exc), [], good)
        self.step("teardown", "started", f"{good} on {len(self.known_good.nodes)} node(s)")
        self.torn_down = True
        if not await teardown(self.known_good, self.nodes, self.emit):
            return await self._roll_back("refused", "the known-good deployment could not be torn down", [])
        self.step("teardown", "done", f"{good} removed")
        self.step("launch", "started", self.candidate_image)
        self.failed = ""
        if not await Launch(candidate, self.nodes, self.emit).run():
            return await self._roll_back(
                "refused", f"{self.candidate_image} failed to launch: {self.failed or 'cause unknown'}", []
            )
        self.step("launch", "done", self.candidate_image)
        try:
            self.after = await self._bench(candidate, "upgrade: candidate")
        except bench_run.BenchError as exc:
            return await self._roll_back("rolled back", f"the candidate could not be benched: {exc}", [])
        assert self.before is not None
        regressions, figures = judge(self.before, self.after, Thresholds.of(self.known_good))
        gone = await upgrade_nodes.not_running(candidate, self.nodes)
        if gone:  # served the bench from the head, but the deployment measured is not whole
            return await self._roll_back(
                "rolled back",
                f"{self.candidate_image} cannot be kept: after its bench not every node runs it "
                f"({'; '.join(gone)})",
                figures,
            )
        if regressions:
            return await self._roll_back(
                "rolled back",
                f"{self.candidate_image} regressed against {good}: " + "; ".join(regressions),
                figures,
            )
        self.step("verdict", "done", f"kept {self.candidate_image}")
        return self._outcome(
            "kept",
            f"{self.candidate_image} served as well as {good} (thresholds upgrade.*); make it the "
            f"configuration's image (`image: {self.candidate_image}` in the cluster file, or --image) "
            "or `status` reports it as drift",
            figures,
            self.candidate_image,
        )

    async def _record_known_good(self) -> None:
        """The running deployment is the configuration (no drift), and it has a recent bench run."""
        self.step("known-good", "started", self.known_good["image"])
        config, _ = await with_detected(self.known_good, self.nodes)
        self.known_good = config
        items = await drift(config, self.nodes, live=True)
        if items:
            said = "; ".join(
                f"{d.node} {d.what}: {d.requested} vs running {d.actual}"[:160] for d in items[:3]
            )
            raise UpgradeRefused(
                "the running deployment is not this configuration (drift: "
                f"{said}): upgrade rolls back to a configuration it knows, so it starts from one that runs"
            )
        prov = await bench_run.provenance(config, self.nodes)
        if not prov["serving"]:
            raise UpgradeRefused(
                "nothing serves the model: upgrade needs a running deployment to fall back to"
            )
        since = time.time() - config["upgrade.bench_recent"]
        recent = self.store.latest(setup_key(prov), _load_key(self.params), since)
        if recent is not None:
            self.before = recent
            self.step("known-good", "done", f"{config['image']}, bench run {recent.id} (recent)")
            return
        try:
            self.before = await self._bench(config, "upgrade: known-good")
        except bench_run.BenchError as exc:
            raise UpgradeRefused(f"the known-good deployment could not be benched: {exc}") from None
        self.step("known-good", "done", f"{config['image']}, bench run {self.before.id}")

    async def _bench(self, config: Config, origin: str) -> Run:
        self.step(
            "bench",
            "started",
            f"{config['image']}: concurrency {','.join(map(str, self.params.concurrency))}",
        )
        prov, levels = await bench_run.measure(config, self.nodes, self.params)
        run = bench_run.record(self.store, prov, self.params, levels, origin).run
        best = max((lv.output_tps for lv in levels), default=0.0)
        self.step("bench", "done", f"{config['image']}: run {run.id}, best {best:.1f} output tok/s")
        return run

    async def _sync(self, candidate: Config) -> None:
        self.step("sync", "started", self.candidate_image)
        self.failed = ""
        if not await sync_image(candidate, self.nodes, self.emit):
            raise UpgradeRefused(
                f"{self.candidate_image} could not be copied to every node: {self.failed or 'cause unknown'}"
            )
        self.step("sync", "done", f"{self.candidate_image} on every node")

    async def _check(self, candidate: Config) -> None:
        """The candidate's check, while the known-good runs. Its container, ports and memory are
        the known-good's until the teardown: those rows are not the candidate's fault, and
        memory.fit counts the known-good's vLLM budget as freed (said so in the row)."""
        self.step("check", "started", self.candidate_image)
        results = await run_checks(candidate, self.nodes)
        results = [r for r in results if r.id != "memory.fit"] + await self._memory_fit(candidate)
        failed = [r for r in results if r.status == "fail" and r.id.startswith(GATES)]
        others = sorted(
            {
                r.id
                for r in results
                if r.status == "fail" and not r.id.startswith(GATES) and r.id not in HELD_BY_KNOWN_GOOD
            }
        )
        if failed:
            for r in failed:
                self.step("check", "failed", f"{r.node} {r.id}: {r.message}")
            first = failed[0]
            raise UpgradeRefused(
                f"{self.candidate_image} failed its check: {first.node} {first.id}: {first.message}"
                + (f" ({len(failed) - 1} more)" if len(failed) > 1 else "")
            )
        self.step(
            "check",
            "done",
            f"{self.candidate_image}: image, executor, model architecture and memory fit pass"
            + (
                f" (also failing, not the candidate's: {', '.join(others)}; see spark-tui check)"
                if others
                else ""
            ),
        )

    async def _memory_fit(self, candidate: Config) -> list[CheckResult]:
        config, snaps = await with_detected(candidate, self.nodes)
        util, _ = utilization(self.known_good)
        rows: list[CheckResult] = []

        def add(id_, node, status, message, fix="", values=None) -> None:
            rows.append(CheckResult(id_, node, status, message, fix, values or {}))

        reachable = [s.node for s in snaps if s.reachable]
        model = config["model"]
        found = (
            await manifests(config, self.nodes, reachable)
            if model and not model.startswith(("/", "."))
            else {}
        )
        usable = [n for n in config.nodes if n.name in reachable]
        mc = await first_model_config(self.nodes, usable, model)
        w = weights(found, mc)
        for snap in snaps:
            mem = snap.host.memory
            if mem is not None:
                freed = util * mem.total_mib
                mem = dataclasses.replace(mem, available_mib=min(mem.total_mib, mem.available_mib + freed))
                snap = dataclasses.replace(snap, host=dataclasses.replace(snap.host, memory=mem))
            before = len(rows)
            fit(config, snap, w, mc.reason or "no shards in any node's cache", add)
            for r in rows[before:]:
                r.message = (
                    f"with the known-good's vLLM budget ({util:g} of memory) counted as freed: {r.message}"
                )
        return rows

    async def _roll_back(self, verdict: Verdict, reason: str, figures: list[str]) -> UpgradeOutcome:
        """Remove what the candidate started and relaunch the known-good configuration."""
        good = self.known_good["image"]
        if not self.torn_down:
            return self._outcome(verdict, reason, figures, good)
        self.step("verdict", "failed", reason)
        try:
            await self._restore()
        except RestoreFailed as exc:
            self.step("restore", "failed", str(exc))
            return self._outcome("failed", f"{reason}; and the restore failed: {exc}", figures, "")
        return self._outcome(verdict, f"{reason}; {good} relaunched and serving", figures, good)

    async def _restore(self) -> None:
        """Every node answering first (waiting for a lost one up to upgrade.restore_wait), then
        the candidate removed and the known-good launched; RestoreFailed says which node and why."""
        good, count = self.known_good["image"], len(self.known_good.nodes)
        wait = self.known_good["upgrade.restore_wait"]
        self.step("restore", "started", f"remove the candidate, relaunch {good}")
        missing = await upgrade_nodes.wait_for(
            self.known_good, self.nodes, wait, lambda text: self.step("restore", "started", text)
        )
        if missing:
            names = ", ".join(missing)
            raise RestoreFailed(
                "; ".join(f"{n} unreachable ({w})" for n, w in missing.items())
                + f" after {wait:g} s (upgrade.restore_wait): {good} runs on all {count} node(s) or not "
                f"at all, so nothing more was removed or relaunched; once {names} answer(s) again, "
                f"`spark-tui down` then `spark-tui up` brings {good} back"
            )
        await teardown(self.known_good, self.nodes, self.emit)  # the name and labels are the same
        self.failed = ""
        if not await Launch(self.known_good, self.nodes, self.emit).run():
            raise RestoreFailed(f"{good} did not launch again: {self.failed or 'cause unknown'}")
        self.step("restore", "done", f"{good} serving")

    async def _interrupted(self) -> UpgradeOutcome:
        good = self.known_good["image"]
        if not self.torn_down:
            return self._outcome(
                "interrupted", f"interrupted before the teardown: {good} still serving", [], good
            )
        return await self._roll_back("interrupted", "interrupted", [])


VERDICT_WORD = {
    "kept": "KEPT",
    "rolled back": "ROLLED BACK",
    "refused": "REFUSED",
    "interrupted": "INTERRUPTED",
    "failed": "FAILED",
}


def event_text(event: object, show: Callable[[str], str]) -> str | None:
    """How an upgrade event reads (the CLI prints it, the cockpit's upgrade screen shows it);
    `show` masks secrets and makes node text inert. None for events that are not the upgrade's."""
    if isinstance(event, UpgradeStep):
        return f"[{event.elapsed:6.1f}s] upgrade    {event.step:<10} {event.status} {show(event.detail)}"
    if isinstance(event, UpgradeOutcome):
        lines = [f"{VERDICT_WORD[event.verdict]}: {show(event.reason)}"]
        lines += [f"    {show(line)}" for line in event.figures]
        runs = f"bench runs: known-good {event.before_run or '-'}, candidate {event.after_run or '-'}"
        lines.append(
            f"    {runs}; serving: {show(event.serving) or 'NOTHING'}"
            + (f"; recorded as upgrade {event.record}" if event.record else "")
        )
        lines += [f"    node {show(line)}" for line in event.nodes]
        return "\n".join(lines)
    return None


def default_params(config: Config) -> loadgen.Params:
    """The bench load of `spark-tui upgrade` without flags (the cockpit's upgrade uses it too)."""
    return bench_run.params_for(
        config, concurrency=(1, 4), prompt_tokens=256, output_tokens=128, duration=10.0
    )


def _load_key(params: loadgen.Params) -> str:
    from spark_tui.core.bench.bench_store import key_of

    return key_of(params.key())
