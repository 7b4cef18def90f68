"""The NCCL, torch.distributed, Ray and link entries added from real threads: each names its
figures as values, what follows from a cause ranks after it, and look-alike healthy lines stay
unnamed."""

import pytest

from spark_tui.knowledge import scan
from tests.helpers import SAMPLES, found


@pytest.mark.parametrize(
    "name, ident, figures",
    [
        ("nccl_watchdog_work_timeout", "nccl.watchdog_timeout", {"rank": 1, "seq": 1}),
        (
            "g4_torch_monitored_barrier_timeout",
            "torch.gloo_timeout",
            {"ranks": "4, 5, 6, 7", "timeout_ms": 2000000},
        ),
        ("g4_torch_monitored_barrier_peer", "torch.gloo_peer_lost", {"peer": "rank 0"}),
        (
            "g4_link_nccl_async_fatal_qp",
            "nccl.ib_async_event",
            {"device": "mlx5_1:1", "event": "invalid request local work queue error"},
        ),
        (
            "g4_link_mooncake_async_event",
            "nccl.ib_async_event",
            {"device": "erdma_0", "event": "local work queue catastrophic error"},
        ),
        (
            "g3_nccl_ib_collective_mismatch",
            "nccl.message_truncated",
            {"peer": "10.10.23.6<58683>", "local_bytes": 496640, "remote_bytes": 65536},
        ),
        (
            "g3_nccl_ib_collective_mismatch_old",
            "nccl.message_truncated",
            {"local_bytes": 546816, "remote_bytes": 524288},
        ),
        ("g3_torch_deepspeed_child_killed", "torch.elastic_child_failed", {"exit_code": -9}),
        (
            "g3_ray_serve_replicas_unscheduled",
            "ray.serve_replicas_unscheduled",
            {"deployment": "demoRetrievalVoyagerIndexServiceHandler", "count": 1, "request": '{"CPU": 2.0}'},
        ),
        (
            "g3_ray_serve_replicas_unscheduled_old",
            "ray.serve_replicas_unscheduled",
            {"available": '{"CPU": 5.6}'},
        ),
        (
            "g3_torch_store_reset_runtime",
            "torch.store_connection_lost",
            {"error": "Connection reset by peer"},
        ),
        ("nccl_watchdog_dump_signal", "nccl.watchdog_timeout", {"rank": 2, "from_rank": 6}),
        ("nccl_watchdog_dump_signal", "nccl.watchdog_abort", {"rank": 7, "seq": 460631}),
        ("nccl_message_truncated_socket", "nccl.message_truncated", {"got": 696320, "expected": 32768}),
        ("nccl_message_truncated_peer", "nccl.message_truncated", {"peer": "192.168.161.30<59210>"}),
        ("nccl_message_truncated_bootstrap", "nccl.message_truncated", {"got": 256, "expected": 4}),
        ("nccl_nvls_invalid_argument", "nccl.nvls_failed", {"cuda_error": "1 'invalid argument'"}),
        ("nccl_socket_type_mismatch", "nccl.socket_type_mismatch", {"got": 4, "expected": 3}),
        ("nccl_ib_completion_no_peer_gid", "nccl.ib_completion_error", {"status": 4, "opcode": 0}),
        ("nccl_library_load_failed", "nccl.library_load_failed", {"library": "libnccl.so.2"}),
        ("nccl_rank_count_mismatch", "nccl.rank_count_mismatch", {"root_ranks": 6, "rank_ranks": 3}),
        ("torch_gloo_peer_lost", "torch.gloo_peer_lost", {"peer": "127.0.0.1", "port": 10895}),
        ("ray_dashboard_start_failed", "ray.dashboard_failed", {"return_code": -11}),
        ("ray_subprocess_exited_block", "ray.subprocess_exited", {"process": "dashboard", "exit_code": 0}),
        ("ray_subprocess_exited_title", "ray.subprocess_exited", {"process": "dashboard", "exit_code": -11}),
        ("ray_gcs_died_raylet_check", "ray.gcs_died", {"seconds": 60}),
        ("ray_dashboard_agent_failed", "ray.dashboard_failed", {"component": "agent"}),
        ("link_qp_rtr_failed_perftest", "link.qp_rtr_failed", {"qpn": 122273}),
        ("link_tx_timeout", "link.tx_timeout", {"netdev": "eth0", "driver": "ftgmac100", "queue": 0}),
        ("link_tx_timeout_cpu", "link.tx_timeout", {"netdev": "eth0", "queue": 3}),
        ("nccl_communicator_aborted", "nccl.watchdog_abort", {"rank": 0}),
        ("link_qp_rtr_failed_handshake", "link.qp_rtr_failed", {"error": "Connection timed out [110]"}),
        (
            "torch_store_barrier_timeout_count",
            "torch.store_barrier_timeout",
            {"rank": 4330, "world_size": 2048, "worker_count": 1792, "timeout": "0:30:00"},
        ),
        ("torch_store_clients_timeout", "torch.store_timeout", {"seconds": 601, "joined": 1, "expected": 4}),
        ("torch_store_wait_timeout", "torch.store_timeout", {"wait_ms": 600000}),
        ("torch_gloo_connect_full_mesh_ray", "torch.gloo_connect_failed", {"error": "pair.cc:144] no error"}),
        ("torch_gloo_no_address_ifname", "torch.gloo_no_address", {"name": "bond1"}),
        ("torch_gloo_no_address_hostname", "torch.gloo_no_address", {"name": "dgx-1.ai"}),
        ("torch_rendezvous_port_in_use_bind", "torch.rendezvous_port_in_use", {"port": 29500}),
        ("torch_rendezvous_port_in_use_one_line", "torch.rendezvous_port_in_use", {"port": 29500}),
        ("ray_stale_cluster_address", "ray.stale_cluster_address", {"address": "10.164.31.145:6379"}),
        ("ray_object_store_full", "ray.object_store_full", {"object_bytes": 516884584}),
        ("ray_low_memory_warning", "ray.low_memory", {"used_gib": 29.6, "total_gib": 30.9, "free_pct": 10}),
        ("ray_out_of_memory_legacy", "ray.memory_monitor_kill", {"threshold": 95.0}),
        (
            "link_pcie_limited",
            "link.pcie_limited",
            {
                "pci": "0000:b3:00.1",
                "available_gbps": 63.008,
                "capable_gbps": 252.048,
                "link": "8 GT/s x8 link",
            },
        ),
        ("gen_nccl_ring_loop_back", "nccl.ring_mismatch", {"ring": 2, "got": 7, "expected": 2}),
        (
            "gen_nccl_ucx_retry_exceeded_roce",
            "nccl.ib_completion_error",
            {"status_text": "Transport retry count exceeded", "device": "mlx5_0:1"},
        ),
        (
            "gen_nccl_ucx_fatal_retry_exceeded",
            "nccl.ib_completion_error",
            {"status_text": "Transport retry count exceeded", "device": "mlx5_3:1"},
        ),
        (
            "gen_nccl_mooncake_retry_counter",
            "nccl.ib_completion_error",
            {"status_text": "transport retry counter exceeded"},
        ),
        (
            "gen_link_ucx_dci_rtr",
            "link.qp_rtr_failed",
            {"qp_type": "DCI", "to_state": "RTR", "error": "Invalid argument"},
        ),
        (
            "gen_link_orangefs_rtr_rts",
            "link.qp_rtr_failed",
            {"from_state": "RTR", "to_state": "RTS", "error": "Invalid argument"},
        ),
        (
            "gen_link_mlx5_cmd_rtr2rts",
            "link.qp_rtr_failed",
            {"command": "RTR2RTS_QP", "error": "bad parameter"},
        ),
        (
            "gen_link_nvshmem_ibgda_init2rtr",
            "link.qp_rtr_failed",
            {"command": "INIT2RTR_QP", "syndrome": "764216"},
        ),
        ("gen_link_nvshmem_ibrc_modify_qp", "link.qp_rtr_failed", {"status": 22}),
        ("gen_ray_resources_claimed_placement", "ray.resources_claimed", {"request": "{CPU: 1.000000}"}),
        ("gen_link_tx_timeout_ipqess", "link.tx_timeout", {"netdev": "eth0", "queue": 0}),
        (
            "gen_nccl_perftest_completion_one_line",
            "nccl.ib_completion_error",
            {"status": 12, "syndrome": "81"},
        ),
        ("gen_nccl_perftest_completion_status4", "nccl.ib_completion_error", {"status": 4, "syndrome": "51"}),
        ("gen_ray_glog_check_failed", "ray.internal_check_failed", {"check": "entry"}),
        (
            "k15a_ray_spill_nonetype",
            "ray.object_spill_failed",
            {"error": "object of type 'NoneType' has no len()"},
        ),
        ("k15a_torch_rendezvous_port_eacces", "torch.rendezvous_port_permission_denied", {"port": 97}),
        ("k15d_nccl_topo_attribute_missing", "nccl.internal_error", {"attribute": "arch", "node": "cpu"}),
        (
            "k15d_nccl_ofi_register_memory_rail",
            "nccl.ibv_call_failed",
            {"call": "register_rail_mr_buffer", "error": "Invalid argument"},
        ),
        (
            "k15d_ray_worker_register_unknown_worker",
            "ray.worker_register_failed",
            {"status": "Invalid: Invalid: Unknown worker"},
        ),
        (
            "k15d_ray_task_error_serve_replica",
            "ray.task_error",
            {
                "exception": "AttributeError",
                "task": "ServeReplica:xqHWInctmH.get_metadata",
                "address": "172.31.126.222",
            },
        ),
        ("w15b_nccl_plugin_dlerror", "nccl.net_plugin_fallback", {"plugin": "libnccl-net.so"}),
        ("w15b_nccl_plugin_could_not_find", "nccl.net_plugin_fallback", {"plugin": "libnccl-net.so"}),
        (
            "w15b_ray_spill_disk_full_2_0",
            "ray.spill_disk_full",
            {"path": "/mnt/data0/ray", "threshold": "0.95", "available": "50637901824"},
        ),
        (
            "w16_ray_runtime_env_client_getorcreate",
            "ray.runtime_env_failed",
            {"attempts": 5, "error": "HTTP Error 503: Service Unavailable"},
        ),
        ("c16dist_nccl_net_not_found", "nccl.net_not_found", {"network": "AWS Libfabric"}),
        (
            "c16dist_nccl_cuda_error_last_error_line",
            "nccl.cuda_error",
            {"cuda_error": "999 'unknown error'"},
        ),
        (
            "c16dist_nccl_watchdog_timeout_wrapped_tail",
            "nccl.watchdog_timeout",
            {"timeout_ms": 600000},
        ),
        (
            "c16dist_ray_client_python_mismatch",
            "ray.version_mismatch",
            {"node_python": "3.10.6", "cluster_python": "3.6.9"},
        ),
        (
            "t16b_mooncake_slice_retry",
            "nccl.ib_completion_error",
            {"status_text": "transport retry counter exceeded"},
        ),
        (
            "t16b_ibv_wc_local_length_mooncake",
            "nccl.ib_completion_error",
            {"status_text": "local length error"},
        ),
        (
            "c17serve_ray_serve_replica_exception",
            "ray.serve_replica_failed",
            {"deployment": "VLLMDeployment"},
        ),
        (
            "c17dist_kuberay_gcs_client_failed_to_connect",
            "ray.gcs_unreachable",
            {"address": "192.168.251.238:6379"},
        ),
        (
            "c17dist_rayserve_controller_replica_stopped",
            "ray.serve_replica_failed",
            {"deployment": "vLLM:qwen-1_5b"},
        ),
        (
            "c17dist_nvshmem_init_connection_timed_out",
            "nvshmem.init_failed",
            {"error": "Connection timed out"},
        ),
        ("c17train_accelerate_main_process_port_in_use", "torch.rendezvous_port_in_use", {"port": 29144}),
        (
            "t17exc_ray_object_fetch_timed_out",
            "ray.object_lost",
            {"object_id": "9f1bf41aa430eaf8ffffffffffffffffffffffff020000004b000000"},
        ),
    ],
)
def test_figures_come_out_as_values(name, ident, figures):
    finding = found(name, ident)
    assert {k: finding.figures.get(k) for k in figures} == figures


def test_the_watchdogs_abort_line_ranks_after_the_timeout_it_follows_from():
    text = (SAMPLES / "nccl_watchdog_work_timeout.log").read_text()
    ranked = [f.id for f in scan(text)]
    assert ranked.index("nccl.watchdog_timeout") < ranked.index("nccl.watchdog_abort")
    alone = scan((SAMPLES / "nccl_watchdog_abort_legacy.log").read_text())
    assert [f.id for f in alone] == ["nccl.watchdog_abort"] and alone[0].secondary


def test_an_nvls_failure_is_named_instead_of_the_generic_cuda_failure_on_its_line():
    ranked = [f.id for f in scan((SAMPLES / "nccl_nvls_cuda_failure.log").read_text())]
    assert ranked == ["nccl.nvls_failed"]
    assert "NCCL_NVLS_ENABLE=0" in found("nccl_nvls_cuda_failure", "nccl.nvls_failed").fix


def test_the_texts_carry_the_figures():
    port = found("torch_rendezvous_port_in_use_bind", "torch.rendezvous_port_in_use")
    assert "29500" in port.title and "master_port" in port.fix
    store = found("torch_store_clients_timeout", "torch.store_timeout")
    assert "1 of 4 ranks joined within 601 s" in store.title
    truncated = found("nccl_message_truncated_peer", "nccl.message_truncated")
    assert truncated.title == "NCCL message truncated (from 192.168.161.30<59210>)"
    pcie = found("link_pcie_limited", "link.pcie_limited")
    assert "63.008" in pcie.title and "252.048" in pcie.title and "lspci -vv -s 0000:b3:00.1" in pcie.fix


# Real lines from the threads cited in tests/data/not_recognised and tests/data/failures.
@pytest.mark.parametrize(
    "line",
    [
        # torch's progress lines around the barrier and the store: no failure yet
        "Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:1 "
        "(world_size=4, worker_count=8, timeout=0:30:00)",
        "Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 2 nodes.",
        # a NIC whose PCIe link gives it all it can use
        "[   10.643346] mlx5_core 0004:01:00.0: 63.008 Gb/s available PCIe bandwidth (8.0 GT/s PCIe x8 link)",
        # NCCL's own NVLS probe on a system without multicast
        "rdma-test-gpu-worker-0:4280:5850 [5] NCCL INFO NVLS multicast support is not available on dev 5",
    ],
)
def test_look_alike_healthy_lines_stay_unnamed(line):
    assert scan(line) == []
