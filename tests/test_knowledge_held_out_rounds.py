"""The failure table against the held-out rounds in one form (round 4 onwards): round4.tsv and round5.tsv, each
gathered by one engineer, then rounds collected in two blind parts, roundN_A.tsv (vLLM, NCCL/torch.distributed, Ray,
...) and roundN_B.tsv (Docker/toolkit, CUDA/driver, Hub, links, ...), all with must-not-name lines. Each file's header
tells how it was collected and every score it was given, blind or not. The form and the scorer are in
tests/held_out.py."""

import pytest

from spark_tui.knowledge import scan
from tests.held_out import Round, label_ids, page_side, well_formed
from tests.helpers import DATA

# The family a `new:` label (a kind the table had no entry for) counts in.
NEW_KINDS = {
    "new:etcd_unreachable": "vllm",
    "new:config_missing_model_type": "hub",
    "new:ray_multiple_instances": "ray",
    "new:ray_monitor_crashed": "ray",
    "new:vllm_wrapper_start_failed": "vllm",
    "new:exception_rewrap_failed": "vllm",
    "new:launcher_mod_patch_failed": "vllm",
    "new:reasoning_parser_token_invalid": "vllm",
    "new:ray_fractional_resource": "ray",
    "new:ray_start_invalid_option": "ray",
    "new:rdma_cq_create_failed": "link",
    "new:rdma_post_send_failed": "link",
    "new:ucx_gpu_lane_unavailable": "link",
    "new:kernel_dynamic_shared_memory_over_gpu_limit": "cuda",
    "new:gpu_rdma_needs_dmabuf_or_peermem": "link",
    "new:ray_start_empty_node_ip": "ray",
    "new:app_vllm_import_failed": "vllm",
    "new:openai_sdk_unexpected_kwarg": "vllm",
    "new:sglang_lmcache_committed_kv_freed": "vllm",
    "new:iommu_io_page_fault": "system",
    "new:ollama_no_compatible_gpu": "vllm",
    "new:litellm_provider_not_set": "vllm",
    "new:hf_config_attribute_missing": "hub",
    "new:pynccl_communicator_init_failed": "nccl",
    "new:ray_autoscaler_node_launch_failed": "ray",
    "new:dify_credentials_validation_failed": "vllm",
    "new:cline_invalid_api_response": "vllm",
    "new:skypilot_resources_unavailable": "ray",
    "new:k8s_gpu_unschedulable": "docker",
    "new:k8s_gpu_allocation_failed": "docker",
    "new:runtime_tensor_size_mismatch": "vllm",
    "new:vllm_worker_method_failed": "vllm",
    "new:link_duplex_unknown": "link",
    "new:ext4_fs_error": "system",
    "new:containerd_shim_in_current_directory": "docker",
    "new:k8s_container_name_reserved": "docker",
    "new:kuberay_operator_panic": "ray",
    "new:llamacpp_layer_device_mismatch": "vllm",
    "new:lmdeploy_param_without_device": "vllm",
    "new:localai_backend_died": "vllm",
    "new:nccl_cuda_ipc_open_failed": "nccl",
    "new:ollama_format_json_schema_unsupported": "vllm",
    "new:ompi_pml_no_component": "nccl",
    "new:outlines_version_mismatch": "vllm",
    "new:ragflow_rerank_provider_not_implemented": "vllm",
    "new:ray_remote_node_unreachable": "ray",
    "new:ray_up_head_node_failed": "ray",
    "new:rxe_send_ack_failed": "link",
    "new:skypilot_cpu_request_none": "docker",
    "new:skypilot_fetch_cluster_info_failed": "docker",
    "new:skypilot_k8s_pod_start_timeout": "docker",
    "new:skypilot_runtime_setup_failed": "docker",
    "new:skyserve_no_ready_replicas": "docker",
    "new:ssh_host_key_verification_failed": "system",
    "new:ssh_permission_denied": "system",
    "new:swift_grpo_vllm_device_map": "vllm",
    "new:trt_input_outside_optimization_profile": "vllm",
    "new:vllm_bnb_prequantized_unsupported": "vllm",
    "new:xinference_model_actor_out_of_memory": "vllm",
    "new:app_provider_empty_response": "vllm",
    "new:app_upstream_bad_gateway": "vllm",
    "new:apt_signed_by_conflict": "system",
    "new:boot_root_device_timeout": "system",
    "new:containerd_runtime_type_missing": "docker",
    "new:ctk_cdi_invalid_discovery_mode": "docker",
    "new:flashmla_kernel_assert": "vllm",
    "new:kubectl_flags_before_plugin_name": "docker",
    "new:localai_backend_load_canceled": "vllm",
    "new:localai_backend_unimplemented": "vllm",
    "new:nccl_tests_wrong_results": "nccl",
    "new:nvidia_container_runtime_failed": "docker",
    "new:openai_response_null_choices": "vllm",
    "new:ray_dashboard_node_stats_failed": "ray",
    "new:ray_object_pull_failed": "ray",
    "new:ray_serve_health_check_timeout": "ray",
    "new:request_messages_empty": "vllm",
    "new:toolkit_containerd_config_version_unsupported": "docker",
    "new:trt_engine_build_failed": "vllm",
    "new:trtllm_executor_worker_failed": "vllm",
    "new:vllm_dp_ray_node_ip_keys_ambiguous": "vllm",
    "new:dcgm_profiling_module_failed": "driver",
    "new:git_commit_not_in_repo": "system",
    "new:lemonade_llama_server_start_failed": "vllm",
    "new:microk8s_addon_unavailable_arm64": "docker",
    "new:mooncake_rnic_marked_inactive": "link",
    "new:nixl_ucx_backend_unavailable": "vllm",
    "new:nvidia_module_in_use": "driver",
    "new:p2p_nccl_http_port_missing": "vllm",
    "new:p2p_nccl_request_id_without_address": "vllm",
    "new:pcie_aer_uncorrectable": "system",
    "new:ragflow_rerank_reply_unreadable": "vllm",
    "new:ray_internal_kv_get_failed": "ray",
    "new:ray_job_agent_unavailable": "ray",
    "new:ray_serve_request_failed": "ray",
    "new:sglang_global_server_args_unset": "vllm",
    "new:trtllm_serve_mm_data_not_awaited": "vllm",
    "new:trtllm_windows_engine_build_abort": "vllm",
    "new:upstream_system_messages_refused": "vllm",
    "new:vllm_kv_cache_layer_keyerror": "vllm",
    "new:vllm_lora_not_enabled_multistep": "vllm",
    "new:vllm_ray_current_node_no_gpu": "vllm",
    "new:vllm_v0_scheduler_expected_running_sequences": "vllm",
    "new:vllm_worker_execute_method_failed": "vllm",
    "new:xinference_model_load_failed": "vllm",
    # round 26 (session 28)
    "new:ctk_wsl_dxcore_init_failed": "docker",
    "new:kata_shim_grpc_closed": "docker",
    "new:lmstudio_model_load_exit_code": "vllm",
    "new:lmstudio_runtime_exited_unhealthy": "vllm",
    "new:ray_train_worker_group_start_timeout": "ray",
    "new:shell_given_binary_as_script": "docker",
    "new:transformers_lacks_model_class": "hub",
    "new:vllm_score_empty_tensor_list": "vllm",
    "new:vllm_video_frames_short": "vllm",
    "new:vllm_workspace_locked_alloc": "vllm",
    # round 27 (session 29)
    "new:llamacpp_vocab_load_failed": "vllm",
    "new:rotary_positions_token_count_mismatch": "vllm",
    "new:torch_dynamo_config_option_unknown": "cuda",
    "new:gpu_too_old_for_pytorch": "cuda",
    "new:api_status_408_request_timeout": "vllm",
    "new:nvidia_peermem_invalid_context": "link",
    "new:k8s_api_kind_not_served": "docker",
    "new:podman_machine_vm_start_failed": "docker",
    "new:containerd_unpack_platform_missing": "docker",
    "new:image_content_not_found": "docker",
    "new:agent_gateway_websocket_closed": "vllm",
    "new:sandbox_user_switch_not_permitted": "docker",
    "new:node_network_interfaces_denied_in_sandbox": "docker",
    "new:dynamo_model_name_invalid": "vllm",
    "new:llamacpp_kshift_unsupported": "vllm",
    "new:gguf_tensor_type_unsupported": "vllm",
    "new:metal_gpu_out_of_memory": "cuda",
    "new:proxy_upstream_connection_refused": "vllm",
    "new:checkpoint_weight_missing": "vllm",
    "new:serving_backend_undetermined": "vllm",
    "new:mooncake_store_put_failed": "link",
    "new:ucc_no_memory_component": "link",
    "new:nccl_sharp_job_failed": "nccl",
    "new:exec_target_is_directory": "docker",
    "new:container_no_command": "docker",
    "new:gpu_monitor_query_field_unsupported": "driver",
    "new:containerd_oci_hook_template_error": "docker",
    "new:nvenc_library_missing_in_container": "docker",
    "new:cdi_spec_generation_failed": "docker",
    "new:device_memory_limit_on_unified_memory": "cuda",
    "new:client_sdk_unexpected_kwarg": "vllm",
    "new:cloud_metrics_permission_denied": "vllm",
    "new:cuda_stream_capture_invalidated": "cuda",
    "new:dynamo_etcd_unreachable": "vllm",
    "new:gpu_reset_not_supported": "driver",
    "new:llamacpp_gguf_metadata_type_invalid": "vllm",
    "new:mlx_metallib_unsupported_os": "cuda",
    "new:model_proxy_health_check_timeout": "vllm",
    "new:nccl_topology_attribute_missing": "nccl",
    "new:package_repo_host_unresolved": "system",
    "new:ray_node_health_check_failed": "ray",
    "new:ucx_invalid_active_speed": "link",
    "new:xpu_level_zero_out_of_resources": "cuda",
    "new:cuda_headers_lack_identifier": "cuda",
    "new:imex_memory_reference_failed": "docker",
    "new:llamacpp_decode_step_exception": "vllm",
    "new:llamacpp_rpc_version_mismatch": "vllm",
    "new:sglang_committed_kv_already_freed": "vllm",
    "new:sglang_router_worker_connect_failed": "vllm",
    "new:trtllm_internal_assertion": "vllm",
    "new:vllm_import_shadowed_by_local_source": "vllm",
    "new:vllm_omni_stage_request_failed": "vllm",
    "new:accelerate_rtx4000_p2p_refused": "nccl",
    "new:fabric_netplan_rolled_back": "link",
    "new:fabricmanager_local_fm_not_ready": "cuda",
    "new:hub_download_access_denied": "hub",
    "new:kai_gpu_reservation_pod_not_allocated": "docker",
    "new:lmstudio_resource_snapshot_failed": "vllm",
    "new:mooncake_endpoint_connect_failed": "link",
    "new:mooncake_transport_connect_failed": "link",
    "new:mps_server_fatal_exception": "cuda",
    "new:npu_stream_sync_failed": "cuda",
    "new:ollama_server_crash_respawn": "vllm",
    "new:proxy_no_provider_credentials": "vllm",
    "new:rdma_sriov_vf_config_failed": "link",
    "new:torch_built_without_nccl": "nccl",
    "new:torch_no_backend_for_accelerator": "nccl",
    "new:uva_unavailable": "cuda",
    # round 32 (session 34)
    "new:cdi_spec_version_unsupported": "docker",
    "new:dynamo_no_worker_instances": "vllm",
    "new:genai_engine_plugin_not_installed": "vllm",
    "new:hf_processor_apply_failed": "vllm",
    "new:mpi_init_failed": "nccl",
    "new:qemu_user_emulation_crash": "docker",
    "new:rootless_detached_netns_mount_denied": "docker",
    # round 33 (session 35)
    "new:app_model_config_lacks_image_input": "vllm",
    "new:chat_template_file_not_found": "vllm",
    "new:dcgm_watch_fields_bad_parameter": "cuda",
    "new:deepspeed_pdsh_ssh_args_append_unset": "nccl",
    "new:dynamo_no_worker_instances_for_endpoint": "vllm",
    "new:embedding_dimension_mismatch": "vllm",
    "new:gpustack_backend_package_missing_on_server": "vllm",
    "new:helm_chart_fetch_unauthorized": "docker",
    "new:mlx_stream_used_from_other_thread": "vllm",
    "new:nvshmem_rdma_device_cannot_use_gpu_memory": "link",
    "new:systemd_mount_failed": "system",
    "new:tokenizer_input_not_text": "hub",
    "new:tts_model_no_audio_output": "vllm",
    "new:ucx_device_mem_list_invalid_memh": "link",
    "new:volcano_queue_quota_insufficient": "docker",
    # round 34 (session 36)
    "new:jax_task_reconnected_new_incarnation": "nccl",
    "new:k8s_namespace_not_ready": "docker",
    "new:nvidia_drm_memory_pages_failed": "cuda",
    "new:ray_serve_replica_slow_init": "ray",
    "new:rdma_cq_create_unsupported": "link",
    "new:sglang_router_worker_health_rpc_failed": "vllm",
    "new:slurm_ray_worker_launch_died": "ray",
    "new:vllm_memory_probe_without_nvml": "vllm",
    "new:xla_clique_rendezvous_stuck": "nccl",
    # round 35 (session 37)
    "new:bnb_model_to_unsupported": "hub",
    "new:gpu_operator_kernel_version_unknown": "docker",
    "new:hccl_one_sided_get_failed": "link",
    "new:helm_resource_already_exists": "docker",
    "new:horovod_shut_down": "nccl",
    "new:ib_smp_query_timeout": "link",
    "new:jax_coordination_barrier_timeout": "nccl",
    "new:llamacpp_model_tensor_missing": "vllm",
    "new:llamacpp_python_library_missing": "vllm",
    "new:llmd_sidecar_decoder_unreachable": "vllm",
    "new:model_param_unsupported": "vllm",
    "new:sglang_weight_update_failed": "vllm",
    "new:systemd_not_pid1": "system",
    "new:torch_nccl_not_built": "nccl",
    "new:triton_python_model_import_failed": "vllm",
    "new:triton_python_stub_unhealthy": "vllm",
    # round 36 (session 38)
    "new:firmware_capsule_update_failed": "driver",
    "new:hccl_link_establish_failed": "nccl",
    "new:inductor_cpp_compile_error": "cuda",
    "new:llamacpp_unknown_argument": "vllm",
    "new:lmstudio_cli_binary_locked": "vllm",
    "new:lmstudio_server_config_missing": "vllm",
    "new:lmstudio_server_verify_failed": "vllm",
    "new:model_launcher_health_endpoint_missing": "vllm",
    "new:ofed_kernel_module_load_failed": "link",
    "new:server_port_listen_permission_denied": "vllm",
    "new:sglang_router_no_worker_urls": "vllm",
    "new:vllm_build_kernels_skipped_for_arch": "cuda",
    "new:vllm_omni_stage_config_conflict": "vllm",
    "new:xinference_worker_supervisor_unreachable": "vllm",
}
WHOLE = ("round4", "round5")  # one file a round
PARTS = (
    "round6_A",
    "round6_B",
    "round7_A",
    "round7_B",
    "round8_A",
    "round8_B",
    "round9_A",
    "round9_B",
    "round10_A",
    "round10_B",
    "round11_A",
    "round11_B",
    "round12_A",
    "round12_B",
    "round13_A",
    "round13_B",
    "round14_A",
    "round14_B",
    "round15_A",
    "round15_B",
    "round16_A",
    "round16_B",
    "round17_A",
    "round17_B",
    "round17_C",
    "round17_D",
    "round18_A",
    "round18_B",
    "round18_C",
    "round18_D",
    "round19_A",
    "round19_B",
    "round20_A",
    "round20_B",
    "round21_A",
    "round21_B",
    "round22_A",
    "round22_B",
    "round22_C",
    "round22_D",
    "round23_A",
    "round23_B",
    "round23_C",
    "round23_D",
    "round24_A",
    "round24_B",
    "round24_C",
    "round24_D",
    "round25_A",
    "round25_B",
    "round25_C",
    "round25_D",
    "round25_E",
    "round26_A",
    "round26_B",
    "round26_C",
    "round26_D",
    "round26_P",
    "round27_A",
    "round27_B",
    "round27_C",
    "round27_D",
    "round27_E",
    "round28_A",
    "round28_B",
    "round28_C",
    "round28_D",
    "round28_E",
    "round29_A",
    "round29_B",
    "round29_C",
    "round29_D",
    "round30_A",
    "round30_B",
    "round30_C",
    "round30_D",
    "round31_A",
    "round31_B",
    "round31_C",
    "round31_D",
    "round32_A",
    "round32_B",
    "round32_C",
    "round32_D",
    "round33_A",
    "round33_B",
    "round33_C",
    "round33_D",
    "round34_A",
    "round34_B",
    "round34_C",
    "round34_D",
    "round35_A",
    "round35_B",
    "round35_C",
    "round35_D",
    "round36_A",
    "round36_B",
    "round36_C",
    "round36_D",
)
ROUNDS = {name: Round(name, NEW_KINDS) for name in WHOLE + PARTS}

# Still missed (source -> its label), per part: a fix shows up as a failing test until it is taken off this list.
GH = "https://github.com/"
MISSED = {
    "round4": {
        GH + "vllm-project/vllm/issues/4315": "vllm.unknown_model_type",
        GH + "aistudynow/Comfyui-HunyuanFoley/issues/6": "hub.cannot_load_model",
        # the same torch line ("No CUDA GPUs are available") was labelled vllm.no_device here and cuda.no_cuda_device
        # by two later collectors (round 7 A); session 12 names torch's own lines in the CUDA family, whatever runs them
        GH + "ray-project/ray/issues/51193": "vllm.no_device",
    },
    # round 5's five blind misses were fixed post-hoc from other threads' wordings (its header says which)
    "round5": {},
    "round6_A": {
        GH + "pytorch/pytorch/issues/23363": "nccl.system_error",
        GH + "ray-project/ray/issues/18979": "-",
    },
    "round6_B": {},
    "round7_A": {
        GH + "facebookresearch/bitsandbytes/issues/34": "hub.unreachable",
        GH + "lamikr/rocm_sdk_builder/issues/244": "hub.repo_not_found",
        GH + "vllm-project/vllm/issues/8855": "vllm.rope_scaling_invalid",
        GH + "vllm-project/vllm/issues/18450": "vllm.unknown_model_type",
    },
    "round7_B": {
        GH + "ray-project/ray/issues/15389": "ray.gcs_unreachable",
        GH + "rwth-i6/returnn/issues/1486": "driver.gpu_lost",
    },
    "round8_A": {
        GH + "huggingface/text-generation-inference/issues/814": "tgi.shard_crashed",
        GH + "gpustack/gpustack/issues/5779": "vllm.tp_gpus_per_node_divisible",
    },
    "round8_B": {
        GH + "tmylla/NER_ZH/issues/1": "hub.bad_repo_id",
    },
    "round9_A": {
        GH + "huggingface/text-generation-inference/issues/1451": "tgi.argument_invalid",
    },
    "round9_B": {
        GH + "tdaudi/HashKitty/issues/18": "docker.manifest_unknown",
        GH + "huggingface/huggingface_hub/issues/1080": "hub.file_not_found",
        GH + "ZiqiaoPeng/SyncTalk/issues/162": "hub.cannot_load_model",
        GH + "Mellanox/network-operator/issues/249": "link.ib_port_logical_down",
    },
    "round10_A": {},
    "round10_B": {
        GH + "CASIA-LMC-Lab/FiLo/issues/10": "hub.cannot_load_model",
        GH + "Sygil-Dev/sygil-webui/issues/1623": "hub.gated",
    },
    "round11_A": {},
    "round11_B": {
        GH + "kateyliu/ImagePseudo/issues/1": "hub.unreachable",
        GH + "Gourieff/ComfyUI-ReActor/issues/144": "hub.unreachable",
    },
    "round12_A": {},
    "round12_B": {},
    "round13_A": {
        GH + "sgl-project/sglang/issues/165": "sglang.req_slots_oom",
        GH + "OpenGVLab/InternVL/issues/1173": "vllm.chat_template_error",
    },
    "round13_B": {},
    "round14_A": {
        GH + "ray-project/ray/issues/21847": "-",
        GH + "sgl-project/sglang/issues/8296": "cuda.illegal_memory_access,nccl.watchdog_abort",
        GH + "sgl-project/sglang/issues/3424": "nccl.watchdog_timeout,nccl.watchdog_abort",
        GH + "skypilot-org/skypilot/issues/2054": "ray.dashboard_failed,ray.raylet_terminated",
    },
    "round14_B": {
        GH + "huggingface/transformers/issues/29283": "hub.not_authorized",
        GH + "NVIDIA/nvidia-docker/issues/1012": "docker.gpu_detection_failed",
    },
    "round15_A": {
        GH + "ray-project/kuberay/issues/1563": "ray.node_start_timeout",
        GH + "ai-dynamo/dynamo/issues/851": "new:etcd_unreachable",
    },
    "round15_B": {
        GH + "huggingface/autotrain-advanced/issues/911": "hub.rate_limited",
        GH + "pdbear/syno_nvidia_gpu_driver/issues/22": "driver.gpu_lost",
        GH + "NVIDIA/dcgm-exporter/issues/604": "driver.gpu_lost",
    },
    "round16_A": {},
    "round16_B": {
        GH + "OpenBMB/VoxCPM/issues/295": "new:config_missing_model_type",
        GH + "LambdaLabsML/lambda-diffusers/issues/16": "hub.revision_not_found",
    },
    "round17_A": {
        GH + "ray-project/ray/issues/25639": "new:ray_multiple_instances",
        GH + "ray-project/ray/issues/10383": "new:ray_monitor_crashed",
    },
    "round17_B": {},
    "round17_C": {
        GH + "modelscope/ms-swift/issues/8043": "nccl.connect_failed",
        GH + "ray-project/ray/issues/15960": "ray.system_error",
        GH + "llumnix-project/llumnix-ray/issues/118": "ray.unschedulable_resources",
        GH + "instructlab/instructlab/issues/3466": "new:vllm_wrapper_start_failed",
        GH + "vllm-project/vllm/issues/3771": "torch.rendezvous_timeout",
    },
    "round17_D": {},
    "round18_A": {
        GH + "eugr/spark-vllm-docker/issues/328": "new:launcher_mod_patch_failed",
        GH + "sgl-project/sglang/issues/24843": "new:reasoning_parser_token_invalid",
        GH + "ROCm/vllm/issues/696": "vllm.weight_shape_mismatch",
        GH + "xorbitsai/inference/issues/3390": "new:exception_rewrap_failed",
        GH + "SystemPanic/flashinfer-windows/issues/6": "vllm.flashinfer_jit_failed",
        GH + "runpod-workers/worker-vllm/issues/199": "docker.container_crashed",
    },
    "round18_B": {
        GH + "skypilot-org/skypilot/issues/5315": "new:ray_start_invalid_option",
        GH + "ray-project/ray/issues/37241": "new:ray_fractional_resource",
        GH + "ray-project/ray/issues/10585": "system.too_many_open_files",
        GH + "sgl-project/sglang/pull/27894": "new:rdma_cq_create_failed",
        GH + "PaddlePaddle/FastDeploy/pull/8091": "new:rdma_post_send_failed",
        GH + "ai-dynamo/nixl/issues/1110": "new:ucx_gpu_lane_unavailable",
        GH + "LittlePey/SFD/issues/34": "vllm.port_in_use",
    },
    "round18_C": {},
    "round18_D": {
        GH + "mikesvoboda/nemotron-v3-home-security-intelligence/issues/1386": "hub.cache_not_writable",
    },
    # session 22, post-hoc: TGI's router line, a feature needing the V2 runner, SGLang's split count, llama-server's
    # filled context named; TileLang's shared-memory refusal has an entry now, but the row's label stays `new:`
    "round19_A": {
        GH + "QwenLM/FlashQLA/issues/4": "new:kernel_dynamic_shared_memory_over_gpu_limit",
    },
    # session 22, post-hoc: the heartbeat's store read, Ray's bare RuntimeEnvSetupError (`exceptions:`), abseil's
    # RAW signal 11, the kernel's unsigned module, a --local-dir lock named; Mooncake's line is named as
    # link.rdma_register_memory_failed, whose meaning it is, against its `new:` label
    "round19_B": {
        GH + "kvcache-ai/Mooncake/pull/3538": "new:gpu_rdma_needs_dmabuf_or_peermem",
        GH + "spark-arena/sparkrun/issues/132": "new:ray_start_empty_node_ip",
        GH + "gpustack/gpustack/issues/5014": "docker.shm_exhausted",
    },
    # session 22, post-hoc: the driver line and hf_transfer's ValueError cut short, TGI's gated wording cut, GPT-2's
    # `h.N` weight names, RAGFlow's CONNECTION_ERROR named; LMDeploy's AutoConfig warning calms vllm.unknown_model_type
    "round20_A": {
        GH + "1038lab/ComfyUI-QwenVL/issues/28": "vllm.quantization_unsupported",
        GH + "opendatalab/MinerU/issues/4920": "new:app_vllm_import_failed",
        GH + "infiniflow/ragflow/issues/11906": "new:openai_sdk_unexpected_kwarg",
        GH + "QwenLM/Qwen3/issues/998": "vllm.chat_template_error",
        GH + "sgl-project/sglang/issues/5032": "sglang.unrecognized_arguments",
        GH + "LMCache/LMCache/issues/2084": "new:sglang_lmcache_committed_kv_freed",
    },
    # session 22, post-hoc: Ollama's `no nvidia devices detected` named cuda.no_cuda_device
    "round20_B": {
        GH + "AbdBarho/stable-diffusion-webui-docker/issues/296": "-",
        GH + "ggml-org/llama.cpp/issues/21908": "new:iommu_io_page_fault",
        GH + "ollama/ollama/issues/17080": "ollama.runner_terminated",
        GH + "zhaohb/ollama_ov/issues/6": "new:ollama_no_compatible_gpu",
    },
    # session 23, post-hoc: the KV cache check without `The `, harmony's vocab error alone,
    # a dotted request field and vLLM's chat_utils log of extra_forbidden, a quantization refusal and the roles check cut,
    # torch 2.8+'s (CC) wording below Blackwell, httpx's ConnectError in an app's log; socket.timeout, gRPC's fd limit (no
    # GCS outage), the hung task's stack header, an Xid 31 retold, GDR disabled without its index. Left by earlier
    # decisions: none (NCCL's Cuda failure 'operation not supported': a training row labelled it nccl.cuda_error; named since
    # session 24). post-hoc, session 24 t24b: OpenAI's `does not exist or you do not have access to it` is
    # vllm.served_model_not_found whichever server said it (the README's rule; its not_recognised sample moved to the samples)
    "round21_A": {
        GH + "xusenlinzy/api-for-open-llm/issues/206": "vllm.api_route_not_found",
        GH + "openinterpreter/openinterpreter/issues/1406": "new:litellm_provider_not_set",
        GH + "apple/ml-fastvlm/issues/28": "new:hf_config_attribute_missing",
    },
    "round21_B": {
        GH + "ray-project/ray/issues/44832": "new:pynccl_communicator_init_failed",
        GH + "NVIDIA/Megatron-LM/issues/878": "docker.shm_exhausted",
        GH + "aws-samples/aws-do-eks/pull/50": "torch.gloo_no_address",
        GH + "ray-project/ray/pull/40894": "new:ray_autoscaler_node_launch_failed",
    },
    "round22_A": {
        GH + "MiniMax-AI/MiniMax-M2/issues/84": "hub.bad_repo_id",
        GH + "langgenius/dify/issues/20254": "new:dify_credentials_validation_failed",
        GH + "cline/cline/issues/10238": "new:cline_invalid_api_response",
    },
    "round22_B": {
        GH + "skypilot-org/skypilot/issues/2958": "new:skypilot_resources_unavailable",
        GH + "deepseek-ai/DeepEP/issues/106": "nccl.ib_completion_error",
        GH + "mattshma/bigdata/issues/108": "docker.gpu_not_in_container",
        GH + "NVIDIA/k8s-device-plugin/issues/430": "new:k8s_gpu_unschedulable",
        GH + "ray-project/kuberay/issues/1414": "new:k8s_gpu_allocation_failed",
        GH + "NVIDIA/k8s-device-plugin/issues/96": "new:k8s_gpu_unschedulable",
        GH + "jamesstringer90/Easy-GPU-PV/issues/276": "driver.nvml_lost_in_container",
    },
    "round22_C": {
        GH + "vllm-project/vllm-ascend/issues/5558": "new:runtime_tensor_size_mismatch",
        GH + "hiyouga/LlamaFactory/pull/3794": "vllm.lora_rank_too_large",
    },
    "round22_D": {
        GH + "ollama/ollama/issues/4342": "system.hung_task",
        GH + "vllm-project/vllm/issues/7772": "new:vllm_worker_method_failed",
        GH + "openwrt/openwrt/issues/14504": "new:link_duplex_unknown",
        GH + "sonic-net/sonic-buildimage/issues/23146": "new:ext4_fs_error",
        GH + "microsoft/SwinBERT/issues/30": "system.read_only_fs",
    },
    "round23_A": {
        GH + "ollama/ollama/issues/4794": "ollama.runner_terminated",
        GH + "mozilla-ai/llamafile/issues/730": "vllm.unsupported_architecture",
        GH + "gpustack/gpustack/issues/1624": "vllm.unsupported_architecture",
        GH + "ggml-org/llama.cpp/issues/27162": "new:llamacpp_layer_device_mismatch",
        GH + "xorbitsai/inference/issues/2210": "vllm.quantization_unsupported",
        GH + "InternLM/lmdeploy/issues/1422": "new:lmdeploy_param_without_device",
        GH + "mudler/LocalAI/issues/2692": "new:localai_backend_died",
        GH + "ggml-org/llama.cpp/issues/12038": "vllm.max_tokens_too_large",
        GH + "ollama/ollama/issues/4520": "ollama.registry_unreachable",
        GH + "unslothai/unsloth/issues/688": "new:vllm_bnb_prequantized_unsupported",
        GH + "NVIDIA/TensorRT-LLM/issues/214": "new:trt_input_outside_optimization_profile",
    },
    "round23_B": {
        GH + "langgenius/dify/issues/4904": "vllm.client_connection_error",
        GH + "infiniflow/ragflow/issues/5354": "new:ragflow_rerank_provider_not_implemented",
        GH + "MozerWang/Loong/issues/12": "new:outlines_version_mismatch",
        GH + "modelscope/ms-swift/issues/5592": "new:swift_grpo_vllm_device_map",
        GH + "huggingface/datasets/issues/7516": "hub.server_error",
        GH + "xorbitsai/inference/issues/912": "new:xinference_model_actor_out_of_memory",
        GH + "infiniflow/ragflow/issues/4074": "new:ollama_format_json_schema_unsupported",
    },
    "round23_C": {
        GH + "skypilot-org/skypilot/issues/908": "new:ray_up_head_node_failed",
        GH + "skypilot-org/skypilot/issues/618": "new:ray_up_head_node_failed",
        GH + "skypilot-org/skypilot/issues/7550": "new:skypilot_runtime_setup_failed",
        GH + "skypilot-org/skypilot/issues/3630": "new:skypilot_fetch_cluster_info_failed",
        GH + "ray-project/kuberay/issues/66": "new:kuberay_operator_panic",
        GH + "open-mpi/ompi/issues/9838": "new:ompi_pml_no_component",
        GH + "skypilot-org/skypilot/issues/8586": "new:skypilot_k8s_pod_start_timeout",
        GH + "ray-project/ray/issues/7242": "new:ray_remote_node_unreachable",
        GH + "MiaAI-Lab/DeepSeek-v4.1-Flash-DGX-Sparks/pull/10": "nccl.invalid_usage",
        GH + "skypilot-org/skypilot/issues/8128": "new:skyserve_no_ready_replicas",
        GH + "skypilot-org/skypilot/issues/7142": "new:skypilot_cpu_request_none",
        GH + "spdk/spdk/issues/1184": "new:rxe_send_ack_failed",
        GH + "horovod/horovod/issues/610": "new:nccl_cuda_ipc_open_failed",
        GH + "ray-project/kuberay/issues/1130": "new:k8s_container_name_reserved",
    },
    "round23_D": {
        GH + "AMDResearch/hpcfund/issues/64": "new:ssh_permission_denied",
        GH + "k3s-io/k3s/issues/6518": "new:containerd_shim_in_current_directory",
        GH + "microsoft/VirtualClient/pull/752": "new:ssh_host_key_verification_failed",
    },
    "round24_A": {
        GH + "vllm-project/vllm/pull/43998": "new:vllm_dp_ray_node_ip_keys_ambiguous",
        GH + "llm-d/llm-d/issues/394": "-",
        GH + "InternLM/lmdeploy/issues/1362": "vllm.no_cache_blocks",
        GH + "NVIDIA/TensorRT-LLM/issues/7706": "new:trtllm_executor_worker_failed",
        GH + "vllm-project/vllm/issues/50842": "new:flashmla_kernel_assert",
        GH + "vllm-project/vllm/issues/8912": "vllm.tool_parser_tokens_missing",
        GH + "mudler/LocalAI/issues/5048": "new:localai_backend_load_canceled",
        GH + "mudler/LocalAI/issues/5314": "new:localai_backend_died",
        GH + "mudler/LocalAI/issues/800": "new:localai_backend_unimplemented",
        GH + "modelscope/dash-infer/issues/92": "new:trt_engine_build_failed",
    },
    "round24_B": {
        GH + "Open-Historia/open-historia/issues/158": "new:app_upstream_bad_gateway",
        GH + "infiniflow/ragflow/issues/3062": "-",
        GH + "sgl-project/sglang/issues/2040": "-",
        GH + "lldacing/ComfyUI_PuLID_Flux_ll/issues/30": "hub.invalid_token",
        GH + "danny-avila/LibreChat/issues/10408": "new:request_messages_empty",
        GH + "langchain-ai/langchain/pull/32314": "new:openai_response_null_choices",
        GH + "laurent22/joplin/issues/16596": "new:app_provider_empty_response",
        GH + "danny-avila/LibreChat/issues/7346": "new:request_messages_empty",
    },
    "round24_C": {
        GH + "ray-project/ray/issues/54070": "new:ray_serve_health_check_timeout",
        GH + "ray-project/ray/issues/23788": "new:ray_dashboard_node_stats_failed",
        GH + "kvcache-ai/Mooncake/issues/960": "link.mooncake_no_rdma_device",
        GH + "ray-project/ray/issues/32046": "new:ray_object_pull_failed",
        GH + "NVIDIA/nccl/issues/1184": "new:nccl_tests_wrong_results",
    },
    "round24_D": {
        GH + "NVIDIA/nvidia-container-toolkit/issues/34": "new:nvidia_container_runtime_failed",
        GH + "graham33/nixos-dgx-spark/issues/2": "new:boot_root_device_timeout",
        GH + "NVIDIA/nvidia-container-toolkit/issues/1376": "new:ctk_cdi_invalid_discovery_mode",
        GH + "NVIDIA/gpu-operator/issues/2060": "new:toolkit_containerd_config_version_unsupported",
        GH + "NVIDIA/nvidia-container-toolkit/issues/1956": "new:containerd_runtime_type_missing",
        GH + "llm-d/llm-d-benchmark/issues/668": "new:kubectl_flags_before_plugin_name",
        GH + "NVIDIA/nvidia-docker/issues/1632": "new:apt_signed_by_conflict",
    },
    "round25_A": {
        GH + "NVIDIA/TensorRT-LLM/issues/5648": "new:trtllm_serve_mm_data_not_awaited",
        GH + "lemonade-sdk/lemonade/issues/1462": "new:lemonade_llama_server_start_failed",
        GH + "vllm-project/vllm/issues/13394": "new:vllm_lora_not_enabled_multistep",
        GH + "vllm-project/vllm/issues/44062": "new:p2p_nccl_request_id_without_address",
        GH + "vllm-project/vllm/pull/24720": "new:p2p_nccl_http_port_missing",
        GH + "xorbitsai/inference/issues/3020": "new:xinference_model_load_failed",
        GH + "sgl-project/sglang/pull/12904": "new:sglang_global_server_args_unset",
        GH + "vllm-project/vllm/issues/8016": "new:vllm_v0_scheduler_expected_running_sequences",
        GH + "sgl-project/sglang/issues/2520": "vllm.config_attribute_missing",
        GH + "NVIDIA/TensorRT-LLM/issues/2540": "new:trtllm_windows_engine_build_abort",
    },
    "round25_B": {
        GH + "infiniflow/ragflow/issues/8156": "new:ragflow_rerank_reply_unreadable",
        GH + "QuantumNous/new-api/issues/2484": "vllm.request_field_missing",
        GH + "justlovemaki/AIClient2API/issues/632": "new:upstream_system_messages_refused",
        GH + "RuBP17/AlphaDou/issues/6": "cuda.cudnn_error",
    },
    "round25_C": {
        GH + "NVIDIA/nccl/issues/1170": "nccl.ib_completion_error",
        GH + "ray-project/ray/issues/46702": "new:ray_serve_request_failed",
        GH + "OpenRLHF/OpenRLHF/issues/1236": "new:ray_job_agent_unavailable",
        GH + "sgl-project/sglang/issues/8324": "new:mooncake_rnic_marked_inactive",
        GH + "vllm-project/vllm/issues/29530": "new:nixl_ucx_backend_unavailable",
        GH + "vllm-project/vllm/issues/12614": "new:vllm_ray_current_node_no_gpu",
        GH + "OpenRLHF/OpenRLHF/pull/536": "new:vllm_worker_execute_method_failed",
        GH + "ray-project/ray/pull/22528": "new:ray_internal_kv_get_failed",
    },
    "round25_D": {
        GH + "NVIDIA/gpu-operator/pull/2168": "docker.oci_runtime_missing",
        GH + "NVIDIA/cuda-samples/issues/286": "new:nvidia_module_in_use",
        GH + "tinygrad/open-gpu-kernel-modules/pull/20": "new:nvidia_module_in_use",
        GH + "NVIDIA/dcgm-exporter/issues/148": "new:dcgm_profiling_module_failed",
        GH + "NVIDIA/dcgm-exporter/issues/330": "new:dcgm_profiling_module_failed",
        GH + "Project-HAMi/HAMi/issues/1044": "driver.nvml_no_permission",
        GH + "eclipse-ditto/ditto/issues/1980": "docker.registry_timeout",
        GH + "Skyvern-AI/skyvern/issues/2210": "docker.registry_connection_dropped",
    },
    "round25_E": {
        GH + "christopherowen/spark-vllm-mxfp4-docker/issues/4": "new:git_commit_not_in_repo",
        GH + "MiaAI-Lab/DeepSeek-v4-Flash-DSpark-2x-DGX-Spark/issues/146": "new:pcie_aer_uncorrectable",
        GH + "vllm-project/vllm/issues/36640": "new:vllm_kv_cache_layer_keyerror",
        GH + "defilantech/LLMKube/pull/718": "new:microk8s_addon_unavailable_arm64",
    },
    "round26_A": {
        GH + "QwenLM/Qwen3-VL/issues/1770": "new:vllm_video_frames_short",
        GH + "vllm-project/vllm/issues/10738": "new:vllm_score_empty_tensor_list",
        GH + "vllm-project/vllm/issues/42808": "new:vllm_workspace_locked_alloc",
        GH + "vllm-project/vllm/issues/42544": "new:vllm_workspace_locked_alloc",
        GH + "lmstudio-ai/lmstudio-bug-tracker/issues/2190": "new:lmstudio_runtime_exited_unhealthy",
        GH + "lmstudio-ai/lmstudio-bug-tracker/issues/1950": "new:lmstudio_model_load_exit_code",
    },
    "round26_B": {
        GH + "Granddyser/qwen3-vl-comfy-ui/issues/2": "new:transformers_lacks_model_class",
    },
    "round26_C": {
        # ray.kill's death cause is left unnamed on purpose (s23d_ray.tsv: an actor killed on purpose, no failure)
        GH + "RLinf/RLinf/issues/728": "ray.actor_died",
        GH + "ray-project/ray/pull/60376": "new:ray_train_worker_group_start_timeout",
    },
    "round26_D": {
        GH + "NVIDIA/nvidia-container-toolkit/issues/452": "new:ctk_wsl_dxcore_init_failed",
        GH + "NVIDIA/gpu-operator/issues/1356": "new:kata_shim_grpc_closed",
        GH
        + "AEON-7/Qwen3.6-27B-AEON-Ultimate-Uncensored-DFlash/issues/12": "new:shell_given_binary_as_script",
    },
    "round26_P": {
        "https://dcpma.mintlify.app/ollama-operations": "system.read_timed_out",
    },
    "round27_A": {
        GH + "vllm-project/aibrix/issues/1070": "vllm.app_reply_not_json",
        GH + "lmstudio-ai/lmstudio-bug-tracker/issues/576": "new:llamacpp_vocab_load_failed",
        GH + "vllm-project/vllm/issues/18266": "new:rotary_positions_token_count_mismatch",
    },
    "round27_B": {
        GH + "kijai/ComfyUI-WanVideoWrapper/issues/366": "new:torch_dynamo_config_option_unknown",
        GH + "SakanaAI/AI-Scientist-v2/issues/4": "new:api_status_408_request_timeout",
    },
    "round27_C": {
        GH + "NVIDIA/nccl/issues/1474": "new:nvidia_peermem_invalid_context",
    },
    "round27_D": {
        GH + "duixcom/Duix-Avatar/issues/42": "docker.gpu_runtime_missing",
        GH + "canonical/microk8s-core-addons/issues/114": "new:k8s_api_kind_not_served",
        GH + "dusty-nv/jetson-containers/issues/772": "docker.gpu_mount_conflict",
        GH + "podman-container-tools/podman/issues/21842": "new:podman_machine_vm_start_failed",
        GH + "containerd/containerd/issues/9980": "new:containerd_unpack_platform_missing",
        GH + "Mcrich23/Container-Compose/issues/44": "new:image_content_not_found",
        GH + "NVIDIA/cloudai/issues/720": "docker.executable_not_found",
    },
    "round27_E": {
        GH + "NVIDIA/NemoClaw/issues/3568": "vllm.client_connection_error",
        GH + "NVIDIA/NemoClaw/issues/4616": "new:agent_gateway_websocket_closed",
        GH + "NVIDIA/NemoClaw/issues/1028": "new:sandbox_user_switch_not_permitted",
        GH + "NVIDIA/NemoClaw/issues/2456": "new:node_network_interfaces_denied_in_sandbox",
    },
    "round28_A": {
        GH + "ai-dynamo/dynamo/issues/280": "new:dynamo_model_name_invalid",
        GH + "ikawrakow/ik_llama.cpp/issues/576": "new:llamacpp_kshift_unsupported",
        GH + "kvcache-ai/ktransformers/issues/832": "new:gguf_tensor_type_unsupported",
        GH + "jjang-ai/vmlx/issues/58": "new:metal_gpu_out_of_memory",
        GH + "ddalcu/mlx-serve/issues/44": "new:metal_gpu_out_of_memory",
        GH + "llm-d/llm-d-routing-sidecar/pull/40": "new:proxy_upstream_connection_refused",
        GH + "allenai/olmocr/issues/422": "vllm.unsupported_architecture",
        GH + "ModelCloud/GPTQModel/issues/328": "new:checkpoint_weight_missing",
        GH + "instructlab/instructlab/issues/1866": "new:serving_backend_undetermined",
    },
    "round28_B": {},
    "round28_C": {
        GH + "LMCache/LMCache/issues/1518": "new:mooncake_store_put_failed",
        GH + "openucx/ucc/issues/1174": "new:ucc_no_memory_component",
        GH + "NVIDIA/nccl/issues/1050": "new:nccl_sharp_job_failed",
    },
    "round28_D": {
        GH + "skypilot-org/skypilot/pull/3918": "docker.containerd_runtime_handler_missing",
        GH + "blakeblackshear/frigate/issues/6336": "new:exec_target_is_directory",
        GH + "opendatalab/LabelLLM/issues/50": "new:container_no_command",
        GH + "flashcatcloud/categraf/issues/1056": "new:gpu_monitor_query_field_unsupported",
        GH + "containerd/nerdctl/issues/4614": "new:containerd_oci_hook_template_error",
        GH + "jellyfin/jellyfin/issues/7570": "new:nvenc_library_missing_in_container",
        GH + "Azure/AgentBaker/pull/9150": "new:cdi_spec_generation_failed",
        GH + "kaito-project/kaito/issues/2326": "docker.k8s_gpu_not_advertised",
    },
    "round28_E": {
        GH + "noonghunna/club-3090/issues/828": "cuda.torch_stable_abi_call_failed",
        GH + "pytorch/TensorRT/issues/4068": "driver.nvml_lost_in_container",
        GH + "rapidsai/rapidsmpf/issues/1026": "new:device_memory_limit_on_unified_memory",
        GH + "eugr/spark-vllm-docker/issues/238": "vllm.api_version_mismatch",
    },
    "round29_A": {
        GH + "intel/llm-scaler/issues/348": "new:xpu_level_zero_out_of_resources",
        GH + "SciSharp/LLamaSharp/issues/860": "new:cuda_stream_capture_invalidated",
        GH + "apache/beam/pull/36966": "new:dynamo_etcd_unreachable",
        GH + "LostRuins/koboldcpp/issues/1852": "system.segfault",
        GH + "LostRuins/koboldcpp/issues/2404": "new:llamacpp_gguf_metadata_type_invalid",
        GH + "mostlygeek/llama-swap/issues/92": "new:model_proxy_health_check_timeout",
        GH + "janhq/jan/issues/8244": "llamacpp.router_upstream_failed",
        GH + "TheTom/vllm-swift/issues/10": "new:mlx_metallib_unsupported_os",
        GH + "noonghunna/club-3090/issues/58": "llamacpp.model_file_unreadable",
        GH + "containers/ramalama/issues/2570": "new:model_proxy_health_check_timeout",
    },
    "round29_B": {
        GH + "OpenHands/OpenHands/issues/8832": "llamacpp.model_loading",
        GH + "infiniflow/ragflow/issues/2784": "vllm.client_connection_error",
        GH + "infiniflow/ragflow/issues/12036": "new:client_sdk_unexpected_kwarg",
        GH + "CherryHQ/cherry-studio/issues/9606": "-",
        GH + "vllm-project/guidellm/issues/136": "new:cloud_metrics_permission_denied",
        GH + "SillyTavern/SillyTavern/issues/3048": "vllm.sampling_params_invalid",
    },
    "round29_C": {
        GH + "openucx/ucx/issues/10298": "new:ucx_invalid_active_speed",
        GH + "Mellanox/network-operator/issues/830": "new:package_repo_host_unresolved",
        GH + "aws/aws-ofi-nccl/issues/476": "new:nccl_topology_attribute_missing",
        "https://blog.gitcode.com/ab05ff14b83948cb161c34ff9d7be561.html": "new:ray_node_health_check_failed",
        "https://blog.gitcode.com/4f21c7a03debf13201459e7a77362f96.html": "link.mooncake_device_open_failed",
        "https://blog.gitcode.com/b636392226a3d4ec8bc1c236aa38cfcf.html": "new:nccl_topology_attribute_missing",
    },
    "round29_D": {
        GH + "NVIDIA/nccl/issues/1488": "nccl.cuda_error",
        GH + "NVIDIA/gpu-operator/issues/1606": "new:gpu_reset_not_supported",
        GH + "confidential-containers/cloud-api-adaptor/issues/2254": "docker.layer_failed",
    },
    "round30_A": {
        GH + "sgl-project/sglang/issues/28702": "new:sglang_committed_kv_already_freed",
        GH + "NetEase-Media/grps_trtllm/issues/6": "new:trtllm_internal_assertion",
        GH + "llm-d-incubation/llm-d-fast-model-actuation/issues/746": "vllm.cumem_allocator",
        GH + "likelovewant/ollama-for-amd/issues/72": "llamacpp.ggml_assert",
        GH + "xorbitsai/inference/issues/2126": "vllm.app_reply_not_json",
        GH + "vllm-project/vllm/issues/10926": "new:vllm_import_shadowed_by_local_source",
        GH + "ggml-org/llama.cpp/issues/26392": "new:llamacpp_rpc_version_mismatch",
        GH + "LMCache/LMCache/issues/1514": "vllm.lmcache_remote_backend_failed",
        GH + "TabbyML/tabby/issues/1666": "new:llamacpp_decode_step_exception",
        GH + "sgl-project/sglang/pull/11310": "new:sglang_router_worker_connect_failed",
        GH + "vllm-project/vllm-omni/issues/1476": "new:vllm_omni_stage_request_failed",
        GH + "NVIDIA/NemoClaw/issues/4658": "cuda.init_unknown_error",
    },
    "round30_B": {
        GH + "NVIDIA/CUDALibrarySamples/issues/298": "new:cuda_headers_lack_identifier",
    },
    "round30_C": {
        GH + "apache/brpc/issues/3202": "new:rdma_post_send_failed",
    },
    "round30_D": {
        GH + "NVIDIA/nvidia-container-toolkit/issues/82": "new:cdi_spec_generation_failed",
        GH + "kubernetes-sigs/dra-driver-nvidia-gpu/issues/948": "new:imex_memory_reference_failed",
        GH + "NVIDIA/NVSentinel/issues/1748": "-",
        GH + "bit-team/backintime/issues/2568": "system.filesystem_corrupted",
    },
    "round31_A": {
        GH + "InternLM/lmdeploy/issues/3514": "vllm.unknown_model_type",
        GH + "ollama/ollama/issues/3362": "new:ollama_server_crash_respawn",
        GH + "ai-dynamo/dynamo/issues/5866": "-",
        GH + "vllm-project/vllm-ascend/issues/116": "new:npu_stream_sync_failed",
        GH + "lmstudio-ai/lms/issues/552": "vllm.model_type_missing",
        GH + "huggingface/text-generation-inference/issues/3140": "tgi.method_failed",
        GH + "vllm-project/vllm/issues/54652": "new:uva_unavailable",
        GH + "vllm-project/vllm-ascend/issues/4866": "new:mooncake_transport_connect_failed",
        GH + "lmstudio-ai/lmstudio-bug-tracker/issues/1584": "new:lmstudio_resource_snapshot_failed",
    },
    "round31_B": {
        GH + "Dao-AILab/flash-attention/pull/2336": "vllm.invalid_attention_backend",
        GH + "janhq/jan/issues/8428": "new:hub_download_access_denied",
        GH + "decolua/9router/issues/710": "new:proxy_no_provider_credentials",
    },
    "round31_C": {
        GH + "kvcache-ai/Mooncake/pull/3188": "new:mooncake_endpoint_connect_failed",
        GH + "Mellanox/k8s-rdma-sriov-dev-plugin/issues/12": "new:rdma_sriov_vf_config_failed",
        GH + "tabularis-ai/be_great/issues/54": "new:accelerate_rtx4000_p2p_refused",
        GH + "Alpha-VLLM/LLaMA2-Accessory/issues/166": "new:torch_built_without_nccl",
        GH + "deepspeedai/DeepSpeed/issues/7148": "new:torch_no_backend_for_accelerator",
    },
    "round31_D": {
        GH + "kai-scheduler/KAI-Scheduler/issues/522": "new:kai_gpu_reservation_pod_not_allocated",
        GH + "pytorch/ci-infra/pull/552": "new:fabricmanager_local_fm_not_ready",
        GH + "NVIDIA/k8s-device-plugin/issues/762": "new:mps_server_fatal_exception",
        GH + "FujitsuPolycom/sparkring/issues/168": "new:fabric_netplan_rolled_back",
    },
    "round32_A": {
        GH + "lmstudio-ai/lmstudio-bug-tracker/issues/820": "vllm.unsupported_architecture",
        GH + "abetlen/llama-cpp-python/issues/1562": "vllm.unsupported_architecture",
        GH + "PaddlePaddle/PaddleOCR/issues/16748": "new:genai_engine_plugin_not_installed",
        GH + "vllm-project/vllm/issues/13306": "cuda.no_kernel_image",
        GH + "mozilla-ai/llamafile/issues/298": "llamacpp.mmproj_load_failed",
        GH + "ai-dynamo/dynamo/issues/1372": "new:dynamo_no_worker_instances",
        GH + "studio-dots-ai/dots.ocr/issues/84": "new:hf_processor_apply_failed",
        GH + "vllm-project/vllm/pull/45320": "vllm.nvfp4_scale_not_loaded",
        GH + "zai-org/GLM-4.5/issues/54": "vllm.parser_not_found",
        GH + "zai-org/GLM-4.5/issues/4": "vllm.parser_not_found",
    },
    "round32_B": {
        GH + "ai-dynamo/modelexpress/pull/128": "hub.offline_not_cached",
        GH + "cline/cline/issues/5140": "vllm.prompt_too_long",
        GH + "cline/cline/issues/3120": "vllm.prompt_too_long",
        "https://openillumi.com/pytorch-cuda-tensor-not-transfer-fix": "cuda.tensor_device_mismatch",
        GH + "frappe/raven/issues/1784": "vllm.api_route_not_found",
        GH + "pytorch/pytorch/issues/175250": "cuda.triton_out_of_resources",
    },
    "round32_C": {
        GH + "NVIDIA-NeMo/Megatron-Bridge/issues/650": "new:mpi_init_failed",
    },
    "round32_D": {
        GH + "byJoey/Actions-bbr-v3/issues/30": "docker.daemon_network_init_failed",
        GH + "docker/desktop-feedback/issues/326": "new:qemu_user_emulation_crash",
        GH + "gominimal/minimal/issues/610": "docker.rootless_uidmap_failed",
        GH + "rootless-containers/rootlesskit/issues/494": "new:rootless_detached_netns_mount_denied",
        GH + "justlovemaki/openclaw-china-docker/issues/174": "docker.executable_not_found",
        GH + "NVIDIA/nvidia-container-toolkit/issues/1860": "new:cdi_spec_version_unsupported",
    },
    "round33_A": {
        GH + "ollama/ollama/issues/10454": "vllm.unsupported_architecture",
        GH + "lmstudio-ai/lmstudio-bug-tracker/issues/1264": "vllm.unsupported_architecture",
        GH + "triton-inference-server/tensorrtllm_backend/issues/246": "trtllm.assertion_failed",
        GH + "ollama/ollama/issues/16492": "ollama.runner_terminated",
        GH + "NVIDIA/NemoClaw/issues/10524": "cuda.nvml_not_supported",
        GH + "waybarrios/vllm-mlx/issues/392": "new:mlx_stream_used_from_other_thread",
        GH + "ai-dynamo/dynamo/issues/1280": "new:dynamo_no_worker_instances_for_endpoint",
        GH + "dataelement/dsh-desktop/issues/66": "new:app_model_config_lacks_image_input",
        GH + "vllm-project/vllm/issues/47600": "new:chat_template_file_not_found",
        GH + "gpustack/gpustack/issues/1448": "new:gpustack_backend_package_missing_on_server",
        GH + "vllm-project/vllm-gaudi/pull/1098": "vllm.request_feature_unavailable",
        GH + "InternLM/lmdeploy/issues/2462": "new:tokenizer_input_not_text",
        GH + "vllm-project/vllm-omni/issues/1240": "new:tts_model_no_audio_output",
        GH + "gpustack/gpustack/issues/3326": "sglang.attention_backend_unsupported",
    },
    "round33_B": {
        GH + "Blaizzy/mlx-vlm/issues/740": "hub.remote_code_outdated",
        GH + "kortix-ai/suna/issues/172": "vllm.prompt_too_long",
        GH + "langgenius/dify/issues/6582": "vllm.client_connection_error",
        GH + "taylorwilsdon/reddacted/issues/6": "vllm.client_connection_error",
        GH + "vllm-project/vllm/issues/6736": "hub.modelscope_incompatible",
        GH + "www-zaq-ai/zaq/issues/166": "new:embedding_dimension_mismatch",
    },
    "round33_C": {
        GH + "ai-dynamo/nixl/pull/1978": "new:ucx_device_mem_list_invalid_memh",
        GH + "deepseek-ai/DeepEP/issues/128": "new:nvshmem_rdma_device_cannot_use_gpu_memory",
        GH + "NovaSky-AI/SkyRL/pull/196": "vllm.binary_mismatch",
        GH + "AI-Hypercomputer/gpu-recipes/issues/2": "torch.store_barrier_timeout",
        GH + "kubeflow/trainer/issues/2008": "-",
        GH + "vllm-project/vllm-ascend/issues/486": "nccl.watchdog_timeout",
        GH + "deepspeedai/DeepSpeed/pull/5318": "new:deepspeed_pdsh_ssh_args_append_unset",
        GH + "jax-ml/jax/issues/19596": "torch.store_connection_lost",
        GH + "NVIDIA-NeMo/Curator/issues/1216": "ray.address_mismatch",
    },
    "round33_D": {
        GH + "NVIDIA/go-dcgm/issues/76": "new:dcgm_watch_fields_bad_parameter",
        GH + "NVIDIA/gpu-operator/issues/926": "new:helm_chart_fetch_unauthorized",
        GH + "NVIDIA/NemoClaw/issues/136": "docker.cgroup_mount",
        GH + "volcano-sh/volcano/issues/3220": "new:volcano_queue_quota_insufficient",
        GH + "ibm-openbmc/dev/issues/3324": "new:systemd_mount_failed",
    },
    "round34_A": {
        GH + "hiyouga/LlamaFactory/issues/8544": "sglang.init_failed",
        GH + "QwenLM/Qwen2.5-Omni/issues/288": "vllm.worker_method_failed",
        GH + "Visual-Agent/DeepEyes/issues/52": "vllm.worker_fatal_signal",
        GH + "InternLM/lmdeploy/issues/2048": "system.process_aborted",
        GH + "ai-dynamo/dynamo/issues/2092": "vllm.nixl_not_installed",
        GH + "ollama/ollama/issues/16506": "llamacpp.ggml_assert",
        GH + "vllm-project/vllm/issues/9728": "new:vllm_memory_probe_without_nvml",
        GH + "sgl-project/sglang/issues/11736": "new:sglang_router_worker_health_rpc_failed",
    },
    "round34_B": {
        GH + "chflame163/ComfyUI_LayerStyle/issues/522": "vllm.config_attribute_missing",
        GH + "infiniflow/ragflow/issues/10672": "vllm.client_connection_error",
        GH + "Shubhamsaboo/awesome-llm-apps/issues/4": "vllm.client_connection_error",
        GH + "browser-use/web-ui/issues/730": "vllm.api_key_rejected",
        GH + "huggingface/datasets/issues/7900": "hub.cache_not_writable",
        GH + "modelscope/evalscope/issues/1040": "vllm.api_route_not_found",
    },
    "round34_C": {
        GH + "jax-ml/jax/issues/22740": "new:xla_clique_rendezvous_stuck",
        GH + "marin-community/marin/issues/7650": "new:jax_task_reconnected_new_incarnation",
        GH + "verl-project/verl/issues/5074": "vllm.npu_function_error",
        GH + "PaddlePaddle/Paddle/issues/66310": "torch.gloo_timeout",
        GH + "ray-project/kuberay/issues/2354": "vllm.ray_driver_no_gpu",
        GH + "apache/arrow/pull/12442": "new:rdma_cq_create_unsupported",
        GH + "ray-project/ray-llm/issues/150": "new:ray_serve_replica_slow_init",
        GH + "NVIDIA-NeMo/RL/pull/1022": "new:slurm_ray_worker_launch_died",
        GH + "smg-project/smg/pull/1722": "link.mooncake_tcp_transfer_failed",
    },
    "round34_D": {
        GH + "NVIDIA/NemoClaw/issues/1166": "docker.executable_not_found",
        GH + "NVIDIA/OpenShell/issues/722": "new:k8s_namespace_not_ready",
        GH + "Project-OSRM/osrm-backend/issues/7200": "docker.registry_auth",
        GH + "NVIDIA/open-gpu-kernel-modules/issues/1170": "new:nvidia_drm_memory_pages_failed",
        GH + "tigerowo/infinite-canvas/issues/46": "docker.entrypoint_not_runnable",
    },
    "round35_A": {
        GH + "netdur/llama_cpp_dart/issues/40": "new:llamacpp_model_tensor_missing",
        GH + "triton-inference-server/tensorrtllm_backend/issues/712": "new:triton_python_stub_unhealthy",
        GH + "lmstudio-ai/lmstudio-bug-tracker/issues/928": "vllm.unsupported_architecture",
        GH + "sgl-project/sglang/issues/26032": "new:sglang_weight_update_failed",
        GH + "mozilla-ai/llamafile/issues/320": "llamacpp.mmproj_load_failed",
        GH + "vllm-project/aibrix/issues/144": "aibrix.model_not_routable",
        GH + "ollama/ollama/issues/4602": "ollama.registry_unreachable",
        GH + "llm-d/llm-d/pull/650": "new:llmd_sidecar_decoder_unreachable",
        GH + "triton-inference-server/server/issues/7410": "new:triton_python_model_import_failed",
        GH + "abetlen/llama-cpp-python/issues/1764": "new:llamacpp_python_library_missing",
        GH + "verl-project/verl/issues/302": "vllm.cumem_allocator",
    },
    "round35_B": {
        GH + "OpenHands/OpenHands/issues/384": "vllm.client_connection_error",
        GH + "BerriAI/litellm/issues/14056": "new:model_param_unsupported",
        GH + "bytedance/Sa2VA/issues/74": "new:bnb_model_to_unsupported",
        GH + "run-llama/llama_cloud_services/issues/348": "hub.tls_untrusted",
        GH + "anthropics/claude-code/issues/5346": "vllm.max_tokens_too_large",
        GH + "openinterpreter/openinterpreter/issues/994": "vllm.client_base_url_no_scheme",
    },
    "round35_C": {
        GH + "ayaka14732/llama-2-jax/issues/20": "new:jax_coordination_barrier_timeout",
        GH + "horovod/horovod/issues/3412": "new:horovod_shut_down",
        GH + "pytorch/pytorch/issues/159742": "new:torch_nccl_not_built",
        GH + "vllm-project/vllm-ascend/issues/13934": "new:hccl_one_sided_get_failed",
        GH + "vllm-project/vllm/issues/27116": "ray.compiled_graph_timeout",
        GH + "guilbaults/infiniband-exporter/issues/12": "new:ib_smp_query_timeout",
    },
    "round35_D": {
        GH + "davidfowl/aspire-ai-chat-demo/issues/2": "docker.gpu_detection_failed",
        GH + "NVIDIA/gpu-operator/issues/142": "new:gpu_operator_kernel_version_unknown",
        GH + "raspiblitz/raspiblitz/issues/2146": "system.mount_failed",
        GH + "netease-youdao/QAnything/issues/192": "new:systemd_not_pid1",
        GH + "NVIDIA/gpu-operator/issues/530": "new:helm_resource_already_exists",
    },
    "round36_A": {
        GH + "ggml-org/llama.cpp/issues/10104": "vllm.unsupported_architecture",
        GH + "ggml-org/llama.cpp/issues/9656": "llamacpp.model_file_unreadable",
        GH + "verl-project/verl/issues/4308": "vllm.engine_core_died",
        GH + "xorbitsai/inference/issues/2446": "xinference.model_load_failed",
        GH + "mostlygeek/llama-swap/issues/84": "new:model_launcher_health_endpoint_missing",
        GH + "sgl-project/sglang/issues/2796": "new:sglang_router_no_worker_urls",
        GH + "lmstudio-ai/lmstudio-js/issues/336": "new:server_port_listen_permission_denied",
        GH + "lmstudio-ai/lms/issues/314": "new:lmstudio_server_config_missing",
        GH + "lmstudio-ai/lmstudio-bug-tracker/issues/242": "new:lmstudio_cli_binary_locked",
        GH + "lmstudio-ai/lmstudio-bug-tracker/issues/1720": "new:lmstudio_server_verify_failed",
        GH + "ollama/ollama/issues/1668": "ollama.registry_unreachable",
        GH + "mozilla-ai/llamafile/issues/936": "new:llamacpp_unknown_argument",
        GH + "xorbitsai/inference/issues/3512": "new:xinference_worker_supervisor_unreachable",
        GH + "exo-explore/exo/issues/106": "hub.bad_repo_id",
        GH + "triton-inference-server/tensorrtllm_backend/issues/568": "triton.model_not_ready",
        GH + "vllm-project/vllm-omni/issues/2756": "new:vllm_omni_stage_config_conflict",
    },
    "round36_B": {
        GH + "langgenius/dify/issues/16050": "dify.credentials_check_failed",
        GH + "infiniflow/ragflow/issues/10784": "ragflow.model_access_failed",
        GH + "infiniflow/ragflow/issues/7634": "system.connect_failed",
        GH + "pytorch/pytorch/issues/164686": "new:inductor_cpp_compile_error",
        GH + "tashfeenahmed/freellmapi/issues/1206": "vllm.api_rate_limited",
        GH + "facebookresearch/xformers/issues/1298": "cuda.extension_build_failed",
        GH + "open-webui/open-webui/issues/17444": "system.name_resolution_failed",
        GH + "vllm-project/vllm/pull/38126": "new:vllm_build_kernels_skipped_for_arch",
    },
    "round36_C": {
        GH + "deepspeedai/DeepSpeedExamples/issues/894": "deepspeed.host_unreachable_via_ssh",
        GH + "vllm-project/vllm-ascend/issues/9872": "new:hccl_link_establish_failed",
        GH + "marin-community/levanter/issues/432": "new:jax_coordination_barrier_timeout",
        GH + "SPECFEM/specfem2d/issues/1210": "mpi.rank_died",
        GH + "NVIDIA/nccl/issues/1328": "nccl.message_truncated",
        GH + "ray-project/ray/issues/42350": "ray.core_worker_raylet_lost",
        GH + "apache/brpc/issues/2298": "link.rdma_device_open_failed",
        GH + "ray-project/ray/issues/55874": "ray.kuberay_serve_update_failed",
        GH + "openucx/ucx/issues/4556": "new:rdma_cq_create_failed",
        GH + "NVIDIA/gdrcopy/issues/242": "link.gdrcopy_call_failed",
        GH + "haggaie/rdma-experiment/issues/2": "link.rdma_post_failed",
        GH + "sgl-project/sglang/issues/16242": "link.rdma_userspace_kernel_mismatch",
        GH + "ofiwg/libfabric/issues/512": "link.no_rdma_devices",
        GH + "Mellanox/doca-driver-build/issues/52": "new:ofed_kernel_module_load_failed",
    },
    "round36_D": {
        GH + "NVIDIA/k8s-device-plugin/issues/1574": "docker.k8s_gpu_not_advertised",
        GH + "NVIDIA/nvidia-docker/issues/1330": "driver.no_devices_found",
        GH + "gitpod-io/gitpod/issues/674": "docker.oom_killed",
        GH + "NVIDIA/k8s-device-plugin/issues/346": "docker.executable_not_found",
        GH + "NixOS/nixpkgs/issues/23708": "system.clock_not_synchronised",
        GH + "containerd/containerd/issues/12612": "docker.containerd_cri_plugin_failed",
        GH + "kata-containers/kata-containers/issues/4124": "docker.containerd_config_invalid",
        GH + "fwupd/fwupd/issues/3564": "new:firmware_capsule_update_failed",
    },
}
# (named right, rows) now; the headers keep the history. Round 4: first look at 9ef66b4 58 of 74 (78%); blind after
# session 10's breadth work 63 of 73 (86%); after session 11's fixes of its misses, two rows relabelled (post-hoc) 69
# of 73; session 12, torch's no-GPU line moved to the CUDA family: 68 of 73. Round 5: first look at a1cde1b 67 of 73
# (92%); blind after session 11's breadth work, three rows that became cited dropped, 65 of 70 (93%); post-hoc 70 of
# 70. Round 6's first look at 27f00a4: A 36/46, B 40/47; round 7
# at 27f00a4: A 37/50, B 37/50. Blind after session 12's first breadth wave (four engineers who never saw these
# rounds; round 7 A lost two rows its samples now cite): 6 A 36/46, 6 B 40/47, 7 A 36/48, 7 B 38/50 (150 of 191).
# Then post-hoc fixes, made after reading the misses from other threads' wordings (each header says which): no longer
# blind, so the blind figures above stay the measure. Round 8 was scored once, on the session's final table (719f701):
# A 41/49, B 46/50 (87 of 99, 88%; the table at the session's start names 85 of them); nothing was fixed from it.
# Session 13 (post-hoc, after reading the `new:` rows of rounds 4-8): entries for seven of their eight kinds, made
# from other threads' wordings (each header says which): round 4 69/73, 6 A 44/46, 7 A 42/48, 8 A 42/49;
# swap_space_too_large found in no other thread, still `new:`. Round 8 B 47/50: disk I/O wordings widened from other
# threads (fio's line names system.disk_io_error; prompted by the round's miss, so post-hoc).
# Round 9 (two blind parts collected at the start of session 13, labels committed before any scoring) was scored
# once, after all of session 13's generalization work (two waves, thirteen engineers, none saw it), two rows
# dropped as newly cited: A 42/49, B 39/49 (81 of 98, 83%); the session's starting table (55da46f) names the same 81.
# Then post-hoc fixes from other threads (each header says which): A 45/49, B 44/49; round 8 B 48/50 (BuildKit's
# 'failed to solve: IMAGE: ...: not found' wording, taken for round 9 B's row, names its row too).
# Session 14 read the programs' own messages in their source (tests/data/source_messages): vLLM 0.4's
# `Worker VllmWorkerProcess pid N died, exit code: -15` names round 8 A's vllm#6145 (not prompted by the row): 43/49.
# Round 10 (two blind parts collected at the start of session 14, labels committed before any scoring) was scored
# once, after all of session 14's work (eight engineers read vLLM's, SGLang's, TGI's, NCCL's, torch's, Ray's, Docker's,
# the toolkit's, the kernel's, CUDA's, the driver's and the Hub's source; none saw it), no row cited: A 44/50, B 43/50
# (87 of 100); the session's starting table (77b5581) names the same rows. Then a second wave of source reading,
# aimed at the components round 10's misses came from (C++ runtime logs: Ray's raylet, NCCL's WARNs, NVRM), so
# post-hoc: Ray 1.x's worker_pool.cc `have not registered to raylet within timeout` names ray#8890: A 45/50.
# Round 11 (two blind parts collected in session 14 while the second source wave ran, labels committed before any
# scoring) was scored once on the session's final table (after both waves), no row cited: A 40/52, B 45/51 (85 of 103,
# 83%; six rows are kinds the table lacks); the starting table (77b5581) names 84, the table after the first wave 85.
# Session 15 (post-hoc, after reading the misses of rounds 7-11): entries for eleven of the twelve `new:` kinds (made
# from other threads' wordings; each header says which; gpu_reset_required is in no other thread, still `new:`) and
# wordings of rounds 10-11's misses widened from other threads; CUDA's OOM gives way to vLLM's sampler warm-up OOM
# (one kind a line, an ambiguity audit of the whole table): 7 A 43/48, 9 A 47/49, 10 A 48/50, 10 B 46/50,
# 11 A 49/52, 11 B 48/51. Blind figures above stay the measure.
# Round 12 (two blind parts collected at the start of session 15, labels committed before any scoring) was scored
# once, after the session's first wave (new kinds, the ambiguity audit, rounds 10-11's wordings; none of its engineers
# saw it), no row cited: A 38/50, B 41/50 (79 of 100); the session's starting table (4ab6bcc) names the same 79.
# Then a second wave read the components its misses came from (torch.distributed's c10d and elastic wordings, NCCL's
# socket WARNs and net plugin lines, the kernel's lockup, NVMe and NIC link messages, apt, the toolkit's IMEX hook)
# and took samples from other threads: post-hoc A 50/50, B 47/50 (each header says which).
# Round 13 (two blind parts collected in session 15 while the second wave ran, labelled from the entries' titles after
# the ambiguity audit, labels committed before any scoring) was scored once on the session's final table, one row
# dropped as newly cited: A 48/53, B 43/50 (91 of 103, 88%); the session's starting table (4ab6bcc) and the table
# after its first wave (2091f86) name the same 91.
# Session 16 merged five pairs of entries that named one failure in two programs' words (the table's README:
# `aliases`); a label naming a merged id counts as the entry it went into, which makes two post-hoc misses right
# (11 B darknet#8601's libcudart, now cuda.cuda_library_missing; 12 B altis#19's ptxas line from an nvcc build, now
# cuda.ptxas_unknown_arch): 11 B 49/51, 12 B 48/50.
# Session 16's helpers (error-code tokens, other programs' wordings of known failures, round 13's misses read in
# their components) made thirteen post-hoc misses right, each from other threads or the programs' source (each
# header says which): 6 B 46/47, 10 A 49/50, 10 B 47/50 (new:gpu_reset_required is entry driver.gpu_reset_required),
# 11 A 50/52, 13 A 51/53 (sglang#2102 relabelled to FlashInfer's workspace entry), 13 B 49/50
# (new:kmod_index_missing is entry driver.kmod_index_missing).
# Round 14 (two blind parts collected at the start of session 16, labels committed before any scoring, no engineer of
# the session saw it) was scored once on the session's final table, one row dropped as newly cited and one as held
# out before (round 11 B): A 41/49, B 43/51 (84 of 100, 84%); the session's starting table (c298287) names the same 84.
# Session 17's helper w17 (round 14's misses read in their components: CUDA errors said by number, glibc's signal
# texts in other locales, Hub mirrors, mlx5 probe failures, no RDMA device; three new entries) made eight of them
# right post-hoc (the three new kinds relabelled to their entries; LiteLLM's in-process provider relabelled `-`, a
# client setting the table leaves unnamed): A 44/49, B 48/51; the shell's bare 已杀死, named once a literal is counted
# in bytes (the lead): B 49/51.
# Round 15 (two blind parts collected at the start of session 17, labels committed before any scoring, no engineer of
# the session saw it) was scored once on the session's final table, one row dropped as cited by a session-17 sample:
# A 41/50, B 47/54 (88 of 104, 85%); the session's starting table (4d7e1ad) names the same 88. Post-hoc: a registry's
# 5xx at `docker login` is docker.registry_server_error, not the login's refusal (from two other threads): B 48/54.
# Session 18's helpers g18* (a robustness audit of the patterns: incidental prefixes, reasons, figures and cases made
# optional, other versions' and wrappers' wordings; two new kinds, vllm#1937 relabelled to ray.worker_import_failed)
# made 19 rows of rounds 4-15 right post-hoc, none wrong: round 15 A 48/50, B 51/54.
# Round 16 (two blind parts collected at the start of session 18, labels committed before any scoring, no engineer of
# the session saw it) was scored once on the session's final table, one row of each part dropped as cited by a
# session-18 sample: A 42/49, B 40/49 (82 of 98, 84%); the session's starting table (95450f3c) names 81 (B 39/49:
# vllm#978's retyped `oserror :` line without its `OSError: ` prefix, named since g18cuda made the prefix optional).
# Post-hoc (the lead): NVML's `Driver/Library` with a capital L, the engine core's side of the start-up handshake,
# vLLM 0.11's local_world_size with its figures, a bare RAY_PREDICT_TRUE check, dockerd's `chmod path: input/output
# error`, a SCSI device rejecting I/O offline and the missing nvidia-container-runtime-hook named: A 45/49, B 44/49
# (transformers' sentencepiece sentence is the second line of vllm.tokenizer_backend_missing's message in the table's
# samples: left to that entry).
# Session 19's helpers g19* (the audit's second part: the entries session 18 had not changed, and a second pass over
# those it had; two entries added, among them LMCache's engine registry, round 16 A's `new:` row relabelled to it) made
# 13 rows of rounds 4-16 right post-hoc, none wrong: 7 A 44/48, 8 A 46/49, 9 A 48/49, 10 A 50/50, 11 A 52/52,
# 14 A 45/49, 16 A 49/49, 16 B 47/49.
# Round 17 (four blind parts collected at the start of session 19 by four engineers, labels committed before any
# scoring, no engineer of the session saw it; parts C and D collected after A and B, excluding their threads) was scored
# once on the session's final table (350e2169), one row dropped as cited by a session-19 sample: A 45/50, B 46/50,
# C 39/50, D 46/49 (176 of 199, 88%); the session's starting table (0e65981b) names the same 176.
# Post-hoc (the lead, from each wording's kind, not its one line): docker's daemon line cut before its question, any
# `ibv_reg_mr failed`, any librdmacm call that failed (rdma_resolve_route ...), the V2 Ray executor's RayWorkerProc,
# the object store's full line with its figures elided, a worker-registration timeout with its pid elided, NCCL's
# plugin fallback without its tail, zsh's job report of a killed command, EADDRINUSE by its BSD and Windows codes,
# flash-attention's `CUDA error (file:line): invalid argument`, glog's fatal Check line with both thread ids: A 47/50,
# B 49/50, C 44/50, D 48/49 (188 of 199). A resource request that cannot be scheduled right now is Ray's
# ray.resources_claimed (round 17 C labels it ray.unschedulable_resources): left missed.
# Session 20 (helper n20) added entries for two of round 17's new kinds from other threads; their rows were relabelled
# to them (C opensecret#124: vllm.mm_input_text_only_model, D ucx-py#88: link.ucx_listener_no_transport): C 45/50,
# D 49/49. Session 20's training rounds (helper t20h: FlashInfer's cuDNN version checks read in its source, urllib3's
# timeout to a Hub host on its own) made two more right: A 48/50, B 50/50.
# Round 18 (four blind parts collected at once at the start of session 20, each in its own families, labels committed
# before any scoring, no engineer of the session saw it) was scored once on the session's final table (84dc8774), 18
# rows dropped as threads the session's training rounds (sampled the same way, at the same time) cite: A 34/45,
# B 34/44, C 47/50, D 43/45 (158 of 184, 86%); the session's starting table (42e3a09c) names 157 (A 33: ms-swift#7065's
# LLMEngine internals, named since a training round).
# Post-hoc (the lead, each miss read by its kind's core phrase, no other line hunted for lack of time): the kernel's OOM
# line in any words before `(name) total-vm:`, GSP-FMC's boot error, TGI's launcher not finding its server, FastAPI's
# 404 in single quotes, std::system_error's EAGAIN in Ray's logger, UCX's unavailable devices without its prefix,
# TCPStore's recv with its address elided, DeepSpeed's cuBLAS kernel error, SGLang's TRTLLM backend for prefill,
# transformers' unknown model type retyped, Marlin's thread config inside vLLM's worker error, and an NVMe timeout
# whose completion was polled (two blind labels, round 12 B and 18 C, against one not-recognised sample, now a
# failure sample): A 39/45, B 37/44, C 50/50, D 44/45 (170 of 184); round 12 B 50/50.
# Round 19 (two blind parts collected at the start of session 21 from EVEN-numbered threads only, while the session's
# training rounds sampled odd-numbered ones, so that no thread could be in both; labels committed before any scoring, no
# engineer of the session saw it) was scored once on the session's final table (after all its merges), no row dropped:
# A 45/50, B 42/50 (87 of 100, 87%); the session's starting table (c405a4bc) names 86 (B 41: eugr#252's
# `ibv_modify_qp failed with 110` without NCCL's `Call to`, named since a training round widened it).
SCORE = {
    "round4": (70, 73),
    "round5": (70, 70),
    "round6_A": (44, 46),
    "round6_B": (47, 47),
    "round7_A": (44, 48),
    "round7_B": (48, 50),
    # post-hoc, session 29 ph29b: NCCL's probe of one net plugin version (`Failed to find ncclNetPlugin_vN symbol.`, NCCL
    # then tries older ones) names nothing; only its fallback (`... symbol (v4 or v5).`) is nccl.net_plugin_fallback: 46 -> 47
    "round8_A": (47, 49),
    "round8_B": (49, 50),
    "round9_A": (48, 49),
    # post-hoc, session 22 t22f: dreamfusionacc#5's retyped `Error while de eserializing header:` (a training row's kind)
    "round9_B": (45, 49),
    "round10_A": (50, 50),
    "round10_B": (48, 50),
    "round11_A": (52, 52),
    "round11_B": (49, 51),
    "round12_A": (50, 50),
    "round12_B": (50, 50),
    "round13_A": (51, 53),
    "round13_B": (50, 50),
    "round14_A": (45, 49),
    "round14_B": (49, 51),
    "round15_A": (48, 50),
    "round15_B": (51, 54),
    "round16_A": (49, 49),
    "round16_B": (47, 49),
    "round17_A": (48, 50),
    "round17_B": (50, 50),
    "round17_C": (45, 50),
    "round17_D": (49, 49),
    "round18_A": (39, 45),
    "round18_B": (37, 44),
    "round18_C": (50, 50),
    "round18_D": (44, 45),
    "round19_A": (49, 50),  # blind 45/50 (session 21's final table); post-hoc, session 22
    "round19_B": (47, 50),  # blind 42/50; post-hoc, session 22
    "round20_A": (
        44,
        50,
    ),  # blind 38/50 on session 22's final table (starting table 37); post-hoc, session 22
    # blind 44/49 (starting table 44; ollama#9782 dropped: part A has it); post-hoc, session 22
    "round20_B": (45, 49),
    # blind on session 23's final table (275f03e8), after 11 training rounds and 11 source sweeps; the starting table
    # (f5fe2d25) names the same 38 and 29. openinterpreter#1406's `new:` kind got its entry (litellm.provider_not_given)
    # from a training round the same session, blind, and stays a miss by its label.
    "round21_A": (47, 50),  # blind 38/50; post-hoc, session 23; post-hoc, session 24 t24b: continue#10832
    # blind 29/40; post-hoc, session 23; post-hoc, session 24 lead: vllm#20226's NCCL `Cuda failure 'operation not
    # supported'` by the README's rule for a wrapped error (its inner CUDA error's entry)
    # session 29 t29c: open-gpu-kernel-modules#246's nvidia-smi `device handle ...: Not Found` named by the kind's fix from a
    # training row of the same wording (open-gpu-kernel-modules#259): 36
    "round21_B": (36, 40),
    # round 22: four parts from even-numbered threads (A, B at the session's start; C, D, told A's and B's threads, after
    # the first training wave), scored once on session 24's final table (f9a9ee0f), after nine training rounds, nine
    # cut-line passes and the title mend; the starting table (7233a34c) names 46, 38, 43 and 41. One new: kind (dify#20254's
    # credentials check) got an entry the same session, blind, from t24b's training round, and stays a miss by its label.
    # post-hoc, session 24 ph24a: cuda.device_side_assert marked generic (any kernel assertion), so the sampler's
    # probability-tensor assertion names vllm.nan_probabilities alone, 46 -> 47
    "round22_A": (47, 50),
    # post-hoc, session 24 ph24b: UCX's `no ... transport to` with other reasons than unreachable, rdma-core qedr's
    # `create qp: failed on ibv_cmd_create_qp`, a Ray check after a `(ray_init)` component or alone behind its file,
    # coreutils chmod's `changing permissions of '...': Read-only file system`, gcc's `error:` in a DKMS build tree
    "round22_B": (43, 50),
    # post-hoc, session 24 ph24a: four wordings of known kinds (transformers' cached_file clause, TGI's bare
    # max_new_tokens limit, torch.fx's node of vLLM's split graph, msgspec's SamplingParams keyword) 44 -> 48
    "round22_C": (48, 50),
    # post-hoc, session 24 ph24b: RCU's `kthread starved for N jiffies!` line alone, a Ray check behind its file alone,
    # the AMD MCE decoder's `[Hardware Error]: Corrected error, no action required.`, glibc's `libcuda.so.1: file too short`
    "round22_D": (45, 50),
    # round 23: four parts from even-numbered threads, all collected at the start of session 25 (A: vLLM and other
    # servers; B: CUDA/PyTorch, the Hub, apps in front of servers; C: NCCL, RDMA/links, Ray; D: Docker/toolkit/Kubernetes,
    # driver, kernel/system), scored once on session 25's final table (5f278dde), after 14 training rounds; the starting
    # table (dea46ff6) names 37, 39, 29 and 45. 26 rows are `new:` kinds; three of them (SSH's refused login and host key,
    # SkyPilot's pods pending) got entries the same session, blind, from training rounds, and stay misses by their labels.
    # post-hoc, session 25 ph25a: vLLM 0.5's lower-case `server didn't reply within N ms`, LMCache's `Remote connection
    # failed in contains`, SGLang's/LMDeploy's `Failed to parse fc related info to json format!` 36 -> 39
    "round23_A": (39, 50),
    # post-hoc, session 25 ph25a: TRL's GRPO check `The requested device for vllm (cuda:N) is not available`, OpenAI's
    # `Incorrect API key provided: ...` 39 -> 41; post-hoc, session 26 lead: an exception's class followed by a `...` that
    # elides its message names the class's entry (`LocalEntryNotFoundError ...`) 41 -> 42; post-hoc, session 27 t27b:
    # FastGPT's API log of the openai SDK's `Connection error.` (`Api response error: <route>, Connection error.`) 42 -> 43
    "round23_B": (43, 50),
    # post-hoc, session 25 ph25b: SkyPilot's wait for worker nodes (ray.workers_not_joined), bash's missing orted and
    # ORTE's no-route notice (mpi.remote_daemon_failed), torchrun's agent line cut after its exit code, and Ray's GCS
    # report of a worker's SYSTEM_ERROR exit (ray.actor_died): C 31 -> 36
    "round23_C": (36, 50),
    # post-hoc, session 25 ph25b: docker 1.x inspect's 'No such image or container' (docker.image_not_local): D 46 -> 47
    "round23_D": (47, 50),
    # round 24: four parts from even-numbered threads, all collected at the start of session 26, recent first (at least
    # 40 of 50 rows from 2024-2026 asked; as collected A 44 of 45, B 45 of 50, C 12 of 19, D 41 of 50): A vLLM and other servers, B CUDA/PyTorch,
    # the Hub, apps in front of servers, C NCCL, RDMA/links, Ray, D Docker/toolkit/Kubernetes, driver, kernel/system.
    # Scored once on session 26's final table (f69c58cd), after 8 training rounds; the starting table (deccb30d) names
    # 31, 36, 12 and 38. 22 rows are `new:` kinds. C holds 17 rows (its collector found 19 free threads in 55 look-ups; two
    # were odd-numbered and are dropped), A 44 (45 collected; llm-d-benchmark#668 was taken by D too and left to D).
    # post-hoc, session 26 ph26a: vLLM V0's KV connector factory assert, Transformers' "already used by a Transformers
    # model" (SGLang's config classes), TensorRT-LLM's "Unsupported model architecture: <HF class>"
    "round24_A": (34, 44),
    # post-hoc, session 26 ph26b: apps printing the openai SDK's errors after their own words (evalscope's timeout, STORM's
    # connection error), a CUDA torch library missing from a CPU-only torch (cuda.torch_without_cuda), cudnn-frontend's
    # `cudnnFinalize failed` (cuda.cudnn_error), Ollama's `"X" does not support chat` given to vllm.chat_api_unsupported
    # alone: B 37 -> 42
    "round24_B": (42, 50),
    "round24_C": (12, 17),
    # post-hoc, session 26 ph26c: wordings of known kinds 38 -> 43: the dynamic linker's `PROG: symbol lookup error: PROG:
    # undefined symbol: S` of a program (vllm.binary_mismatch), the device plugin's `invalid device discovery strategy`
    # (docker.gpu_not_in_container), BuildKit's line retyped with spaced colons, runc's line cut before its quoted
    # program, apt's `is not available, but is referred to by another package` (docker.toolkit_package_not_found)
    "round24_D": (43, 50),
    # round 25: five parts from even-numbered threads, all collected at the start of session 27, recent first (four
    # fifths from 2024-2026 asked): A vLLM and other servers, B CUDA/PyTorch, the Hub, apps in front of servers, C NCCL,
    # RDMA/links, Ray (30 asked), D Docker/toolkit/Kubernetes, driver, kernel/system, E anything met on DGX Spark / GB10
    # itself (two collectors, 14 + 10 rows). Scored once on session 27's final table, after 8 training rounds and two
    # engine changes (quoted messages, pasted markers); the starting table (cb096521) names 31, 39, 20, 28 and 17.
    # 26 rows are `new:` kinds.
    # post-hoc, session 27 ph27a: wordings of known kinds: vLLM's CUTLASS `Int8 not supported for this
    # architecture` (vllm.quantization_unsupported), TensorRT's libnvinfer missing (cuda.cuda_library_missing), ATen's
    # index_put `shape mismatch: value tensor ... cannot be broadcast` (cuda.tensor_shape_mismatch), Triton core's
    # `unable to find 'X/model.py' for model` (vllm.triton_backend_missing); ggml's GGML_ABORT `FILE:LINE: fatal error`
    # and a C assert of llama.cpp's own code (llamacpp.ggml_assert): A 31 -> 37
    "round25_A": (37, 47),
    # post-hoc, session 27 ph27b: + 7 (BackendCompilerFailed wrapping a kernel image the driver refuses gives way to
    # cuda.kernel_image_invalid, OpenAI's `This is not a chat model ...` relayed, an SSL verify failure after an app's
    # words, Continue's 404 on a model list, litellm-vscode-chat's `Unable to connect to`, guidellm's failed
    # 'Test connection' request, aiohttp's `Cannot connect to host ... ssl:default` quoted without its OS error)
    "round25_B": (46, 50),
    # post-hoc, session 27 ph27b: + 1 (a RayTaskError whose task is a Ray Data operator, `ray::MapBatches(...)`, names
    # ray.data_operator_failed)
    # post-hoc, session 28 (the lead): `RayTaskError(ActorDiedError)` names the actor's death (ray.actor_died), as the
    # blind collectors of rounds 25 and 26 read it, not the task's wrapper
    "round25_C": (22, 30),
    # post-hoc, session 27 ph27c: the memory cgroup's `memory: usage ..., limit ..., failcnt` OOM line (system.oom_killer),
    # docker-compose 1.x's `The Compose file '...' is invalid because:` header, containerd's `content at .../manifests/...
    # not found` and the bare `manifest unknown` (docker.manifest_unknown), containerd 1.x's `unexpected status code URL:
    # STATUS` cut in its status (docker.registry_refused), the DRA plugins' claim string in any spelling without a space
    # (docker.k8s_dra_prepare_failed)
    # post-hoc, session 33 (the lead): ghcr.io's bare DENIED on a manifest (`Head "https://ghcr.io/v2/X/manifests/T": denied`)
    #   moved from docker.registry_auth to docker.pull_access_denied, as every blind labeller named it: D 34 -> 37
    "round25_D": (37, 45),
    # post-hoc, session 27 ph27a: Ollama's runner exit retold as a sentence (ollama.runner_terminated) and Xinference's
    # `Fail to get GPU info: Not Supported` (cuda.nvml_not_supported), cudaforge's `Kernel compilation failed for X.cu: nvcc
    # error:` (cuda.extension_build_failed): E 17 -> 20
    "round25_E": (20, 24),
    # round 26: four parts from even-numbered threads and one from web pages outside GitHub (forums, blogs, build logs;
    # pages on the even side of held_out.page_side), all collected at the start of session 28, recent first: A vLLM and
    # other servers (35 of 45 asked), B CUDA/PyTorch, the Hub, clients and apps, C NCCL, RDMA/links, Ray (30), D
    # Docker/toolkit/Kubernetes, driver, kernel/system (28 of 45), P web pages (two collectors, 11 + 1 rows). Scored once
    # on session 28's final table, after 8 training rounds and the `\uXXXX` engine change; the starting table (9ca163e6)
    # names the same 27, 40, 23, 20 and 11. 11 rows are `new:` kinds.
    # post-hoc, session 28 ph28a: a vision tower's `KeyError: 'blocks.N....weight'` (vllm.weight_name_mismatch) and LocalAI's
    # `could not load model: rpc error` cut before its gRPC status (localai.backend_load_failed): A 27 -> 29
    "round26_A": (29, 35),
    # post-hoc, session 28 ph28b: aiohttp's words through Open WebUI (Multiple exceptions' Connect call failed,
    #   ContentTypeError's unexpected mimetype), Dify's `Failed to save model credentials`, ninja's `build stopped`
    "round26_B": (44, 45),
    # post-hoc, session 28 (the lead): `RayTaskError(ActorDiedError)` names ray.actor_died (round 25 C above)
    # post-hoc, session 28 ph28b: c10d's Windows bind error (system error: 10048), a registration step's word in
    #   parentheses (ibv_reg_dmabuf_mr (retain)), libfabric's gdr_pin_buffer failed!, SGLang's Mooncake reasons alone
    "round26_C": (28, 30),
    # post-hoc, session 28 ph28c: nvidia-smi's line retold (`could not`, no hyphen: driver.not_answering), iptables-nft's
    # own CHAIN_ADD line retold alone (docker.daemon_network_init_failed), the daemon's pull refusal cut after the image
    # (docker.pull_access_denied), dpkg's `Errors were encountered while processing:` (system.dpkg_package_failed), the
    # daemon's `X: authentication required` with the registry's word retyped (docker.registry_auth): D 20 -> 25
    "round26_D": (25, 28),
    "round26_P": (11, 12),
    # round 27: four parts from even-numbered threads (A vLLM and other servers, B CUDA/PyTorch, the Hub, clients and
    # apps, C NCCL, RDMA/links, Ray, D Docker/toolkit/Kubernetes, driver, kernel/system; A, C and D each by two collectors,
    # the second told the first's threads) and E (DGX Spark / GB10 owners' threads, 11 rows in 60 look-ups), all collected
    # at the start of session 29, recent first, at most 6 rows of a part from one repository (A's first collector gave 16
    # from LM Studio's tracker: 10 dropped unread). Scored once on session 29's final table, after 6 training rounds and
    # a review; the starting table (b7e27815) names the same 28, 41, 30, 35 and 5. 13 rows are `new:` kinds. A's
    # LlamaFactory#7458, a miss, was dropped at registration: whole-paste round 6 holds that thread (A: 28 of 46).
    # post-hoc, session 29 ph29a: SGLang's diffusion scheduler's `Scheduler terminated after N consecutive errors`,
    #   tllmRuntime's `expected N dims, provided M dims`, `Failed to extract tool call spec`, Xinference's `Failed to launch
    #   model, detail:`, ggml's `CUDA kernel X has no device code compatible with` cut, ggml's Metal buffer allocation, llama.cpp's
    #   `unable to allocate CPU buffer`; ph29e: MLX's `Received (N )?parameters not in model`, MLX's `Cannot broadcast array of
    #   shape`, LM Studio's `(Exit code: N). Please check settings`, its context overflow, its Jinja template errors;
    #   the lead: SGLang's own `SGLang only supports sm75 and above` (two source rows had left it unnamed for want of an
    #   entry; vLLM's and PyTorch's minimums are this entry), in any case of its name: A 28 -> 43 of 46
    "round27_A": (43, 46),
    # post-hoc, session 29 ph29b: Open WebUI's aiohttp line with its bracketed reason (`[Connection timed out]`), and
    #   pytorch/pull/158700 relabelled from a new: kind to vllm.gpu_below_min_capability (the entry's meaning named PyTorch's own
    #   minimum, and the table named the line so before the round): B 41 -> 43
    "round27_B": (43, 45),
    # post-hoc, session 29 ph29b: torch_memory_saver's `cudaError error: 1 (invalid argument)`, NCCL's plugin version probe
    #   left unnamed (round 8 A above), KubeRay's `Job submission has failed. Reason:`, `ray up`'s head `in state
    #   update-failed`, aws-ofi-nccl's `Couldn't find any optimal provider`: C 30 -> 35
    "round27_C": (35, 36),
    # post-hoc, session 29 ph29c: amazon-vpc-cni-k8s#3104 and Duix-Avatar#42 relabelled from docker.oci_runtime_missing to
    #   docker.gpu_runtime_missing (the missing program is the NVIDIA runtime: the table and earlier rounds say so); the
    #   hook's refusal cut after `directly`, containerd 2.0's Schema 1 refusal: D 35 -> 38
    "round27_D": (38, 45),
    # post-hoc, session 29 ph29e: OpenShell's `GPU sandbox requested, but the active gateway has no allocatable GPUs`,
    #   SGLang's `No processor registered for architecture:` cut after its colon: E 5 -> 7
    "round27_E": (7, 11),
    # round 28 (session 30), blind on its final table: the starting table named A 25, B 41, C 32, D 32, E 9 (139 of 187);
    #   the final one A 27 (ExLlama's unknown-architecture warning, g30d, and Ollama's MLX runner failing, g30b: wordings
    #   the sweeps read in source), the rest the same
    # post-hoc, session 30 ph30a: Ollama's CLI `Error: 500 ... unable to load model:`, TurboMind's bare `KeyError:
    #   'XForCausalLM'` and mlx-vlm's `Unsupported model type:`, TurboMind's CUDA `operation not supported`, GPUStack's RPC
    #   server restart, llguidance's `LLMatcher error: ... doesn't satisfy the grammar`; three rows relabelled by the rules
    #   (a wrapper's old EngineArgs keyword vllm.unrecognized_arguments as four earlier rows; an unknown projector type the
    #   specific entry before the catch-all; a template's own raise_exception inside llama.cpp's wrapper
    #   vllm.chat_template_error): A 27 -> 36
    "round28_A": (36, 45),
    # post-hoc, session 30 ph30b: RAGFlow's `Fail to access <type> model for provider=`, mlx-serve's `Prompt exceeds maximum
    #   context length`, huggingface_hub's first line of a 401 (`401 Client Error. (Request ID: ...`), and BatsResearch/alfred#42
    #   relabelled to hub.tokenizer_library_missing (round 16 B labels the same line so): B 41 -> 45; Mooncake's TCP
    #   transport's ASIO exception, and two rows relabelled as earlier rounds label the same wording (nv_peer_memory's
    #   modprobe summary driver.module_insert_failed as round 19 B, aws-ofi-nccl's `Unable to register memory`
    #   nccl.ibv_call_failed as round 11 A): C 32 -> 35
    "round28_B": (45, 45),
    "round28_C": (35, 38),
    # post-hoc, session 30 ph30c: crun's `cannot stat` of a driver file a stale CDI spec lists, kubectl describe's `Reason:
    #   CrashLoopBackOff`: D 32 -> 34; GNU ld's warning that libcuda.so.1 is not found while linking: E 9 -> 10
    # post-hoc, session 31 s31d: the DRA compute-domain daemon's `writeIMEXConfig failed` (docker.imex_daemon_failed): D 34 -> 35
    # post-hoc, session 33 (the lead): a make error on an object of the NVIDIA installer's kernel sources: D 35 -> 36
    "round28_D": (36, 44),
    # post-hoc, session 32 s32b: bitsandbytes' `libbitsandbytes_cuda123.so: cannot open shared object file` (its library's
    #   name before dlopen's words, a head a quote dropped): E 10 -> 11
    "round28_E": (11, 15),
    # round 29 (session 31), blind on its final table: the starting table (bdeea560) named A 23, B 31, C 25, D 35 (114 of 155);
    #   the final one, after nine long-tail sweeps of programs' source (65 entries, 735 patterns), the same 114
    # post-hoc, session 32 (the lead): vLLM's free-memory check cut after `less than desired`, the example the cut marker
    #   `(?#cut)` was built on: A 23 -> 24
    # post-hoc, session 32 (s32d): NCCL's duplicate-GPU warning without its first words (`rank 27 and rank 19 both on CUDA
    #   device 53000`) and Ray's OOM kill advice line quoted alone (raylet node_manager.cc): C 25 -> 27
    #   session 33 (post-hoc, the lead): a cut mark on vLLM's `exceeds available GPUs`, candle's device mismatch, vLLM
    #   0.9's NIXL block-count assertion, ATen's kernel asserts quoted bare, gguf-py's unknown quantization type,
    #   catatonit's exec failure, DeepGEMM's and DeepEP's host assertions, cudnn-frontend's `No valid engine configs`,
    #   SiliconFlow's unknown model, UCX's UMR QP and UCC's shared-memory attach, containerd 2's layer by media type:
    #   A 24 -> 30, B 31 -> 34, C 27 -> 29, D 35 -> 37
    "round29_A": (30, 40),
    "round29_B": (34, 40),
    "round29_C": (29, 35),
    "round29_D": (37, 40),
    # round 30 (session 32), blind: the starting table (806076b4) named A 26, B 30, C 22, D 30 (108 of 147); the final
    #   one, after the cut marker and five shape passes (1,104 markers, about 300 patterns for lines without their
    #   first words), the same 108. Post-hoc: C's vllm-project/vllm/pull/6410, labelled new: for a kind the table
    #   has (vllm.ray_driver_no_gpu), relabelled: C 22 -> 23
    # post-hoc, session 33 (t33d): Ray's unhandled-error header of a RayTaskError (worker.py's `Unhandled error (suppress
    #   with ...): ray::task() (pid=, ip=)`) is ray.task_error like the RayTaskError(X) header (A verl#12, C EasyR1#182); the
    #   kernel's mlx5_ib error-CQE debug line (`Responder error cqe on cqn`, read in drivers/infiniband/hw/mlx5/cq.c) is an RDMA
    #   completion error; a worker's dead-raylet system-config RPC error no longer names the GCS: A 26 -> 27, C 23 -> 26
    #   (brpc#3202's new:rdma_post_send_failed is entry link.rdma_post_failed from brpc's source and other threads; it stays missed)
    # post-hoc, session 33 (t33a): zsh's report of a foreground command's segfault (`zsh: segmentation fault  CMD`): A 27 -> 28
    # post-hoc, session 33 (t33b): bitsandbytes 0.36-0.37's misspelt CPU library, PyTorch's cnn_infer UserWarning left
    #   unnamed, cuDNN's `Could not load library` cut after the name, Inductor's bounds assert in a kernel, nvcc's quoted
    #   `Unsupported gpu architecture`, cargo's build of CUDA crates, huggingface_hub's snapshot message in halves, Open
    #   WebUI's bare `Connection error:`, Azure OpenAI's 404 `Resource not found`: B 30 -> 39
    # post-hoc, session 33 (t33c): go-nvml's `Failed to initialize NVML: ERROR_UNKNOWN`, iptables' `Couldn't load target
    #   `DOCKER'`, CrashLoopBackOff a catch-all when its reason is on the line, the containerd store's `error from registry:
    #   denied` (ghcr's DENIED) named docker.pull_access_denied: D 30 -> 35
    "round30_A": (28, 40),
    "round30_B": (39, 40),
    "round30_C": (26, 27),
    # post-hoc, session 33 (the lead): ghcr.io's bare DENIED on a manifest named docker.pull_access_denied: D 35 -> 36
    "round30_D": (36, 40),
    # round 31 (session 33), blind: the starting table (c1de1d1f) named A 26, B 36, C 25, D 30 (117 of 152); the final
    #   one, after four training rounds on odd-numbered threads and post-hoc fixes of rounds 25, 29 and 30 (none made
    #   from this round), A 26, B 37, C 25, D 30 (118 of 152): B's Azure 404 `Resource not found` became right through a
    #   round 30 fix. 16 rows are kinds the table lacked; the table named nothing for 15 of them
    # post-hoc, session 33 (the lead, after the final score): Ollama's `server X not listed in available servers`, tvm-ffi's
    #   `Segfault encountered` banner, an app's retelling of apt's `dpkg was interrupted`, akmods' `[FAILED]`, a compile
    #   error in the NVIDIA installer's kernel sources: A 26 -> 28, D 30 -> 33
    # post-hoc, session 34 (t34a): KTransformers' call of Transformers' removed _get_logits_warper, NIXL libfabric's
    #   `Failed to deserialize data rail endpoints`, llama.cpp's `failed to parse chat template (defaulting to chatml)` moved
    #   to llamacpp.chat_template_parse_failed: A 28 -> 31 (Ollama's app respawn line now has an entry; it stays a miss by
    #   its new: label)
    "round31_A": (31, 40),
    "round31_B": (37, 40),
    # post-hoc, session 34 (the lead): torch's per-address `[c10d] The client socket has failed to connect to [host]:port
    #   (errno ...)` named torch.store_connect_retrying like torch 2.4's retry line, as three blind labels asked: C 25 -> 27
    "round31_C": (27, 32),
    # post-hoc, session 34 (t34c): the scheduler's untolerated `node.kubernetes.io/unreachable` taint left to its catch-all,
    #   gpud v0.3-0.4's `xid N detected by dmesg`, a Go runtime panic in a pod's CRI log: D 33 -> 36 (the MPS control
    #   daemon's fatal exception now names driver.mps_server_failed; its row stays a miss, labelled new:)
    "round31_D": (36, 40),
    # round 32 (session 34), blind: the starting table (31beea41) named A 26, B 30, C 32, D 31 (119 of 156); the final one,
    #   after six training rounds on odd-numbered threads, four engineers giving kinds of older rounds their entries, a
    #   llama.cpp source sweep and post-hoc fixes of round 31 (none made from this round), the same 119 of 156. C was
    #   collected by two collectors (16 + 20 rows). 7 rows are kinds the table lacked; the table named nothing for all 7
    # post-hoc, session 34 (the lead, after the final score): vLLM's CUTLASS status after the caller's file and line,
    #   c10's backtrace header for an exception of ProcessGroupNCCL's watchdog, apt's `is not valid yet` cut before its
    #   figure: B 30 -> 31, C 32 -> 33, D 31 -> 32
    # post-hoc, session 34 (p34a): vLLM's MiniCPMV version refusal, FastDeploy's reasoning-parser KeyError without its first
    #   words, TensorFlow's OOM cut after `tensor`, DeepEP's EPException for a CUDA `unknown error`, a Qwen chat template's
    #   `System message must be at the beginning`, transformers 5's bare `X has no attribute batch_encode_plus`:
    #   A 26 -> 30, B 31 -> 34
    "round32_A": (30, 40),
    "round32_B": (34, 40),
    # post-hoc, session 34 (p34b): ps-lite's failed CHECK_EQ of ibv_post_send, KubeRay's status.reason SubmissionFailed
    "round32_C": (35, 36),
    # post-hoc, session 34 (p34b): scripts' "Docker is not running. Please start Docker", watchfiles' watcher at the inotify
    # instances limit (system.too_many_open_files marked generic)
    "round32_D": (34, 40),
    # round 33 (session 35), scored on the session's final table (the starting table: A 22, B 32, C 27, D 31)
    # post-hoc, session 35 (p35a): vLLM's decoder-prompt check cut after `is longer than`, ggml's 2023 GGUF reader's
    #   `invalid magic number` of a file not GGUF, vLLM-Omni's `Model class X not found in diffusion model registry` (cut):
    #   A 23 -> 26
    "round33_A": (26, 40),
    # post-hoc, session 35 (p35b): LiteLLM's BadGatewayError (a 502) and Claude Code's "issue with the selected model": B 32 -> 34
    "round33_B": (34, 40),
    # post-hoc, session 35 (p35c): Mooncake's `Failed to retrieve segment descriptor, name`, Ray's Windows plasma
    #   `CreateFileMapping() failed`, BusyBox nslookup's `can't resolve 'HOST': ERROR`, torchrun's `failed (exitcode: N)`
    #   after its logger's name, cut after the code: C 27 -> 31
    "round33_C": (31, 40),
    # post-hoc, session 35 (p35d): DKMS's build failure cut after `for module`, LXC's safe_mount of a missing host device
    # node, Proxmox's `is not a device` (docker.device_missing): 31 -> 34; nvidia-container-cli's `cuda error: os call failed`
    # (CUDA 304 wrapped) names cuda.os_call_failed, not docker.gpu_runtime_no_driver (rv29's rule): 35
    "round33_D": (35, 40),
    # round 34 (session 36), scored on the session's final table (the starting table: A 29, B 32, C 28, D 32)
    # post-hoc, session 36 (p36a): llama-server's `The model produced output that does not match the expected ... format`
    # (its chat parser, vllm.tool_call_parse_failed): 29 -> 30; LM Studio's server's `Model "X" not found. Please specify a valid
    # model` (vllm.served_model_not_found) and `Failed to load model "X". Error: Error loading model.` (lmstudio.model_load_crashed): 32
    "round34_A": (32, 40),
    # post-hoc, session 36 (p36b): HIP's `invalid kernel file` (hipErrorInvalidKernelFile) names cuda.kernel_image_invalid,
    #   CLIProxyAPI's `unknown provider for model` names litellm.provider_not_given: 32 -> 34
    "round34_B": (34, 40),
    # post-hoc, session 36 (p36c): torchrun's agent line cut right after `api:failed`, Monarch's `failed to create extended
    #   queue pair (QP)`, SPDK's `Failed to post a send for the qpair ... with errno N`: C 28 -> 31
    "round34_C": (31, 40),
    # post-hoc, session 36 (p36d): Node clients' `connect EACCES /var/run/docker.sock`, compose-go's `stat FILE: no such
    #   file or directory` of a compose file named with -f, `/bin/bash: /path/x.sh: No such file or directory`: D 32 -> 35
    "round34_D": (35, 40),
    # round 35 (session 37), scored on the session's final table (the starting table: A 24, B 31, C 29, D 31)
    # post-hoc, session 37 (p37a): Lemonade's `failed to start within timeout` names vllm.model_launcher_health_timeout,
    #   vLLM's KV capacity check cut after `stored in KV cache` (?#cut), ExLlamaV2's paged-attention flash-attn check names
    #   cuda.flash_attn_unavailable, LocalAI's `no backend found with name` names localai.backend_not_installed, a bare
    #   `GLIBCXX_x not found` names system.libstdcxx_too_old: 24 -> 29 (cumem_allocator.cpp's error retyped in lower case by an
    #   issue title is a reporter's typing, not a program's wording: left)
    "round35_A": (29, 40),
    # post-hoc, session 37 (p37b): LiteLLM's cost-map warning `Model=X not found in completion cost map` names
    #   litellm.model_not_mapped, RAGFlow 0.14's embedding check ending in its own `Fail`, LlamaIndex's multi-modal
    #   `Invalid model X. Available models are: [...]`: 31 -> 34 (two more lines, httpcore's no-scheme refusal retold without
    #   `an` and Anthropic's context refusal retold as `input_length`, are a reporter's typing, not a program's wording: left);
    #   the new transformers.quantized_model_moved (from Transformers' source) names the `new:bnb_model_to_unsupported` row,
    #   still a miss
    "round35_B": (34, 40),
    # post-hoc, session 37 (p37c): gloo's 2017 `[enforce fail at .../pair.cc:N] optval == 0. E vs 0. SO_ERROR: ...`, gdrdrv's
    #   `nvidia_p2p_get_pages(...) failed [ret = N]`, rlib's `register mr failed at addr: (...) with error: ...`, vLLM's
    #   MooncakeStore `... loading the configuration: setup(): incompatible function arguments`, Ray's AWS provider's
    #   `create_instances: Attempt failed with ...`: C 29 -> 34
    "round35_C": (34, 40),
    # post-hoc, session 37 (p37d): nvidia-container-cli's `failed to add device rules` with the chain after it elided (`...`),
    #   node-exporter's NodeClockNotSynchronising / NodeClockSkewDetected descriptions, apt's `Unmet dependencies. Try 'apt
    #   --fix-broken install' ...` (and its older words), containerd's local store `blob X expected at PATH: blob not found` inside
    #   `failed to extract layer` (docker.image_content_missing, no longer docker.layer_failed): D 31 -> 35
    "round35_D": (35, 40),
    # round 36 (session 38), scored on the session's final table (the starting table: A 19, B 32, C 25, D 32)
    "round36_A": (19, 35),
    "round36_B": (32, 40),
    "round36_C": (26, 40),
    "round36_D": (32, 40),
}
# Parts whose collectors found fewer free threads than asked: round 24 C 19 (17 kept), round 25 C 30 asked, round
# 25 E (DGX Spark owners' threads) 24 in two collectors' 110 look-ups, round 26 A 35 and D 28 of 45 (D kept four
# fifths recent), C 30 asked, P 12 pages in two collectors' 90 look-ups, round 27 C 36 in two collectors' 100
# look-ups (35 + 15 asked), E (DGX Spark owners' threads) 11 in 60 look-ups, round 28 C 38 in two collectors' 126
# look-ups (40 + 20 asked), D 44 in 126 (45 + 17 asked), E 15 in 130 (25 + 18 asked); round 30 C 27 in 88 look-ups;
# round 31 C 32 in 90 look-ups; round 32 C 36 in two collectors' 175 look-ups (40 + 24 asked).
FEWER = {
    "round24_C": 17,
    "round25_C": 30,
    "round25_E": 24,
    "round26_A": 35,
    "round26_C": 30,
    "round26_D": 28,
    "round26_P": 12,
    "round27_C": 36,
    "round27_E": 11,
    "round28_C": 38,
    "round28_D": 44,
    "round28_E": 15,
    "round29_C": 35,
    "round30_C": 27,
    "round31_C": 32,
    "round32_C": 36,
    "round36_A": 35,  # its collector's look-ups ran out (68 of 60 used; four in five threads found were cited)
}
# Round 26 P, the first part drawn from web pages outside GitHub (forums, blogs, build logs): two collectors' 90
# look-ups found 12 pages with a copyable line, one of them a healthy line (the corpus's excerpts are a page's start)
# Round 30 D and round 34 D: their collectors kept 7 must-not-name lines of 40 (a fifth would be 8), written before the
# rounds were scored
FEWER_MUST_NOT_NAME = {"round26_P": 1, "round30_D": 7, "round34_D": 7}
# Round 28 E, drawn from DGX Spark owners' threads rather than from one family, holds what its two collectors found:
# 15 lines in three families (CUDA and the driver, vLLM, must-not-name)
FEWER_FAMILIES = {"round28_E": 3}
NAMED = [(name, row) for name, r in ROUNDS.items() for row in r.rows() if row.source not in MISSED[name]]


@pytest.mark.parametrize("name", ROUNDS)
def test_a_round_is_independent_of_everything_the_project_cites(name):
    rows = ROUNDS[name].rows()
    # a part loses the rows whose threads its session's samples came to cite (round 18 B: 6 of 50); some collectors
    # found fewer free threads in their family than asked (FEWER)
    assert len(rows) >= (70 if name in WHOLE else FEWER.get(name, 40)) and well_formed(rows)
    assert ROUNDS[name].cited(__file__) == {}
    assert ROUNDS[name].unknown_labels() == []
    # blind collectors take even-numbered threads and web pages on the even side of page_side; training the odd ones
    assert all(page_side(row.source) == "even" for row in rows if not row.source.startswith(GH))


@pytest.mark.parametrize(
    ("name", "least"),
    [
        ("round4", {"vllm": 20, "must-not-name": 8, "nccl": 8, "ray": 8, "docker": 8, "cuda": 8, "hub": 8}),
        ("round5", {"vllm": 15, "must-not-name": 9, "nccl": 7, "ray": 7, "docker": 7, "cuda": 7, "hub": 7}),
    ],
)
def test_a_whole_round_is_spread_like_an_operators_pastes(name, least):
    total = ROUNDS[name].score()[1]
    assert {family: min(total[family], n) for family, n in least.items()} == least


@pytest.mark.parametrize("round_", sorted({name.split("_")[0] for name in PARTS}))
def test_a_rounds_parts_share_no_thread_and_hold_must_not_name_lines(round_):
    parts = sorted(name.split("_")[1] for name in PARTS if name.split("_")[0] == round_)
    sources = [r.source for p in parts for r in ROUNDS[f"{round_}_{p}"].rows()]
    assert len(parts) >= 2 and len(sources) == len(set(sources))
    for part in parts:
        total = ROUNDS[f"{round_}_{part}"].score()[1]
        # a fifth of a part's rows, at most 9 (round 24 C: 5 of 17), but for round 26 P (above)
        least = FEWER_MUST_NOT_NAME.get(f"{round_}_{part}", min(9, sum(total.values()) // 5))
        assert total["must-not-name"] >= least and len(total) >= FEWER_FAMILIES.get(f"{round_}_{part}", 4)


def test_no_thread_is_held_out_twice():
    """Across the rounds in this form (a round's independence check leaves the other rounds out), every one of
    them tested here."""
    files = {path.stem for path in (DATA / "held_out").glob("round*.tsv")} - {"round3"}
    assert files == set(ROUNDS)
    sources = [r.source for one in ROUNDS.values() for r in one.rows()]
    assert len(sources) == len(set(sources))


@pytest.mark.parametrize(("name", "row"), NAMED, ids=[r.source.removeprefix(GH) for _, r in NAMED])
def test_a_held_out_line_is_named(name, row):
    assert {f.id for f in scan(row.line)} == label_ids(row.label), row.what


@pytest.mark.parametrize("name", ROUNDS)
def test_a_rounds_misses_are_the_listed_ones(name):
    right, total, _, missed = ROUNDS[name].score()
    assert missed == MISSED[name]
    assert (right, sum(total.values())) == SCORE[name]
