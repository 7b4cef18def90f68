"""NCCL, torch.distributed (c10d, Gloo, elastic), Ray and link entries from real threads: their
figures come out as values, what follows from a cause ranks after it, each version's wording names
the same entry, and look-alike healthy lines stay unnamed."""

import pytest

from spark_tui.knowledge import scan
from tests.helpers import DATA, SAMPLES, found


@pytest.mark.parametrize(
    "name, ident, figures",
    [
        ("nccl_invalid_argument_config", "nccl.invalid_argument", {"nccl_version": "2.14.3"}),
        ("nccl_gdr_disabled_peermem", "nccl.gdr_disabled", {"hca": 0, "device": "mlx5_0"}),
        (
            "nccl_poll_connect_no_route",
            "nccl.connect_failed",
            {"address": "10.0.0.4<56849>", "error": "113(No route to host)"},
        ),
        (
            "nccl_poll_connect_retry_address",
            "nccl.connect_retrying",
            {"address": "10.29.224.148<52333>", "error": "Connection refused", "max_attempts": 34},
        ),
        (
            "nccl_poll_connect_retry_no_route",
            "nccl.connect_retrying",
            {"error": "No route to host", "address": None},
        ),
        ("nccl_bootstrap_rank_twice", "nccl.rank_checked_in_twice", {"rank": 1, "nranks": 8}),
        (
            "torch_collective_mismatch_shape",
            "torch.collective_mismatch",
            {"rank": 1, "collective": "ALLREDUCE", "other": 0},
        ),
        ("nccl_mismatched_collective_legacy", "torch.collective_mismatch", {"rank": 39}),
        ("torch_env_rendezvous_master_addr", "torch.env_rendezvous_unset", {"variable": "MASTER_ADDR"}),
        ("torch_env_rendezvous_rank", "torch.env_rendezvous_unset", {"variable": "RANK"}),
        ("torch_elastic_child_failed_exit1", "torch.elastic_child_failed", {"rank": 0, "exit_code": 1}),
        ("torch_elastic_child_failed_sigkill", "torch.elastic_child_failed", {"rank": 0, "exit_code": -9}),
        ("torch_elastic_failed_exitcode", "torch.elastic_child_failed", {"exit_code": -9, "local_rank": 0}),
        (
            "torch_elastic_sighup",
            "torch.elastic_signal",
            {"signal": 1, "signal_name": "SIGHUP", "pid": 2920830},
        ),
        (
            "torch_elastic_death_signal_agent",
            "torch.elastic_signal",
            {"signal": 15, "signal_name": "SIGTERM"},
        ),
        ("torch_rendezvous_store_failed", "torch.rendezvous_timeout", {"timeout": "60000 ms", "host": None}),
        (
            "torch_store_recv_reset",
            "torch.store_connection_lost",
            {"remote": "[::ffff:0.0.0.0]:12201", "error": "Connection reset by peer"},
        ),
        ("gen2_torch_launch_called_process", "torch.elastic_child_failed", {"local_rank": 0, "exit_code": 1}),
        (
            "gen2_torch_launch_called_process_args",
            "torch.elastic_child_failed",
            {"local_rank": 1, "exit_code": 1},
        ),
        (
            "gen2_torch_store_recv_vector",
            "torch.store_connection_lost",
            {
                "remote": "[ip-172-16-0-2.us-west-2.compute.internal]:49587",
                "error": "Connection reset by peer",
            },
        ),
        (
            "torch_store_client_retrying",
            "torch.store_connect_retrying",
            {"remote": "100.64.0.1:59782", "tries": 6, "timeout_ms": 1800000},
        ),
        (
            "ray_runtime_env_raylet",
            "ray.runtime_env_failed",
            {"error": "not enough values to unpack (expected 2, got 1)"},
        ),
        (
            "ray_owner_died",
            "ray.owner_died",
            {"object_id": "00ffffffffffffffffffffffffffffffffffffff1300000001e1f505"},
        ),
        ("ray_actor_owner_died", "ray.actor_died", {"owner_address": "172.21.160.9", "address": None}),
        ("ray_actor_creation_task_failed", "ray.actor_died", {"address": "127.0.0.1", "owner_address": None}),
        (
            "ray_deserialize_failed",
            "ray.deserialize_failed",
            {"object_id": "86460fb9629b4b8effffffffffffffffffffffff0100000010000000"},
        ),
        ("link_ibstat_port_disabled", "link.ib_port_not_active", {"phys_state": "Disabled"}),
        ("link_ibstat_port_polling", "link.ib_port_not_active", {"phys_state": "Polling"}),
        ("link_ibv_devinfo_port_down", "link.ib_port_not_active", {"state": "PORT_DOWN"}),
        ("link_module_high_temperature", "link.module_event", {"module": 0, "error": "High Temperature"}),
        ("link_pcie_power_insufficient", "link.pcie_power_insufficient", {"watts": 27}),
        ("ray_worker_start_timeout_dead", "ray.worker_start_timeout", {"state": "dead"}),
        ("torch_client_socket_any_address", "torch.rendezvous_timeout", {"host": "05", "port": 40323}),
        ("ray_redis_connection_raylet_legacy", "ray.gcs_unreachable", {"address": "head ip:39902"}),
        ("gen2_ray_redis_retries", "ray.gcs_unreachable", {"address": "10.0.199.179:xxxx", "retries": 16}),
        ("torch_gloo_timeout_send", "torch.gloo_timeout", {"timeout_ms": 1800000, "op": "send"}),
        ("torch_gloo_no_address_spark", "torch.gloo_no_address", {"name": "eth0"}),
        ("torch_gloo_no_address_split", "torch.gloo_no_address", {"name": "^lo"}),
        ("ray_port_in_use_dashboard_bind", "ray.port_in_use", {"host": "0.0.0.0", "port": 8265}),
        ("gen2_ray_grpc_server_port", "ray.port_in_use", {"port": 8076}),
        (
            "gen2_ray_node_died_error",
            "ray.node_dead",
            {"address": "10.244.1.4", "node_id": "74673a353f8e0caba3dcb01d6e777d7dc64490656fa0b38ccf9ed161"},
        ),
        ("gen2_ray_grpc_server_port_worker", "ray.port_in_use", {"port": 10058}),
        ("link_mlx5_load_failed", "link.mlx5_load_failed", {"pci": "0000:03:00.0", "code": -22}),
        ("link_mlx5_cmd_timeout", "link.mlx5_cmd_timeout", {"pci": "0000:61:00.0", "command": "CREATE_DCT"}),
        ("link_rdma_link_polling", "link.ib_port_not_active", {"state": "DOWN", "phys_state": "POLLING"}),
        (
            "nccl_socket_create_failed_v24",
            "nccl.socket_create_failed",
            {"error": "Address family not supported by protocol"},
        ),
        ("nccl_bootstrap_address_comm_id", "nccl.bootstrap_address", {"address": "192.168.0.91<27030>"}),
        ("nccl_watchdog_abort_exception_detected", "nccl.watchdog_abort", {"rank": 7, "seq": 4486}),
        ("nccl_nvls_bind_multicast", "nccl.nvls_failed", {"cuda_error": "2 'out of memory'"}),
        ("torch_gloo_writev_reset", "torch.gloo_peer_lost", {"peer": "::1", "port": 54172}),
        (
            "torch_rendezvous_timeout_no_space",
            "torch.rendezvous_timeout",
            {"host": "0.15.4.33", "port": 39213},
        ),
        (
            "torch_rendezvous_timeout_torchrun_host_port",
            "torch.rendezvous_timeout",
            {"host": "192.0.0.1", "port": 1234},
        ),
        ("torch_rendezvous_port_in_use_listen_v6", "torch.rendezvous_port_in_use", {"port": 47531}),
        (
            "w15a_torch_client_socket_placeholder_address",
            "torch.rendezvous_timeout",
            {"timeout": "600000ms", "host": "PRIVATE_IP", "port": None},
        ),
        (
            "w15a_torch_elastic_failed_no_tail",
            "torch.elastic_child_failed",
            {"exit_code": -7, "local_rank": 0},
        ),
        ("w15a_nccl_socket_h_recv_reset", "nccl.socket_failed", {"error": "Connection reset by peer"}),
        ("w15a_torch_store_wait_for_input_timeout", "torch.store_timeout", {"wait_ms": 900000}),
        (
            "w15a_torch_master_addr_temporary_failure",
            "torch.master_addr_unresolved",
            {"error": "Temporary failure in name resolution"},
        ),
        ("ray_gcs_reconnect_failed", "ray.gcs_died", {"address": "127.0.0.1:6379", "seconds": None}),
        (
            "ray_redis_connection_error_init",
            "ray.gcs_unreachable",
            {"errno": 60, "address": "10.30.1.10:X", "error": "Operation timed out"},
        ),
        (
            "ray_pending_demands_bundles",
            "ray.pending_demands",
            {
                "request": "{'node:ec2-<MY ADDRESS>.us-west-2.compute.amazonaws.com': 0.001, 'GPU': 1.0} * 1, "
                "{'GPU': 1.0} * 15"
            },
        ),
        (
            "ray_pending_demands_prefixed",
            "ray.pending_demands",
            {"request": "{'CPU': 0.1, 'memory': 142555610.0}"},
        ),
        (
            "torch_gloo_connect_refused_loopback",
            "torch.gloo_connect_failed",
            {"peer": "127.0.1.1", "port": 3210, "error": "Connection refused"},
        ),
        ("link_ibv_devices_list_enosys", "link.no_rdma_devices", {"error": "Function not implemented"}),
        (
            "torch_store_send_broken_pipe",
            "torch.store_connection_lost",
            {"remote": "[bogon]:43145", "error": "Broken pipe"},
        ),
        (
            "ray_core_worker_check_failed",
            "ray.internal_check_failed",
            {"check": "death_cause.context_case() == ContextCase::kActorDiedErrorContext"},
        ),
        (
            "torch_store_should_dump_flag",
            "torch.store_connection_lost",
            {"error": "failed to recv, got 0 bytes"},
        ),
        (
            "link_perftest_connect_failed",
            "link.perftest_connect_failed",
            {"host": "192.168.125.211", "port": 18515},
        ),
        (
            "k15b_link_rdma_link_logical_down",
            "link.ib_port_logical_down",
            {"device": "mlx5_7", "state": "DOWN"},
        ),
        ("k15b_link_ibv_devinfo_port_init", "link.ib_port_logical_down", {"state": "PORT_INIT"}),
        (
            "k15b_link_mlx5_cmd_out_err_create_mkey",
            "link.mlx5_command_failed",
            {"command": "CREATE_MKEY", "status": "bad parameter", "syndrome": "0x3bf6f", "err": -22},
        ),
        (
            "k15c_ucx_cuda_transports_unavailable",
            "link.ucx_transports_unavailable",
            {"transports": "'cuda_ipc','cuda_copy'"},
        ),
        (
            "w15c_link_down_ixgbe",
            "link.port_down",
            {"driver": "ixgbe", "pci": "0000:08:00.0", "netdev": "eth11"},
        ),
        ("w15c_link_down_e1000e_old", "link.port_down", {"driver": "e1000e", "netdev": "eth1"}),
        ("w15c_link_down_r8169_phy", "link.port_down", {"driver": "r8169", "netdev": "eth1"}),
        ("w15c_link_down_r8168", "link.port_down", {"driver": "r8168", "netdev": "eth0"}),
        ("w16_link_no_rdma_ucx_tcp_only", "link.no_rdma_devices", {"device": "mlx5_bond_0:1"}),
        ("w16_link_rdma_modules_missing_openibd", "link.rdma_module_not_found", {"module": "mlx5_core"}),
        (
            "t16b_rdma_cm_unreachable_ucx",
            "link.rdma_cm_error",
            {"event": "RDMA_CM_EVENT_UNREACHABLE", "status": 2, "peer": "127.0.0.1:45601"},
        ),
        ("t16b_rdma_cm_rejected", "link.rdma_cm_error", {"event": "RDMA_CM_EVENT_REJECTED"}),
        ("t16b_ucx_unreachable_mpi", "link.ucx_unreachable", {"peer": "<no debug data>"}),
        ("t16b_ucx_endpoint_timeout_ud", "link.ucx_peer_lost", {"status_text": "Endpoint timeout"}),
        (
            "t16b_ucx_connection_reset_unhandled",
            "link.ucx_peer_lost",
            {"status_text": "Connection reset by remote peer"},
        ),
        (
            "t16b_ucx_devx_remote_io_error",
            "link.mlx5_command_failed",
            {"command": "mlx5dv_devx_obj_create(QP)", "syndrome": "0x2c4154", "status": "Remote I/O error"},
        ),
        (
            "c16cuda_networkd_lost_carrier_ixgbe_reset",
            "link.tx_timeout",
            {"driver": "ixgbe", "netdev": "enp1s0f0"},
        ),
        ("c16cuda_networkd_lost_carrier_ixgbe_reset", "link.port_down", {"netdev": "enp1s0f0"}),
        (
            "c17dist_mooncake_register_memory_erange",
            "link.rdma_register_memory_failed",
            {"address": "0x7f56e6600000", "error": "Numerical result out of range"},
        ),
        (
            "c17dist_ucx_ibv_reg_mr_bad_address",
            "link.rdma_register_memory_failed",
            {"bytes": 4096, "error": "Bad address"},
        ),
        # session 25 (t25e): the UCX TCP send failure above NIXL's line is read first now (tcp_ep.c's status)
        (
            "c17dist_nixl_ucx_unexpected_endpoint_timeout",
            "link.ucx_peer_lost",
            {"status_text": "Input/output error"},
        ),
        ("w17_mlx5_handle_hca_cap", "link.mlx5_load_failed", {"pci": "0000:03:00.0"}),
        ("w17_mlx5_fw_preinit_timeout", "link.mlx5_load_failed", {"code": -16}),
        ("w17_no_rdma_dpdk_mlx5", "link.no_rdma_devices", {"device": "0000:af:00.2"}),
        ("w17_torch_nccl_alltoall_old_build", "torch.nccl_p2p_unsupported", {"op": "alltoall*"}),
        ("w17_ray_runtime_env_local_dir_actor", "ray.runtime_env_invalid_uri", {"uri": "."}),
        ("g18nccl_verbs_create_qp_enomem", "link.rdma_qp_create_failed", {"error": "Cannot allocate memory"}),
        (
            "g18nccl_libfabric_rdma_create_qp_enomem",
            "link.rdma_qp_create_failed",
            {"error": "Cannot allocate memory"},
        ),
        ("g18nccl_i40e_tx_timeout_recovery", "link.tx_timeout", {"queue": 43}),
        ("g18nccl_torch_unique_id_socket_timeout", "torch.nccl_unique_id", {"rank": 3, "root": 0}),
        (
            "g18nccl_spark_reg_mr_iova2_enomem",
            "nccl.ibv_call_failed",
            {"call": "ibv_reg_mr_iova2", "error": "Cannot allocate memory"},
        ),
        ("t20b_ucx_dct_rtr", "link.qp_rtr_failed", {"to_state": "RTR", "error": "Invalid argument"}),
        (
            "t20b_ucx_rc_qp_rtr_mtt",
            "link.qp_rtr_failed",
            {"to_state": "RTR", "error": "Resource temporarily unavailable"},
        ),
        (
            "t20b_ucx_query_device_ioctl",
            "link.rdma_userspace_kernel_mismatch",
            {"device": "mlx5_0", "error": "Inappropriate ioctl for device"},
        ),
        (
            "t20b_ucx_devx_event_channel_mofed5_on_mofed4",
            "link.rdma_userspace_kernel_mismatch",
            {"call": "mlx5dv_devx_create_event_channel", "error": "Protocol not supported"},
        ),
        ("t20b_ucx_no_sockaddr_aux", "link.ucx_unreachable", {"device": "mlx5_4:1"}),
        (
            "t20b_ray_fs_monitor_95_wrapped",
            "ray.spill_disk_full",
            {"path": "/tmp/ray/session_2023-06-29_11-21-28_818264_5598", "threshold": "95"},
        ),
        (
            "t20f_ucx_ibv_create_ah_timed_out",
            "link.rdma_address_handle_failed",
            {"device": "mlx5_1", "error": "Connection timed out"},
        ),
        (
            "t20f_ompi_ucx_create_ah_invalid_argument",
            "link.rdma_address_handle_failed",
            {"device": "rocep33s0f1", "error": "Invalid argument"},
        ),
        (
            "t20f_tensorpipe_rpc_broken_pipe",
            "torch.rpc_peer_lost",
            {"agent": "0", "peer": "27", "error": "sendmsg: Broken pipe"},
        ),
    ],
)
def test_figures_come_out_as_values(name, ident, figures):
    finding = found(name, ident)
    assert {k: finding.figures.get(k) for k in figures} == figures


def test_the_texts_carry_the_figures():
    child = found("torch_elastic_child_failed_sigkill", "torch.elastic_child_failed")
    assert child.title == "a worker process of torchrun failed (rank 0, exit code -9)"
    signal = found("torch_elastic_sigterm", "torch.elastic_signal")
    assert signal.title == "torchrun was stopped by a signal: 15 (SIGTERM)"
    unset = found("torch_env_rendezvous_master_addr", "torch.env_rendezvous_unset")
    assert "needs MASTER_ADDR" in unset.title and "master_port" in unset.fix
    timeout = found("torch_rendezvous_store_failed", "torch.rendezvous_timeout")
    assert timeout.title == "no connection to the rendezvous within 60000 ms"
    retrying = found("nccl_poll_connect_retry_address", "nccl.connect_retrying")
    assert (
        retrying.title
        == "NCCL keeps retrying a connection to a peer at 10.29.224.148<52333> (Connection refused)"
    )
    port = found("link_ibstat_port_disabled", "link.ib_port_not_active")
    assert port.title == "no RDMA port has a link (physical state Disabled)"


@pytest.mark.parametrize(
    "name, cause, follows",
    [
        # torchrun's report follows the child's own error
        ("torch_elastic_failed_exitcode", None, "torch.elastic_child_failed"),
        # NCCL's own WARN line names the argument; the 'invalid argument' summary follows from it
        ("nccl_invalid_argument_legacy", "nccl.libibverbs_missing", "nccl.invalid_argument"),
    ],
)
def test_what_follows_from_a_cause_is_secondary(name, cause, follows):
    found = scan((SAMPLES / f"{name}.log").read_text())
    ranked = [f.id for f in found]
    assert next(f for f in found if f.id == follows).secondary
    if cause:
        assert ranked.index(cause) < ranked.index(follows)


@pytest.mark.parametrize(
    "line, ident",
    [
        # one kind, the wordings of several NCCL versions
        (
            "x:1:2 [0] NCCL INFO Call to connect returned Connection refused, retrying",
            "nccl.connect_retrying",
        ),
        (
            "x:1:2 [1] misc/socket.cc:544 NCCL WARN socketPollConnect: connect returned Connection refused, "
            "exceeded error retry count (35)",
            "nccl.connect_failed",
        ),
        (
            "tpgds-aihub0003:2387398:2387398 [3] os/linux.cc:200 NCCL WARN ncclOsSocketPollConnect: connect to "
            "10.82.101.249<37857> returned Connection refused, exceeded error retry count after 35 attempts",
            "nccl.connect_failed",
        ),
        ("  what():  NCCL Error 4: invalid argument", "nccl.invalid_argument"),
        # vLLM's and SGLang's pynccl: the NCCL result's text without a version
        ("RuntimeError: NCCL error: remote process exited or there was a network error", "nccl.remote_error"),
        (
            "[rank0]: RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)",
            "nccl.invalid_usage",
        ),
        (
            "RuntimeError: NCCL error: internal error - please report this issue to the NCCL developers",
            "nccl.internal_error",
        ),
        # Ray 0.8-1.x and 2.x: the raylet of the node is gone
        (
            "ray.exceptions.RayletError: The Raylet died with this message: [RayletClient] Raylet connection closed.",
            "ray.raylet_terminated",
        ),
    ],
)
def test_each_versions_wording_names_the_same_entry(line, ident):
    assert ident in [f.id for f in scan(line)]


def test_the_newest_ncclos_wording_carries_the_peer():
    line = (
        "[2026-02-25 16:41:56] tpgds-aihub0003:2387398:2387398 [3] os/linux.cc:200 NCCL WARN ncclOsSocketPollConnect: "
        "connect to 10.82.101.249<37857> returned Connection refused, exceeded error retry count after 35 attempts"
    )
    found = next(f for f in scan(line) if f.id == "nccl.connect_failed")
    assert found.figures == {"address": "10.82.101.249<37857>", "error": "Connection refused"}


# Real lines from the threads cited in tests/data/failures and tests/data/not_recognised: no failure.
@pytest.mark.parametrize(
    "line",
    [
        # ibstat of a port that is up
        "                Physical state: LinkUp",
        "                State: Active",
        # ibv_devinfo of a port that is up
        "                        state:                  PORT_ACTIVE (4)",
        # a ConnectX card at boot: a module plugged in, the slot's power sufficient
        "[   11.097374] mlx5_core 0004:01:00.0: Port module event: module 0, Cable plugged",
        "[   11.097626] mlx5_core 0004:01:00.0: mlx5_pcie_event:294:(pid 542): PCIe slot advertised sufficient power (75W).",
        # NCCL with GPUDirect RDMA working
        "NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_1'",
        # torchrun's agent sending its own workers SIGTERM after a child failed: the child's failure is the news
        "W0516 10:49:23.951000 10143 torch/distributed/elastic/multiprocessing/api.py:900] Sending process 10208 "
        "closing signal SIGTERM",
        # Ray's client reconnecting normally
        "2025-03-21 13:14:00,413\tDEBUG worker.py:226 -- Couldn't connect channel in 5 seconds, retrying",
    ],
)
def test_look_alike_healthy_lines_stay_unnamed(line):
    assert scan(line) == []


def test_an_actor_that_failed_in_its_constructor_names_its_node_not_an_owner():
    died = found("ray_actor_creation_task_serve", "ray.actor_died")
    assert died.title == "a Ray worker (actor) died on 192.128.15.91" and died.secondary
    owner = found("ray_actor_owner_died", "ray.actor_died")
    assert owner.title == "a Ray worker (actor) died (its owner at 172.21.160.9 died first)"


def test_one_finding_for_a_raylet_that_keeps_restarting_workers():
    found = scan((SAMPLES / "ray_worker_start_timeout_dead.log").read_text())
    assert [(f.id, f.count) for f in found] == [("ray.worker_start_timeout", 3)]


def test_a_ray_port_taken_reads_the_grpc_servers_address():
    taken = next(
        f
        for f in scan(
            "E0217 18:17:22.955681883  561428 chttp2_server.cc:1063]                UNKNOWN:No address added out of total 1 resolved for '0.0.0.0:10002'"
        )
        if f.id == "ray.port_in_use"
    )
    assert (
        taken.figures == {"address": "0.0.0.0:10002"}
        and taken.title == "a Ray process found its port taken (0.0.0.0:10002)"
    )


def test_gloos_interface_error_ranks_before_the_engine_it_killed():
    found = scan((SAMPLES / "torch_gloo_no_address_split.log").read_text())
    ranked = [f.id for f in found]
    assert ranked.index("torch.gloo_no_address") < ranked.index("vllm.engine_core_died")


def test_a_gcs_lost_without_its_timeout_reads_without_a_placeholder():
    lost = found("ray_gcs_reconnect_failed", "ray.gcs_died")
    assert lost.title == "the Ray GCS at 127.0.0.1:6379 stopped answering"
    timed = found("ray_gcs_died_raylet_check", "ray.gcs_died")
    assert timed.title == "the Ray GCS stopped answering for 60 s"


def test_a_closed_compiled_graph_channel_is_named_instead_of_any_fatal_check():
    """The raylet's fatal check on a closed compiled-graph channel (vLLM over Ray) is its own kind;
    another fatal check of a Ray process is still the generic one."""
    assert [f.id for f in scan((SAMPLES / "ray_cgraph_channel_closed.log").read_text())] == [
        "ray.cgraph_channel_closed"
    ]
    assert [f.id for f in scan((SAMPLES / "ray_core_worker_check_failed.log").read_text())] == [
        "ray.internal_check_failed"
    ]


def test_a_proxy_close_at_teardown_is_not_a_failed_connection_set_up():
    """NCCL's proxy fails its Close operations while an aborted communicator is torn down (a real
    log, tests/data/not_recognised/nccl_proxy_close_teardown); a Connect that fails is the failure."""
    close = "su14-gpu07:49091:49179 [0] proxy.cc:1521 NCCL WARN [Proxy Service 1] Failed to execute operation Close from rank 1, retcode 3"
    assert scan(close) == []
    # NVIDIA/nccl-tests#166, cited by nccl.internal_error
    connect = "ubuntu:39964:40075 [0] proxy.cc:1519 NCCL WARN [Proxy Service 0] Failed to execute operation Connect from rank 0, retcode 2"
    assert [f.id for f in scan(connect)] == ["nccl.proxy_call_failed"]


def test_a_gcs_without_an_address_reads_without_a_placeholder():
    legacy = found("ray_redis_unreachable_legacy", "ray.gcs_unreachable")
    assert legacy.title == "Ray cannot reach the head's GCS" and "?" not in legacy.fix


def test_a_device_nccl_cannot_open_is_named_once_not_as_a_resource_refusal():
    found = scan((SAMPLES / "nccl_ib_device_open_failed.log").read_text())
    assert [f.id for f in found] == ["nccl.ib_device_open_failed"]
    assert found[0].figures["device"] in {"mlx5_58", "mlx5_59"}


SPARK_IBV_DEVINFO = DATA / "netif" / "ibv_devinfo-dgxspark-cx7-4ports-f1-active.txt"


def test_a_spark_with_its_unused_ports_down_names_nothing():
    """A DGX Spark has four RoCE devices (two QSFP ports, two PCIe functions each) and usually one
    or two cabled: the down ports beside an active one are normal (real ibv_devinfo of a Spark)."""
    text = SPARK_IBV_DEVINFO.read_text()
    assert text.count("PORT_DOWN (1)") == 2 and "PORT_ACTIVE (4)" in text
    assert scan(text) == []


def test_a_spark_with_no_port_active_is_named():
    """The same Spark's listing with every port down (no cable, or the peer down): RoCE cannot work."""
    text = SPARK_IBV_DEVINFO.read_text().replace("PORT_ACTIVE (4)", "PORT_DOWN (1)")
    assert [f.id for f in scan(text)] == ["link.ib_port_not_active"]
    ibstat = "CA 'rocep1s0f0'\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Disabled\n"
    assert [f.id for f in scan(ibstat)] == ["link.ib_port_not_active"]
    up = ibstat + "CA 'rocep1s0f1'\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n"
    assert scan(up) == []


def test_nvls_cuda_failure_is_named_once():
    """NCCL's NVLS transport's CUDA failure is the NVLS entry's, not also the generic CUDA one."""
    assert [f.id for f in scan((SAMPLES / "nccl_nvls_cuda_failure_invalid_argument.log").read_text())] == [
        "nccl.nvls_failed"
    ]
