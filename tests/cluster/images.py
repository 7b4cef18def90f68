"""Test images built from real parts: a Debian root filesystem (debootstrap), a venv with Ray from
PyPI, and the stand-in vLLM and transformers as Python packages installed by pip into that venv.

An image is four layers, each cached on disk and rebuilt only when its recipe changes (the cache
key is a hash of the recipe, so a changed recipe simply builds under a new key):

    base     debootstrap --variant=minbase bookworm with python3 (about a minute, once)
    venv     /opt/venv with `pip install ray==X` (or no Ray): seconds
    profile  the stand-in vllm/transformers wheels pip-installed, the NGC entrypoint script, the
             failure logs; a few hundred kB
    variant  optional: /etc/variant (another image under the same tag), or random bytes (bench)

Each layer is an overlay upper directory over the ones below, so it holds exactly what its step
changed (whiteouts included). Images go into a node's Docker engine with `docker load` of an
archive written here (docker-archive format); a node that already holds the lower layers is sent
only the top ones, so a variant costs a few kB, not the whole 400 MB.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import io
import json
import os
import shutil
import stat
import struct
import subprocess
import tarfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
STANDIN = HERE / "standin"
FAILURES = HERE.parent / "data" / "failures"
CACHE = Path(os.environ.get("SPARK_TEST_IMAGE_CACHE") or "/var/cache/spark-tui-test")

SUITE = "bookworm"
# python3-venv for the venv real vLLM images run from; iproute2 and procps as images have them.
PACKAGES = ("python3", "python3-venv", "ca-certificates", "iproute2", "procps")
VENV = "/opt/venv"
PATH = f"{VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
RECIPE_VERSION = "1"  # bump when the way a layer is made changes


class ImageError(RuntimeError):
    pass


@dataclass(frozen=True)
class Layer:
    tar: Path
    diff_id: str  # "sha256:<hex>" of the uncompressed tar


def _key(*parts: object) -> str:
    return hashlib.sha256(json.dumps([RECIPE_VERSION, *map(str, parts)]).encode()).hexdigest()[:16]


@contextlib.contextmanager
def locked(entry: str = "") -> Iterator[None]:
    """One builder of a cache entry at a time on this machine (several test clusters share the
    cache); entries of different names build side by side."""
    with locked_in(CACHE, entry):
        yield


@contextlib.contextmanager
def locked_in(cache: Path, entry: str = "") -> Iterator[None]:
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / (f".lock-{entry}" if entry else ".lock"), "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def _run(argv: list[str], what: str, **kw) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        raise ImageError(f"{what}: {' '.join(argv[:4])}... exit {proc.returncode}:\n{tail}")


# --- the Debian mirror, from this machine's apt configuration ---------------------------------


def apt_mirror() -> str:
    """The first Debian archive this machine's apt uses for the suite (never a hard-coded host)."""
    sources = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for path in sources:
        try:
            text = path.read_text()
        except OSError:
            continue
        if path.suffix == ".sources":
            for stanza in text.split("\n\n"):
                fields = {}
                for line in stanza.splitlines():
                    key, sep, value = line.partition(":")
                    if sep and not line.startswith("#"):
                        fields[key.strip().lower()] = value.strip()
                if SUITE in fields.get("suites", "").split() and "deb" in fields.get("types", "").split():
                    return fields.get("uris", "").split()[0]
        elif path.name == "sources.list" or path.suffix == ".list":
            for line in text.splitlines():
                words = [w for w in line.split() if not w.startswith("[")]
                if len(words) >= 3 and words[0] == "deb" and words[2] == SUITE:
                    return words[1]
    raise ImageError(f"no `deb ... {SUITE}` source in /etc/apt: cannot debootstrap the test image's Debian")


# --- layers -------------------------------------------------------------------------------------


def _layer_tar(upper: Path, out: Path) -> Layer:
    """A docker layer tar of an overlay upper directory: overlay whiteouts (0/0 character devices,
    opaque directories) become docker's `.wh.` entries."""
    digest = hashlib.sha256()

    class Hashing(io.RawIOBase):
        def __init__(self, fh):
            self.fh = fh

        def writable(self):
            return True

        def write(self, b):
            digest.update(b)
            return self.fh.write(b)

    with (
        open(out, "wb") as raw,
        tarfile.open(fileobj=Hashing(raw), mode="w|", format=tarfile.PAX_FORMAT) as tar,
    ):  # type: ignore[arg-type]
        for dirpath, dirnames, filenames in os.walk(upper):
            dirnames.sort()
            rel_dir = os.path.relpath(dirpath, upper)
            for name in sorted(dirnames) + sorted(filenames):
                full = os.path.join(dirpath, name)
                arc = os.path.normpath(os.path.join(rel_dir, name))
                st = os.lstat(full)
                if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:
                    info = tarfile.TarInfo(os.path.join(os.path.dirname(arc), ".wh." + name))
                    info.mtime = int(st.st_mtime)
                    tar.addfile(info)
                    continue
                info = tar.gettarinfo(full, arc)
                info.uname = info.gname = ""
                if info.isreg():
                    with open(full, "rb") as fh:
                        tar.addfile(info, fh)
                else:
                    tar.addfile(info)
                if stat.S_ISDIR(st.st_mode):
                    try:
                        opaque = os.getxattr(full, "trusted.overlay.opaque")
                    except OSError:
                        opaque = b""
                    if opaque == b"y":
                        tar.addfile(tarfile.TarInfo(os.path.join(arc, ".wh..wh..opq")))
    return Layer(out, "sha256:" + digest.hexdigest())


def _cached(name: str, key: str, build) -> tuple[Path, Layer]:
    """The cache entry `name-key` (built by `build(dir)` into a fresh directory when missing),
    marked as used now (see prune)."""
    done = CACHE / f"{name}-{key}"
    if not (done / "diff_id").exists():
        with locked(f"{name}-{key}"):
            if not (done / "diff_id").exists():
                work = CACHE / f"{name}-{key}.building"
                _remove(work)
                work.mkdir(parents=True)
                layer = build(work)
                (work / "diff_id").write_text(layer.diff_id)
                _remove(done)
                work.rename(done)
    mark_used(done)
    return done, Layer(done / "layer.tar", (done / "diff_id").read_text().strip())


# Entries keyed by the code they were made from: every change of the stand-ins or the image recipe
# keys new ones (about 430 MB an engine store, 10 MB a profile), and a development machine kept
# 38 GB of them in a day, enough to fail the suite's own `disk.free` check. The base layer and the
# wheels are keyed by versions only and stay.
PRUNED = ("engine", "profile", "venv")
IDLE_LIMIT = 3 * 3600  # seconds: longer than any test run, whose clusters mark what they use


def mark_used(entry: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.utime(entry)


def prune(cache: Path = CACHE, now: float | None = None) -> list[Path]:
    """Remove the entries of PRUNED kinds (and their lock files) unused for IDLE_LIMIT; a run
    using an entry marks it (mark_used), so only what no run has touched for hours goes. Takes
    the cache's lock: no entry is removed while a builder holds it."""
    now = time.time() if now is None else now
    removed = []
    with locked_in(cache):
        for entry in sorted(cache.iterdir()):
            kind = entry.name.split("-", 1)[0]
            if kind in PRUNED and entry.is_dir() and now - entry.stat().st_mtime > IDLE_LIMIT:
                _remove(entry)
                (cache / f".lock-{entry.name}").unlink(missing_ok=True)
                removed.append(entry)
    return removed


def _remove(path: Path) -> None:
    if path.exists():
        for line in reversed(Path("/proc/mounts").read_text().splitlines()):
            if line.split()[1].startswith(str(path)):
                subprocess.run(["umount", "-l", line.split()[1]], check=False)
        shutil.rmtree(path, ignore_errors=True)


def base_layer() -> tuple[Path, Layer]:
    key = _key("base", SUITE, PACKAGES)

    def build(work: Path) -> Layer:
        rootfs = work / "upper"
        log = work.parent / f"debootstrap-{key}.log"
        argv = ["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, str(rootfs)]
        with open(log, "w") as fh:
            proc = subprocess.run([*argv, apt_mirror()], stdout=fh, stderr=subprocess.STDOUT)
        if proc.returncode != 0:
            raise ImageError(f"debootstrap failed (exit {proc.returncode}); see {log}")
        # An image holds no package cache and no docs (as slim images do): smaller, same programs.
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man"):
            for entry in (rootfs / junk).glob("*"):
                if entry.is_dir() and not entry.is_symlink():
                    if junk.startswith("usr"):
                        shutil.rmtree(entry)
                elif entry.name != "lock":
                    entry.unlink()
        return _layer_tar(rootfs, work / "layer.tar")

    return _cached("base", key, build)


@contextlib.contextmanager
def _overlay(lowers: list[Path], work: Path) -> Iterator[Path]:
    """An overlay mount of `lowers` (top first) with work/upper as the upper directory."""
    upper, scratch, merged = work / "upper", work / "ovl-work", work / "merged"
    for d in (upper, scratch, merged):
        d.mkdir(parents=True, exist_ok=True)
    opts = f"lowerdir={':'.join(str(p) for p in lowers)},upperdir={upper},workdir={scratch}"
    _run(["mount", "-t", "overlay", "overlay", "-o", opts, str(merged)], "overlay mount")
    try:
        yield merged
    finally:
        subprocess.run(["umount", str(merged)], check=False)
        shutil.rmtree(scratch, ignore_errors=True)
        merged.rmdir()


def _chroot(root: Path, *argv: str, what: str) -> None:
    """Run in the image's root filesystem, with a clean environment (this machine's pip settings
    must not leak into the image's pip: it installs from local wheels only)."""
    env = {"PATH": PATH, "HOME": "/root", "LANG": "C.UTF-8", "PIP_NO_CACHE_DIR": "1"}
    _run(["chroot", str(root), *argv], what, env=env)


def wheels(spec: str) -> Path:
    """Wheels for `spec` and its dependencies, fetched by this machine's pip (its own index
    configuration) for the image's CPython 3.11 on this architecture; kept in the cache, so a
    changed venv recipe needs no network."""
    dest = CACHE / f"wheels-{_key('wheels', spec)}"
    if not (dest / ".done").exists():
        with locked(dest.name):
            if not (dest / ".done").exists():
                _remove(dest)
                work = dest.with_name(dest.name + ".fetching")
                _remove(work)
                argv = [
                    "python3",
                    "-m",
                    "pip",
                    "download",
                    "-q",
                    "--only-binary=:all:",
                    "--python-version",
                    "3.11",
                ]
                _run([*argv, "-d", str(work), spec], f"pip download {spec}")
                (work / ".done").touch()
                work.rename(dest)
    return dest


def build_all(rays: set[str | None]) -> None:
    """The base, then every venv side by side (they are independent of each other: a cold build
    makes the two Ray versions' venvs in the time of one). Ray's wheels are not fetched while
    debootstrap runs: measured, both downloads then slowed each other more than they overlapped."""
    from concurrent.futures import ThreadPoolExecutor

    base_layer()
    with ThreadPoolExecutor(len(rays)) as pool:
        list(pool.map(venv_layer, rays))


def venv_layer(ray: str | None) -> tuple[Path, Layer]:
    """/opt/venv made by the image's own python3; with `pip install ray==<ray>` when given."""
    base_dir, base = base_layer()
    key = _key("venv", base.diff_id, ray)

    def build(work: Path) -> Layer:
        with _overlay([base_dir / "upper"], work) as root:
            _chroot(root, "python3", "-m", "venv", VENV, what="python3 -m venv")
            if ray:
                shutil.copytree(
                    wheels(f"ray=={ray}"), root / "tmp" / "wheels", ignore=shutil.ignore_patterns(".done")
                )
                _chroot(
                    root,
                    f"{VENV}/bin/pip",
                    "install",
                    "-q",
                    "--no-index",
                    "--find-links",
                    "/tmp/wheels",
                    f"ray=={ray}",
                    what=f"pip install ray=={ray}",
                )
                shutil.rmtree(root / "tmp" / "wheels")
        _drop_tmp_leftovers(work / "upper")
        return _layer_tar(work / "upper", work / "layer.tar")

    return _cached("venv", key, build)


def _drop_tmp_leftovers(upper: Path) -> None:
    for d in ("tmp", "root/.cache"):
        if (upper / d).is_dir():
            for entry in (upper / d).iterdir():
                shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()


# --- the stand-in packages, as wheels ------------------------------------------------------------


def _wheel(out_dir: Path, name: str, version: str, files: dict[str, bytes], scripts: dict[str, str]) -> Path:
    """A pure-Python wheel (PEP 427) holding `files`, with console scripts: what pip installs."""
    dist = f"{name}-{version}.dist-info"
    meta = {
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        "Summary: spark-tui test stand-in (tests/cluster/standin)\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: spark-tui-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    if scripts:
        meta[f"{dist}/entry_points.txt"] = (
            "[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in scripts.items())
        ).encode()
    everything = {**files, **meta}
    record = ""
    for arc, data in everything.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record += f"{arc},sha256={digest},{len(data)}\n"
    record += f"{dist}/RECORD,,\n"
    path = out_dir / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for arc, data in {**everything, f"{dist}/RECORD": record.encode()}.items():
            zf.writestr(zipfile.ZipInfo(arc, (2020, 1, 1, 0, 0, 0)), data)
    return path


def _package_files(top: str) -> dict[str, bytes]:
    root = STANDIN / top
    if root.is_file():
        return {top: root.read_bytes()}
    return {
        str(p.relative_to(STANDIN)): p.read_bytes()
        for p in sorted(root.rglob("*.py"))
        if "__pycache__" not in p.parts
    }


def standin_wheels(out_dir: Path, vllm: str, archs: tuple[str, ...], transformers: str) -> list[Path]:
    profile = f"VERSION = {vllm!r}\nARCHS = {list(archs)!r}\n".encode()
    vllm_files = {
        **_package_files("vllm"),
        "vllm/_standin_profile.py": profile,
        **_package_files("vllm_http.py"),
    }
    return [
        _wheel(out_dir, "vllm", vllm, vllm_files, {"vllm": "vllm.entrypoints.cli.main:main"}),
        _wheel(out_dir, "transformers", transformers, _package_files("transformers"), {}),
    ]


def _sources_hash() -> str:
    h = hashlib.sha256()
    files = (
        sorted(STANDIN.rglob("*.py"))
        + sorted(FAILURES.glob("*.log"))
        + [HERE / "image" / "nvidia_entrypoint.sh"]
    )
    for p in files:
        if "__pycache__" not in p.parts:
            h.update(str(p.relative_to(HERE.parent)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def profile_layer(vllm: str, ray: str | None, python: bool, archs: tuple[str, ...], transformers: str):
    """The stand-in vLLM and transformers installed by the image's pip, the NGC entrypoint
    script and the failure logs; without python3 on PATH for an image that has none."""
    base_dir, _ = base_layer()
    venv_dir, venv = venv_layer(ray)
    key = _key("profile", venv.diff_id, vllm, python, archs, transformers, _sources_hash())

    def build(work: Path) -> Layer:
        with _overlay([venv_dir / "upper", base_dir / "upper"], work) as root:
            wheels = root / "tmp" / "standin"
            wheels.mkdir(parents=True)
            names = [w.name for w in standin_wheels(wheels, vllm, archs, transformers)]
            _chroot(
                root,
                f"{VENV}/bin/pip",
                "install",
                "-q",
                "--no-index",
                "--no-deps",
                *(f"/tmp/standin/{n}" for n in names),
                what="pip install the stand-in vllm",
            )
            shutil.rmtree(wheels)
            (root / "opt" / "nvidia").mkdir(parents=True, exist_ok=True)
            shutil.copy(
                HERE / "image" / "nvidia_entrypoint.sh", root / "opt" / "nvidia" / "nvidia_entrypoint.sh"
            )
            logs = root / "usr" / "share" / "spark-test" / "failures"
            logs.mkdir(parents=True)
            for log in sorted(FAILURES.glob("*.log")):
                shutil.copy(log, logs / log.name)
            if not python:
                _strip_python3(root)
        _drop_tmp_leftovers(work / "upper")
        return _layer_tar(work / "upper", work / "layer.tar")

    return _cached("profile", key, build)


def _strip_python3(root: Path) -> None:
    """A slimmed runtime: no `python3` anywhere on PATH. The programs keep their interpreter
    (python3.11), as a frozen or embedded runtime would; only the name python3 is gone."""
    venv_bin = root / VENV.lstrip("/") / "bin"
    for script in venv_bin.iterdir():
        if script.is_file() and not script.is_symlink():
            data = script.read_bytes()
            if data.startswith(f"#!{VENV}/bin/python".encode()):
                first, _, rest = data.partition(b"\n")
                script.write_bytes(f"#!{VENV}/bin/python3.11\n".encode() + rest)
    for link in ("python3", "python"):
        (venv_bin / link).unlink()
    (venv_bin / "python3.11").unlink()
    (venv_bin / "python3.11").symlink_to("/usr/bin/python3.11")
    (root / "usr" / "bin" / "python3").unlink()


def variant_layer(root: Path, variant: str) -> Layer:
    """Another image under the same tag (`/etc/variant`); `big-N`: N MB of random bytes too."""
    out = root / f"variant-{variant}.tar"
    sha = root / f"variant-{variant}.diff_id"
    if not sha.exists():
        upper = root / f"variant-{variant}"
        (upper / "etc").mkdir(parents=True, exist_ok=True)
        (upper / "etc" / "variant").write_text(variant + "\n")
        if variant.startswith("big-"):  # incompressible, for benchmarks
            (upper / "opt").mkdir(exist_ok=True)
            with open(upper / "opt" / "weights.bin", "wb") as f:
                for _ in range(int(variant.split("-")[1])):
                    f.write(os.urandom(1 << 20))
        layer = _layer_tar(upper, out)
        shutil.rmtree(upper)
        sha.write_text(layer.diff_id)
    return Layer(out, sha.read_text().strip())


# A program for another CPU: the smallest real aarch64 Linux executable (ELF64, EM_AARCH64, one
# PT_LOAD segment whose code is `mov x0, #0; mov x8, #93 (exit); svc #0`). An x86_64 kernel's
# execve refuses it with ENOEXEC, which runc reports as "exec format error": what an amd64 image's
# programs get on the arm64 Spark, the other way round.
ARCH_OTHER = {"x86_64": ("arm64", 183), "aarch64": ("amd64", 62)}  # host machine -> (image arch, e_machine)


def foreign_elf(e_machine: int) -> bytes:
    base, code = 0x400000, bytes.fromhex("000080d2a80b80d2010000d4")  # aarch64 exit(0), little endian
    entry_off = 64 + 56
    size = entry_off + len(code)
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    header = ident + struct.pack(
        "<HHIQQQIHHHHHH", 2, e_machine, 1, base + entry_off, 64, 0, 0, 64, 56, 1, 64, 0, 0
    )
    phdr = struct.pack("<IIQQQQQQ", 1, 5, 0, base, base, size, size, 0x1000)
    return header + phdr + code


def foreign_arch_layer(root: Path, programs: tuple[str, ...]) -> tuple[Layer, str]:
    """A top layer whose `programs` (paths in the image) are executables of another CPU, and the
    image architecture they are for (`Architecture` in `docker image inspect`)."""
    arch, e_machine = ARCH_OTHER.get(os.uname().machine, ("arm64", 183))
    out = root / f"foreign-{arch}.tar"
    upper = root / f"foreign-{arch}"
    for program in programs:
        path = upper / program.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(foreign_elf(e_machine))
        path.chmod(0o755)
    layer = _layer_tar(upper, out)
    shutil.rmtree(upper)
    return layer, arch


# --- the image archive ---------------------------------------------------------------------------


def image_config(
    layers: list[Layer], entrypoint: list[str], env: dict[str, str], labels: dict[str, str]
) -> bytes:
    created = "2025-11-20T00:00:00Z"
    config = {
        "architecture": {"x86_64": "amd64", "aarch64": "arm64"}.get(os.uname().machine, os.uname().machine),
        "os": "linux",
        "created": created,
        "config": {
            "Env": [f"{k}={v}" for k, v in {"PATH": PATH, "VIRTUAL_ENV": VENV, **env}.items()],
            "Entrypoint": entrypoint or None,
            "Cmd": None,
            "Labels": labels or None,
            "WorkingDir": "",
        },
        "rootfs": {"type": "layers", "diff_ids": [layer.diff_id for layer in layers]},
        "history": [{"created": created, "created_by": "tests/cluster/images.py"} for _ in layers],
    }
    return json.dumps(config, sort_keys=True).encode()


def write_archive(out, ref: str, layers: list[Layer], config: bytes, skip: int = 0) -> None:
    """A docker-archive (what `docker save` writes) on the stream `out`. The first `skip` layers'
    tars are left out: `docker load` reads a layer's tar only when the engine lacks that layer."""
    config_name = hashlib.sha256(config).hexdigest() + ".json"
    names = [f"{layer.diff_id.split(':')[1]}/layer.tar" for layer in layers]
    manifest = json.dumps([{"Config": config_name, "RepoTags": [ref], "Layers": names}]).encode()
    with tarfile.open(fileobj=out, mode="w|") as tar:

        def add(name: str, data: bytes) -> None:
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), int(time.time())
            tar.addfile(info, io.BytesIO(data))

        add("manifest.json", manifest)
        add(config_name, config)
        for i, (layer, name) in enumerate(zip(layers, names, strict=True)):
            if i >= skip:
                tar.add(str(layer.tar), name)
