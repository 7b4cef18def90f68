"""One rank's NCCL start-up lines as NCCL prints them, built from that rank's own environment
(NCCL_SOCKET_IFNAME, VLLM_HOST_IP, NCCL_IB_HCA, NCCL_IB_DISABLE) and host name. NCCL's own lines are
a stand-in: no NCCL runs here. SPARK_TEST_IB_DOWN=1: this node's RoCE ports are down, so NCCL
finds no IB device and uses Socket."""

from __future__ import annotations

import os
import socket

NCCL_VERSION = "2.28.9+cuda13.0"


def _line(msg: str) -> str:
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{pid} [0] NCCL INFO {msg}"


def _ident(rank: int, world: int) -> str:
    return f"comm 0x55d1c0a0 rank {rank} nranks {world} cudaDev 0"


def init_start(rank: int, world: int, env: os._Environ | dict | None = None) -> list[str]:
    env = os.environ if env is None else env
    ifname = env.get("NCCL_SOCKET_IFNAME") or "lo"
    ip = env.get("VLLM_HOST_IP") or "127.0.0.1"
    hca = env.get("NCCL_IB_HCA") or ""
    disable = env.get("NCCL_IB_DISABLE") or ""
    lines = [_line(f"Bootstrap: Using {ifname}:{ip}<0>")]
    if rank == 0:
        lines.append(_line(f"NCCL version {NCCL_VERSION}"))
    if disable:
        lines.append(_line(f"NCCL_IB_DISABLE set by environment to {disable}."))
    if hca:
        lines.append(_line(f"NCCL_IB_HCA set to {hca}"))
    if env.get("SPARK_TEST_IB_DOWN") == "1":
        lines.append(_line("NET/IB : No device found."))  # as NCCL says it when every listed port is down
        lines += [_line(f"NET/Socket : Using [0]{ifname}:{ip}<0>"), _line("Using network Socket")]
    elif hca and disable != "1":
        devices = " ".join(f"[{i}]{dev}:1/RoCE" for i, dev in enumerate(hca.split(",")))
        lines += [_line(f"NET/IB : Using {devices} [RO]; OOB {ifname}:{ip}<0>"), _line("Using network IB")]
    else:
        lines += [_line(f"NET/Socket : Using [0]{ifname}:{ip}<0>"), _line("Using network Socket")]
    lines.append(
        _line(
            f"ncclCommInitRank {_ident(rank, world)} nvmlDev 0 busId f01000 commId 0x3470ca318760efc8 - Init START"
        )
    )
    return lines


def init_complete(rank: int, world: int) -> str:
    return _line(
        f"ncclCommInitRank {_ident(rank, world)} busId f01000 commId 0x3470ca318760efc8 "
        "localSize 1 used 0 bytes - Init COMPLETE"
    )
