"""The test image cache keeps what recent runs used and drops what older code built: entries keyed by
the code (engine stores, profile and venv layers) pile up by the hundred on a development machine."""

import os

from tests.cluster import images

HOUR = 3600


def _entry(cache, name, age_hours, now):
    path = cache / name
    (path / "upper").mkdir(parents=True)
    (path / "diff_id").write_text("sha256:0")
    os.utime(path, (now - age_hours * HOUR, now - age_hours * HOUR))
    (cache / f".lock-{name}").touch()
    return path


def test_entries_unused_for_hours_go_and_recent_or_versioned_ones_stay(tmp_path):
    now = 1_800_000_000.0
    stale = [_entry(tmp_path, n, 5, now) for n in ("engine-aaaa", "profile-bbbb", "venv-cccc")]
    recent = _entry(tmp_path, "engine-dddd", 1, now)
    base = _entry(tmp_path, "base-eeee", 50, now)  # keyed by the Debian suite only: rebuilt in minutes, kept
    wheels = _entry(tmp_path, "wheels-ffff", 50, now)

    removed = images.prune(tmp_path, now=now)

    assert removed == stale
    assert not any(p.exists() for p in stale)
    assert not any((tmp_path / f".lock-{p.name}").exists() for p in stale)
    assert recent.exists() and base.exists() and wheels.exists()


def test_a_use_marks_an_entry_so_a_long_run_keeps_it(tmp_path):
    now = 1_800_000_000.0
    entry = _entry(tmp_path, "engine-aaaa", 5, now)
    images.mark_used(entry)  # the clock of the file system: now
    assert images.prune(tmp_path) == []
    assert entry.exists()
