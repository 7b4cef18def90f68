#!/bin/sh
# Stand-in for NGC's /opt/nvidia/nvidia_entrypoint.sh: a banner, then the command.
echo
echo "=========="
echo "== vLLM =="
echo "=========="
echo
echo "NVIDIA Release 25.10 (build 214638690)"
echo "vLLM Version 0.10.2+9dd9ca32.nv25.10"
echo
exec "$@"
