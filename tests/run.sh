#!/usr/bin/env bash
# Install everything the tests need on a fresh Debian machine (as root), then run them.
# The namespace test cluster needs docker.io, openssh-server and iproute2; its images are built
# from a Debian root filesystem (debootstrap) with Ray from PyPI, and gcc builds the NVML stand-in;
# iputils-ping because a real Spark has ping, which the reachability check prefers; rsync because
# the sync benchmark compares with the manual `rsync -e ssh` (its smoke test runs here); iperf3
# because check --fabric measures with it where nodes have it (the test nodes have the host's);
# tcsh as a login shell that is not POSIX sh (node programs must not depend on its parser).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ]; then
  if ! command -v dockerd >/dev/null || ! command -v sshd >/dev/null || ! command -v debootstrap >/dev/null \
     || ! command -v cc >/dev/null \
     || ! command -v tmux >/dev/null || ! command -v tc >/dev/null || ! command -v ping >/dev/null \
     || ! command -v rsync >/dev/null || ! command -v iperf3 >/dev/null || ! command -v tcsh >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      docker.io openssh-server openssh-client debootstrap debian-archive-keyring gcc libc6-dev iproute2 \
      iptables tmux procps kmod iputils-ping rsync iperf3 tcsh >/dev/null
  fi
  # tests/test_install.py makes a fresh virtual environment: Debian's python3 needs python3-venv for it.
  if ! python3 -c "import ensurepip" 2>/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
  fi
fi
# The test images (debootstrap, Ray from PyPI: minutes on a fresh machine, cached after) build
# while pip, the linters and mypy run; the tests start once they are ready.
images=""
if [ "$(id -u)" = 0 ]; then
  images_log=$(mktemp)
  python3 -m tests.cluster images >"$images_log" 2>&1 &
  images=$!
fi
python3 -m pip install -q --disable-pip-version-check -e '.[test]'
# Lint, format and types first: one line each when clean, the findings otherwise (and a failed run).
python3 -m ruff check spark_tui tests bench
python3 -m ruff format --check spark_tui tests bench
python3 -m mypy
if [ -n "$images" ]; then
  wait "$images" || { cat "$images_log"; exit 1; }
  cat "$images_log"
fi
# Two workers (pytest-xdist), each with its own namespace test cluster; the slowest tests listed.
exec python3 -m pytest -q -p no:cacheprovider -n "${SPARK_TEST_WORKERS:-2}" --dist loadgroup --durations=25 "$@"
