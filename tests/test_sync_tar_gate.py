"""The image receiver's tar walk (core/sync/sync_image_program.py TAR_GATE), run in-process: any
archive that names only the image asked for passes byte for byte, however the stream is cut into
blocks; an archive naming another image, however it hides the name, is refused before the gate
has passed the member that names it (the real engine's side is in test_sync_image_hostile.py)."""

from __future__ import annotations

import io
import json
import tarfile

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from spark_tui.core.sync.sync_image_program import TAR_GATE

GATE: dict = {}
exec(TAR_GATE, GATE)  # noqa: S102 (the program text the node runs, run here as it is)
IMAGE = "nvcr.io/nvidia/vllm:25.09-py3"


def archive(members: list[tuple[str, str, bytes]], fmt: int) -> bytes:
    """A tar of (name, kind f/d/l, data or link target) in `fmt` (PAX, GNU or USTAR)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=fmt) as tar:
        for name, kind, data in members:
            info = tarfile.TarInfo(name)
            if kind == "d":
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif kind == "l":
                info.type, info.linkname = tarfile.SYMTYPE, data.decode()
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def through(stream: bytes, cuts: list[int]) -> tuple[bytes, Exception | None]:
    """Feed `stream` to a gate in blocks cut at `cuts`; what it passed and what it raised."""
    passed = bytearray()
    gate = GATE["Gate"](passed.extend, IMAGE)
    edges = sorted({0, len(stream), *(c % (len(stream) + 1) for c in cuts)})
    try:
        for a, b in zip(edges, edges[1:], strict=False):
            gate.feed(stream[a:b])
    except GATE["Refused"] as exc:
        return bytes(passed), exc
    return bytes(passed), None


def manifest(*tags: str) -> bytes:
    return json.dumps([{"Config": "c.json", "RepoTags": list(tags), "Layers": ["l/layer.tar"]}]).encode()


NAMES = st.lists(
    st.sampled_from(["a", "blobs", "sha256", "x" * 60, "layer.tar", "b.json"]), min_size=1, max_size=4
)
MEMBER = st.one_of(
    st.tuples(NAMES.map("/".join), st.just("f"), st.binary(max_size=1500)),
    st.tuples(NAMES.map("/".join), st.just("d"), st.just(b"")),
    st.tuples(NAMES.map(lambda p: "/".join(p) + "-link"), st.just("l"), st.just(b"../blobs/sha256/abc")),
)
FORMATS = st.sampled_from([tarfile.PAX_FORMAT, tarfile.GNU_FORMAT, tarfile.USTAR_FORMAT])
SETTINGS = settings(
    max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@SETTINGS
@given(st.lists(MEMBER, max_size=8), FORMATS, st.lists(st.integers(0, 1 << 16), max_size=12))
def test_an_archive_naming_only_the_image_asked_for_passes_byte_for_byte(members, fmt, cuts):
    repositories = json.dumps({IMAGE.rsplit(":", 1)[0]: {"25.09-py3": "x"}}).encode()
    notes = {"io.containerd.image.name": IMAGE, "org.opencontainers.image.ref.name": "25.09-py3"}
    index = json.dumps({"schemaVersion": 2, "manifests": [{"annotations": notes}]}).encode()  # Docker >= 25
    named = [
        ("manifest.json", "f", manifest(IMAGE)),
        ("repositories", "f", repositories),
        ("index.json", "f", index),
    ]
    try:  # USTAR splits a long name into prefix and name, where it can
        stream = archive([*members, *named], fmt)
    except ValueError:
        assume(False)
    passed, refused = through(stream, cuts)
    assert refused is None and passed == stream


HIDDEN = [
    "manifest.json",
    "./manifest.json",
    "/manifest.json",
    "a/../manifest.json",
    "a/" * 40 + "../" * 40 + "manifest.json",  # a long name: a PAX path or a GNU long-name member
    "repositories",
    "index.json",
]


@SETTINGS
@given(
    st.sampled_from(HIDDEN),
    st.sampled_from([tarfile.PAX_FORMAT, tarfile.GNU_FORMAT]),
    st.lists(MEMBER, max_size=4),
    st.lists(st.integers(0, 1 << 16), max_size=12),
)
def test_an_archive_naming_another_image_is_refused_before_the_naming_member_passes(name, fmt, before, cuts):
    other = "victim/app:latest"
    data = {
        "repositories": json.dumps({"victim/app": {"latest": "x"}}).encode(),
        "index.json": json.dumps(
            {"manifests": [{"annotations": {"io.containerd.image.name": other}}]}
        ).encode(),
    }.get(name, manifest(IMAGE, other))
    stream = archive([*before, (name, "f", data), ("after", "f", b"z")], fmt)
    passed, refused = through(stream, cuts)
    assert refused is not None and other in str(refused)
    assert data not in passed


@pytest.mark.parametrize(
    "members, why",
    [
        ([("d", "l", b"."), ("d/manifest.json", "f", manifest(IMAGE))], "a member under the link 'd'"),
        ([("manifest.json", "l", b"elsewhere.json")], "manifest.json that is not a plain file"),
        ([("manifest.json", "d", b"")], "manifest.json that is not a plain file"),
        ([("manifest.json", "f", b"[{")], "an unreadable manifest.json"),
    ],
)
def test_names_behind_links_dirs_or_garbage_are_refused(members, why):
    passed, refused = through(archive(members, tarfile.PAX_FORMAT), [])
    assert refused is not None and str(refused).startswith(why)


def test_what_is_not_tar_as_go_reads_it_is_refused():
    good = archive([("a", "f", b"abc")], tarfile.PAX_FORMAT)
    bad_sum = good[:148] + b"0000000\0" + good[156:]
    sparse = good[:156] + b"S" + good[157:]
    fixed = bytearray(sparse)  # a valid checksum, so that the type is what refuses it
    fixed[148:156] = b" " * 8
    fixed[148:156] = b"%06o\0 " % sum(fixed[:512])
    after_end = good + b"x" * 512
    for stream, why in [
        (bad_sum, "a header with a bad checksum"),
        (bytes(fixed), "a sparse member"),
        (after_end, "data after the archive's end"),
        (b"\x1f\x8b" + bytes(1000), "a header with a bad checksum"),  # gzip: docker load would take it
    ]:
        _, refused = through(stream, [])
        assert refused is not None and str(refused) == why, (why, refused)


def test_sizes_past_8_gib_are_read_in_base_256_as_go_writes_them():
    """A layer over 8 GiB does not fit the octal field: Go writes a PAX size, or base-256."""
    number = GATE["number"]
    assert number(b"\x80" + (9 << 30).to_bytes(11, "big")) == 9 << 30
    assert number(b"00000001750\0") == 1000 and number(b"\0" * 12) == 0
    with pytest.raises(GATE["Refused"]):
        number(b"\xff" * 12)  # negative
