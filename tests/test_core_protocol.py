"""The cockpit talks to the core through one protocol (core/cockpit.py CockpitAPI). The snapshot
tests' frozen core must answer the same calls, with the same parameters, as the real one."""

from __future__ import annotations

import inspect

from spark_tui.core.cockpit import CockpitAPI, CockpitCore
from tests.frozen import FrozenCore, cluster_config


def members(cls) -> dict[str, list[str]]:
    out = {}
    for name, value in vars(cls).items():
        if not name.startswith("_") and callable(value):
            out[name] = list(inspect.signature(value).parameters)
    return out


def test_real_and_frozen_cores_answer_every_call_of_the_protocol():
    wanted = members(CockpitAPI)
    assert {"refresh", "check", "launch", "teardown", "follower", "edit"} <= set(wanted)
    for core in (CockpitCore, FrozenCore):
        have = members(core)
        for name, params in wanted.items():
            assert name in have, f"{core.__name__} lacks {name}"
            assert have[name] == params, (
                f"{core.__name__}.{name}{have[name]} differs from the protocol's {params}"
            )


def test_both_cores_hold_the_protocols_attributes():
    config, reconfigure = cluster_config(2)
    properties = {name for name, v in vars(CockpitAPI).items() if isinstance(v, property)}
    attributes = set(CockpitAPI.__annotations__) | properties
    assert attributes == {"config", "redact"}
    for core in (CockpitCore(config), FrozenCore(config, reconfigure)):  # neither connects yet
        assert all(hasattr(core, name) for name in attributes), type(core).__name__
