"""The container environment a node gets, each variable with what it was derived from."""

from __future__ import annotations

from spark_tui.secret_names import SECRET_NAME
from spark_tui.settings.model import DerivedVar, NodeConfig, Value

IFNAME_VARS = (
    "NCCL_SOCKET_IFNAME",
    "GLOO_SOCKET_IFNAME",
    "TP_SOCKET_IFNAME",
    "UCX_NET_DEVICES",
    "OMPI_MCA_btl_tcp_if_include",
)
IP_VARS = ("VLLM_HOST_IP", "RAY_NODE_IP_ADDRESS", "RAY_OVERRIDE_NODE_IP_ADDRESS")
# Each node has its own value of these. vLLM's Ray executor copies the head's NCCL_*, UCX_* and
# VLLM_* variables to every worker unless they are listed in `ray_non_carry_over_env_vars.json`
# under its config root: spark-tui lists them, so a worker keeps its own interface and HCAs.
PER_NODE_VARS = (*IFNAME_VARS, "NCCL_IB_HCA", *IP_VARS)
# Set once `model.complete` passed on every node: vLLM and transformers then read the model from
# the cache and never ask the Hub (no download started, no rate limit, no network needed).
OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


def offline_reason(values: dict[str, Value], nodes: list[NodeConfig]) -> tuple[str, str]:
    """(why OFFLINE_VARS are set, why they are not): one of the two is empty. Both are empty
    when there is nothing to say (no model, or a model given as a path in the container)."""
    model = values["model"].value
    if not model or str(model).startswith(("/", ".")):
        return "", ""
    unasked = [n.name for n in nodes if n.model_check is None]
    if unasked:
        return "", (
            f"model.complete not checked on {', '.join(unasked)} (only commands that ask the nodes "
            "check it: plan, up, status, the cockpit)"
        )
    failed = [(n.name, n.model_check[1]) for n in nodes if n.model_check and not n.model_check[0]]
    if failed:
        said = "; ".join(f"{name}: {why}" for name, why in failed)
        return "", f"model.complete did not pass ({said}): vLLM may need the Hub for {model}"
    names = ", ".join(n.name for n in nodes)
    return f"model.complete passed on every node ({names}): {model} is held there, the Hub is never asked", ""


def derive_container_env(
    node: NodeConfig, values: dict[str, Value], nodes: list[NodeConfig]
) -> list[DerivedVar]:
    """The container environment for one node, each variable with what it was derived from."""
    out: list[DerivedVar] = []
    ip, netdev, hca = node.values["data_ip"], node.values["netdev"], node.values["hca"]
    if ip.value:
        out += [DerivedVar(v, ip.value, f"data_ip ({ip.source})") for v in IP_VARS]
    if netdev.value:
        out += [DerivedVar(v, netdev.value, f"netdev ({netdev.source})") for v in IFNAME_VARS]
    if hca.value:
        out.append(DerivedVar("NCCL_IB_HCA", ",".join(hca.value), f"hca ({hca.source})"))
    solo = values["executor"].value == "solo"
    if not solo:  # solo: no traffic between nodes, so no data path and no rendezvous address
        out.append(DerivedVar("NCCL_IB_DISABLE", "0", "RoCE is the data path"))
    out.append(DerivedVar("NCCL_IGNORE_CPU_AFFINITY", "1", "GB10 CPU affinity (field practice)"))
    dbg = values["nccl_debug"]
    if dbg.value:
        out.append(DerivedVar("NCCL_DEBUG", dbg.value, f"nccl_debug ({dbg.source})"))
    head = next((n for n in nodes if n.is_head), nodes[0])
    head_ip = head.values["data_ip"]
    if head_ip.value and not solo:
        out.append(
            DerivedVar("MASTER_ADDR", head_ip.value, f"data_ip of head {head.name} ({head_ip.source})")
        )
    port = values["master_port"]
    if not solo:
        out.append(DerivedVar("MASTER_PORT", str(port.value), f"master_port ({port.source})"))
    if values["executor"].value == "ray":
        src = f"executor ray ({values['executor'].source})"
        out.append(DerivedVar("RAY_memory_monitor_refresh_ms", "0", src))
        out.append(DerivedVar("RAY_object_store_memory", "1073741824", src))
        # Ray folds lines several actors print alike into one (`[repeated Nx across cluster]`,
        # shown ~5 s late): with 3+ nodes every worker's NCCL lines but one would be folded away.
        out.append(
            DerivedVar(
                "RAY_DEDUP_LOGS",
                "0",
                f"{src}: every worker's lines reach the head's log, each with its node "
                "(Ray's deduplication would fold alike lines of several nodes into one)",
            )
        )
    offline, not_offline = offline_reason(values, nodes)
    out += [DerivedVar(v, "1", offline) for v in OFFLINE_VARS if offline]
    token = values["hf_token"]
    if token.value:
        out.append(DerivedVar("HF_TOKEN", token.value, f"hf_token ({token.source})", secret=True))
    extra = node.values["env"]
    by_name = {v.name: v for v in out}
    for key, val in extra.value.items():
        item_source = extra.item_sources[key]
        if key in by_name:
            by_name[key].overridden_by = item_source
        out.append(DerivedVar(key, val, f"env ({item_source})", secret=bool(SECRET_NAME.search(key))))
    # Said beside the environment (config, plan), unless the user set the variable themselves.
    node.env_not_set = [(v, not_offline) for v in OFFLINE_VARS if not_offline and v not in extra.value]
    return out
