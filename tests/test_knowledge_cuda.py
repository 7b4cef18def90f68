"""The cuda, driver and system families: the figures their real samples carry come out as values,
the texts are told with them, and lines that only resemble a failure stay unnamed."""

import pytest

from spark_tui.knowledge import Watch, scan
from tests.helpers import SAMPLES, found


@pytest.mark.parametrize(
    "name, ident, figures",
    [
        ("cuda_device_assert_index", "cuda.device_side_assert", {"assertion": "srcIndex < srcSelectDimSize"}),
        (
            "cublas_execution_failed",
            "cuda.cublas_error",
            {"status": "EXECUTION_FAILED", "call": "cublasGemmEx"},
        ),
        ("cudnn_internal_error_caffe", "cuda.cudnn_error", {"status": "INTERNAL_ERROR"}),
        (
            "triton_out_of_shared_memory",
            "cuda.triton_out_of_resources",
            {"required": 126978, "limit": 101376},
        ),
        ("cuda_oom_cudamalloc", "cuda.out_of_memory", {"tried_gib": 141.423, "gpu": 0}),
        ("cuda_cublaslt_missing_loader", "cuda.cuda_library_missing", {"library": "libcublasLt.so.12"}),
        ("cuda_operation_not_supported_vmm", "cuda.operation_not_supported", {"call": "cuMemAddressReserve"}),
        ("triton_llvm_cannot_select", "cuda.llvm_cannot_select", {"intrinsic": "llvm.nvvm.tcgen05.wait.st"}),
        ("cuda_oom_pinned_host", "cuda.out_of_memory", {"tried_gib": 32.0}),
        ("oom_killer_invoked_arm64", "system.oom_killer", {"trigger": "p2pd"}),
        ("nvcc_unsupported_arch_120", "cuda.ptxas_unknown_arch", {"arch": "compute_120"}),
        ("libcuda_segfault_backtrace", "cuda.libcuda_segfault", {"symbol": "cuCtxGetDevice_v2"}),
        ("kernel_module_key_required", "system.module_signature_rejected", {"module": "nvhda"}),
        ("disk_ext4_remount_ro", "system.disk_io_error", {"device": "nvme0n1"}),
        ("torch_unknown_cuda_arch", "cuda.unknown_cuda_arch", {"arch": "8.6"}),
        ("g3_cuda_torch_cufile_missing", "cuda.cuda_library_missing", {"library": "libcufile.so.0"}),
        ("g3_tf_cudnn_runtime_older", "cuda.cudnn_version_mismatch", {"found": "8.0.4", "compiled": "8.1.0"}),
        (
            "g3_cuda_bitsandbytes_binary_missing",
            "cuda.bitsandbytes_setup_failed",
            {"library": "/notebooks/bitsandbytes/bitsandbytes/libbitsandbytes_cuda124.so"},
        ),
        ("g3_hub_weights_only_operand", "hub.checkpoint_weights_only", {"why": "Unsupported operand 118"}),
        ("g3_cuda_jax_resource_exhausted", "cuda.out_of_memory", {"tried_gib": 4.443}),
        ("g3_cuda_jax_bfc_request", "cuda.out_of_memory", {"tried_gib": 0.172, "gpu": 0}),
        ("g3_cuda_cupy_pool_allocating", "cuda.out_of_memory", {"tried_gib": 0.024}),
        ("g4_cuda_trt_engine_other_gpu", "cuda.trt_engine_wrong_gpu", {"gpu_cc": "9.0", "built_cc": "8.9"}),
        ("g4_cuda_trt7_engine_other_gpu", "cuda.trt_engine_wrong_gpu", {"gpu_cc": "6.1", "built_cc": "7.5"}),
        ("g4_cuda_numba_libnvvm_missing", "cuda.cuda_library_missing", {"library": "libNVVM"}),
        ("g4_cuda_cudnn8_nvrtc_unversioned", "cuda.cuda_library_missing", {"library": "libnvrtc.so"}),
        (
            "g4_hub_transformers_revision_missing",
            "hub.revision_not_found",
            {"revision": "v2.0.1", "model": "julien-c/EsperBERTo-small"},
        ),
        (
            "g3_cuda_deepspeed_cuda_mismatch",
            "cuda.extension_cuda_mismatch",
            {"found": "12.0", "torch_cuda": "11.7"},
        ),
        (
            "modprobe_nvidia_not_found_cloud",
            "driver.module_not_found",
            {"module": "nvidia", "kernel": "6.8.0-1015-aws"},
        ),
        (
            "gsp_firmware_missing",
            "driver.gsp_firmware_missing",
            {"driver": "555.58.02", "file": "gsp_tu10x.bin"},
        ),
        (
            "host_apei_memory_error",
            "system.host_hardware_error",
            {"event_severity": "corrected", "section": "memory error"},
        ),
        ("nvidia_smi_gpu_lost", "driver.gpu_lost", {"pci": "0000:02:00.0"}),
        ("nvidia_smi_device_handle_unknown_host", "driver.nvml_lost_in_container", {"pci": "0000:0B:00.0"}),
        (
            "kernel_oops_nvidia_null",
            "system.kernel_oops",
            {"kind": "kernel NULL pointer dereference", "function": "nvidia_vma_access", "module": "nvidia"},
        ),
        ("nvrm_gpu_not_supported", "driver.gpu_unsupported", {"driver": "535.104.05"}),
        ("nvrm_gpu_not_supported_legacy", "driver.gpu_unsupported", {"driver": "280.13"}),
        ("dataloader_shm_bus_error", "docker.shm_exhausted", {"pid": 7579}),
        (
            "kernel_soft_lockup",
            "system.cpu_lockup",
            {"cpu": 0, "seconds": 23, "process": "frigate.output:1243199"},
        ),
        ("kernel_hung_task_journal", "system.hung_task", {"process": "sbcl", "seconds": 1228}),
        ("kernel_hung_task_nvidia_uvm", "system.hung_task", {"process": "nvc:[driver]", "seconds": 120}),
        (
            "systemd_oomd_killed_service",
            "system.oomd_kill",
            {"unit": "testsuite-55-testbloat.service", "count": 2},
        ),
        ("disk_quota_exceeded", "system.disk_quota", {"path": "out/intermediate.ntw"}),
        (
            "read_only_fs_flashinfer",
            "system.read_only_fs",
            {"path": "/projects/bfmz/minum/llmflux-data/.cache/flashinfer"},
        ),
        ("cpu_thermal_throttle", "system.cpu_thermal_throttle", {"scope": "Package"}),
        ("t25a_ssh_auth_denied_title", "system.ssh_auth_denied", {"methods": "publickey,password"}),
        (
            "t25a_coredump_systemd_journal",
            "system.process_core_dumped",
            {"pid": 471, "process": "systemd-journal"},
        ),
        (
            "t25a_deepspeed_ssh_check_called_process",
            "deepspeed.host_unreachable_via_ssh",
            {"host": "192.168.3.100"},
        ),
        ("t25a_ext4_deleted_inode_referenced", "system.filesystem_corrupted", {"device": "sda9"}),
        (
            "t25a_apt_depends_not_going",
            "system.apt_unmet_dependencies",
            {"package": "nvidia-driver", "dependency": "nvidia-driver-libs"},
        ),
        (
            "t24f_thermal_zone_critical_shutdown",
            "system.thermal_shutdown",
            {"zone": "thermal_zone3", "temp_c": 80},
        ),
        (
            "t24f_thermal_zone_type_critical_hw_protection",
            "system.thermal_shutdown",
            {"zone": "thermal_zone0", "zone_type": "gpu-thermal"},
        ),
        (
            "triton_libcuda_symlink_hint",
            "cuda.triton_libcuda_unlinked",
            {"found": "/lib/x86_64-linux-gnu/libcuda.so.1"},
        ),
        (
            "cuda_nvrtc_builtins_missing",
            "cuda.nvrtc_builtins_missing",
            {"library": "libnvrtc-builtins.so.11.1"},
        ),
        (
            "cuda_nvrtc_builtins_unversioned",
            "cuda.nvrtc_builtins_missing",
            {"library": "libnvrtc-builtins.so"},
        ),
        (
            "triton_key_import_inductor",
            "cuda.triton_torch_mismatch",
            {"name": "triton_key", "module": "triton.compiler.compiler"},
        ),
        ("cufft_internal_error_paddle", "cuda.cufft_error", {"status": "CUFFT_INTERNAL_ERROR"}),
        (
            "cuda_ext_version_mismatch_wrapped",
            "cuda.extension_cuda_mismatch",
            {"found": "11.8", "torch_cuda": "11.7"},
        ),
        (
            "cuda_ext_version_mismatch",
            "cuda.extension_cuda_mismatch",
            {"found": "11.8", "torch_cuda": "12.4"},
        ),
        (
            "hub_disk_space_warning",
            "hub.download_disk_low",
            {
                "expected_mb": 3945.44,
                "free_mb": 3421.6,
                "path": "/root/.cache/huggingface/hub/models--Qwen--Qwen2.5-7B-Instruct/blobs",
            },
        ),
        (
            "hub_specific_connection_error_416",
            "hub.specific_connection_error",
            {"model": "apple/aimv2-3B-patch14-224", "status": 416},
        ),
        ("transformers_cant_load_weights", "hub.cannot_load_model", {"model": "bert-base-uncased"}),
        (
            "cuda_fmha_kernel_sm121_spark",
            "cuda.fmha_kernel_wrong_arch",
            {"kernel": "fmha_cutlassF_f32_aligned_32x128_gmem_sm80", "range": "sm80-sm100", "built": "sm121"},
        ),
        ("cuda_fmha_kernel_unquoted", "cuda.fmha_kernel_wrong_arch", {"built": "sm75"}),
        (
            "transformers_import_failed_one_line",
            "hub.transformers_module_import_failed",
            {"module": "transformers.models.mistral.modeling_mistral"},
        ),
        (
            "triton_ptxas_unsupported_version",
            "cuda.ptxas_older_than_ptx",
            {"ptx_version": "8.6", "ptxas_version": "8.5"},
        ),
        (
            "transformers_remote_code_flash_attn",
            "hub.remote_code_imports_missing",
            {"packages": "flash_attn"},
        ),
        (
            "transformers_weights_unreadable_shard",
            "hub.checkpoint_load_failed",
            {
                "file": "model_cache/models--decapoda-research--llama-30b-hf/snapshots/"
                "f991780f9362b2fcaefad066cd235058844562b7/pytorch_model-00039-of-00061.bin"
            },
        ),
        (
            "gen_cuda_cudart_missing_minor",
            "cuda.cuda_library_missing",
            {"library": "libcudart.so.11.0", "cuda": "11"},
        ),
        (
            "gen_hub_rate_limited_reqwest_tei",
            "hub.rate_limited",
            {
                "url_path": "Alibaba-NLP/gte-Qwen2-7B-instruct/resolve/"
                "a8d08b36ada9cacfe34c4d6f80957772a025daf2/1_Pooling/config.json"
            },
        ),
        ("gen_hub_read_timeout_mirror_cdn", "hub.download_timeout", {"host": "cdn-lfs-us-1.hf-mirror.com"}),
        ("gen_hub_offline_mirror_endpoint", "hub.offline_not_cached", {"url": "https://hf-mirror.com"}),
        ("gen2_hub_reqwest_401", "hub.invalid_token", {"url_path": "jeanvydes/jane/resolve/main/vocab.json"}),
        (
            "gen2_hub_rust_hf_hub_403",
            "hub.not_authorized",
            {"model": "meta-llama/Meta-Llama-3.1-8B-Instruct"},
        ),
        ("gen_cuda_header_missing_clang", "cuda.toolkit_headers_missing", {"header": "cuda_runtime.h"}),
        (
            "gen_hub_repo_not_found_dataset_api",
            "hub.repo_not_found",
            {"model": "FlippNipper/autotrain-data-zwha-djee-60wc"},
        ),
        (
            "k15b_cuda_vllm_rms_norm_hip_build",
            "cuda.op_no_cuda_kernel",
            {"op": "_C::rms_norm", "built_for": "HIP"},
        ),
        (
            "k15b_cuda_torchvision_nms_old",
            "cuda.op_no_cuda_kernel",
            {"op": "torchvision::nms", "built_for": "CPU"},
        ),
        (
            "k15b_cuda_device_mismatch_vllm_tp",
            "cuda.tensor_device_mismatch",
            {"device_a": "cuda:0", "device_b": "cuda:1", "method": "wrapper_CUDA__cudnn_convolution"},
        ),
        (
            "k15b_cuda_device_mismatch_got_on",
            "cuda.tensor_device_mismatch",
            {"argument": "mat1", "device_a": "cpu", "device_b": "cuda:0"},
        ),
        ("w15c_kernel_powerpc_hard_lockup", "system.cpu_lockup", {"cpu": 59}),
        ("w15c_nvme_timeout_disable_controller", "system.nvme_timeout", {"device": "nvme0"}),
        ("w15c_nvcc_value_sm30", "cuda.ptxas_unknown_arch", {"arch": "sm_30"}),
        (
            "w16_driver_kmod_moddep_missing_synced_tree",
            "driver.kmod_index_missing",
            {"kernel": "4.3.3-docker-1"},
        ),
        ("w16_driver_kmod_builtin_missing_zfs", "driver.kmod_index_missing", {"kernel": "4.2.0-18-generic"}),
        ("w16_driver_module_not_found_mkinitcpio", "driver.module_not_found", {"module": "nvidia"}),
        (
            "g18docker_modprobe_module_nix_store",
            "driver.module_not_found",
            {"module": "nvidia", "kernel": "6.12.17"},
        ),
        (
            "t16a_cusolver_create_vqgan",
            "cuda.cusolver_error",
            {"status": "INTERNAL_ERROR", "call": "cusolverDnCreate"},
        ),
        ("t16a_cusolver_code_vismvsnet", "cuda.cusolver_error", {"code": 7, "call": "cusolverDnCreate"}),
        ("t16a_cusparse_alloc_rapids", "cuda.cusparse_error", {"status": "ALLOC_FAILED"}),
        ("t16a_curand_launch_caffe", "cuda.curand_error", {"status": "LAUNCH_FAILURE"}),
        ("t16a_cufft_invalid_plan_nnabla", "cuda.cufft_error", {"status": "CUFFT_INVALID_PLAN"}),
        ("c16cuda_tf_kernel_dso_mismatch", "driver.nvml_mismatch", {"library_version": "361.93.2"}),
        ("c16cuda_tensorrt_error_code_2_requested_size", "cuda.out_of_memory", {"tried_gib": 3.126}),
        (
            "c16cuda_torch1_tensor_for_argument_on_cpu",
            "cuda.tensor_device_mismatch",
            {"argument": "mat1", "device_a": "CPU", "device_b": "GPU", "method": "addmm"},
        ),
        (
            "c16cuda_torch13_expected_device_type",
            "cuda.tensor_device_mismatch",
            {"device_a": "cuda", "device_b": "cpu", "method": "_th_mm"},
        ),
        (
            "c16cuda_dkms_build_of_ko_failed",
            "driver.dkms_build_failed",
            {"module": "bbswitch", "kernel": "4.16.13-desktop-1omv"},
        ),
        ("c16cuda_jax_unable_to_load_cusparse", "cuda.cuda_library_missing", {"library": "cuSPARSE"}),
        (
            "c16cuda_ctranslate2_library_not_found",
            "cuda.cuda_library_missing",
            {"library": "libcublas.so.12"},
        ),
        (
            "c17serve_tensorrt_version_tag_mismatch",
            "cuda.trt_engine_version_mismatch",
            {"current": "213", "engine": "232"},
        ),
        (
            "c17serve_tensorrt_plan_library_version",
            "cuda.trt_engine_version_mismatch",
            {"current": "5.1.5", "engine": "0.0.0"},
        ),
        ("w17_hub_mirror_dataset_404", "hub.repo_not_found", {"model": "liuhaotian/llava-v1.5-7b"}),
        (
            "w17_pcie_aer_nonfatal",
            "system.pcie_aer_uncorrected",
            {"severity": "Non-Fatal", "device": "0000:80:1b.4"},
        ),
        ("c17train_jax_out_of_memory_allocating", "cuda.out_of_memory", {"tried_gib": 18.654}),
        ("c17train_comfyui_allocation_exceeds_allowed_memory", "cuda.out_of_memory", {"gpu": 0}),
        ("c17train_xla_llvm_ptx87_required_sm120", "cuda.ptxas_unknown_arch", {"arch": "sm_120"}),
        ("c17train_jax_ptx_version_does_not_support_target", "cuda.ptxas_unknown_arch", {"arch": "sm_107a"}),
        (
            "c17train_comfyui_xformers_no_operator_blackwell",
            "cuda.xformers_no_operator",
            {"capability": "12, 0", "why": "too new"},
        ),
        (
            "c17infra_mlnx_ofed_add_kernel_support_build_failed",
            "driver.dkms_build_failed",
            {"kernel": "5.14.0-rc5"},
        ),
        (
            "c17infra_mlnx_ofed_kernel_modules_install_failed",
            "driver.dkms_build_failed",
            {"module": "mlnx-ofed-kernel-modules"},
        ),
        (
            "c17infra_gpu_operator_driver_ctr_no_kernel_build_dir",
            "driver.dkms_build_failed",
            {"kernel": "5.15.0-60-generic"},
        ),
        (
            "t17exc_dns_name_resolution_error",
            "system.name_resolution_failed",
            {
                "host": "jwtq338l7l47q5zh.us-east-1.aws.endpoints.huggingface.cloud",
                "error": "[Errno -2] Name or service not known",
            },
        ),
        (
            "t17exc_dns_aiohttp_connector",
            "system.name_resolution_failed",
            {"host": "www.example.org", "error": "Name or service not known"},
        ),
        (
            "t17exc_hub_name_resolution_cdn",
            "hub.unreachable",
            {"host": "cdn-lfs.huggingface.co", "cause": "[Errno 11001] getaddrinfo failed"},
        ),
        (
            "t17exc_hub_connect_timeout_class",
            "hub.unreachable",
            {"host": "huggingface.co", "cause": "timed out"},
        ),
        ("g19docker_k8s_device_plugin_xid_critical", "driver.xid_app", {"xid": 69}),
        ("g19cuda_cmake_unknown_cuda_arch_name", "cuda.unknown_cuda_arch", {"arch": "9.0a"}),
        ("g19cuda_paddle_oom", "cuda.out_of_memory", {"gpu": 0, "tried_gib": 0.055}),
        ("g19cuda_theano_device_oom", "cuda.out_of_memory", {"tried_gib": 0.031}),
        ("g19cuda_hfhub_500_title", "hub.server_error", {"status": 500, "reason": "Internal Server Error"}),
        (
            "t20c_ggml_cublas_not_supported",
            "cuda.cublas_error",
            {"message": "the requested functionality is not supported"},
        ),
        ("t20c_nvcc_cicc_killed_cudf_build", "system.build_killed", {"program": "cicc"}),
        ("t20c_gcc_cc1plus_killed_make_j4", "system.build_killed", {"program": "cc1plus"}),
        ("t20c_collect2_ld_killed_polish_locale", "system.build_killed", {"program": "ld"}),
        (
            "t20h_bnb_native_library_cpu_so_missing",
            "cuda.bitsandbytes_setup_failed",
            {"library": "/data1/prd/bitsandbytes/bitsandbytes/libbitsandbytes_cuda121.so"},
        ),
        (
            "t20h_ggml_loader_reads_gguf_docker",
            "hub.gguf_ggml_format_mismatch",
            {"found": "46554747", "found_name": "GGUF"},
        ),
        (
            "t20h_gguf_loader_reads_ggml_llama_gpt",
            "hub.gguf_ggml_format_mismatch",
            {"found": "67676a74", "found_name": "GGML (ggjt)"},
        ),
        ("t20h_gguf_loader_reads_ggml_quantize", "hub.gguf_ggml_format_mismatch", {"found": "tjgg"}),
    ],
)
def test_figures_come_out_as_values(name, ident, figures):
    finding = found(name, ident)
    assert {k: finding.figures.get(k) for k in figures} == figures


def test_the_texts_carry_the_figures():
    triton = found("triton_out_of_shared_memory", "cuda.triton_out_of_resources")
    assert "126978" in triton.title and "101376" in triton.title
    cublas = found("cublas_execution_failed_sgemm", "cuda.cublas_error")
    assert cublas.title == "cuBLAS failed: CUBLAS_STATUS_EXECUTION_FAILED in cublasSgemm"
    unsupported = found("nvrm_gpu_not_supported", "driver.gpu_unsupported")
    assert unsupported.title == "the installed NVIDIA driver 535.104.05 does not support this GPU"
    oops = found("kernel_oops_nvidia_audio", "system.kernel_oops")
    assert oops.title == "the kernel crashed (oops) in nv_audio_dynamic_power of module nvidia"


def test_an_out_of_memory_title_leaves_out_the_figures_its_line_lacks():
    """ggml says the size it asked for but not the free and total memory; torch's plain wording says
    none: the title tells what the line carried and no '?'."""
    ggml = found("cuda_oom_cudamalloc", "cuda.out_of_memory")
    assert ggml.title == "CUDA out of memory: tried 141.423 GiB"
    plain = scan("RuntimeError: CUDA error: out of memory")[0]
    assert plain.id == "cuda.out_of_memory" and plain.title == "CUDA out of memory"


def test_one_oomd_kill_told_by_two_lines_is_one_finding():
    """systemd-oomd names the cgroup path, systemd the unit: the same unit, so one finding."""
    w = Watch()
    w.feed_lines((SAMPLES / "systemd_oomd_killed.log").read_text().splitlines())
    kills = [f for f in w.ranked() if f.id == "system.oomd_kill"]
    assert len(kills) == 1 and kills[0].figures["unit"].startswith("vte-spawn-")


@pytest.mark.parametrize(
    "line",
    [
        # cuBLAS/cuDNN report success with the same prefix
        "Check failed: status == CUDNN_STATUS_SUCCESS (0 vs. 0)",
        "cublas returned CUBLAS_STATUS_SUCCESS",
        # the kernel telling that the temperature is back to normal
        "mce: CPU6: Package temperature/speed normal",
        # the thermal core registering its governors at boot (linux-surface#333), not a zone at its trip point
        "nov. 11 20:28:56 surface kernel: thermal_sys: Registered thermal governor 'step_wise'",
        # the hung-task help line alone
        '"echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.',
        # a PyTorch build note, not an assert that fired
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
        # systemd-oomd considering, not killing
        # session 25 (t25a): ssh's retry prompt after a wrong password (a person typing, not a launcher refused), a Rust
        # program's permission error, and systemd-coredump telling that limits turned the dump off (no crash named)
        "Permission denied, please try again.",
        # ssh's own line for a session the user ended (exit, logout): not a lost connection
        "Connection to ssh.prod.grid.cloud closed.",
        "Error: Permission denied (os error 13)",
        "Jul 29 01:29:40 f3 systemd-coredump[62744]: Resource limits disable core dumping for process 62715 (bash).",
        # ext4's routine mount and remount lines, and a corrected PCIe error (the link retried, nothing was lost)
        "EXT4-fs (nvme0n1p2): mounted filesystem with ordered data mode. Quota mode: none.",
        "pcieport 0000:00:1c.5: PCIe Bus Error: severity=Corrected, type=Physical Layer, id=00e5(Receiver ID)",
        "systemd-oomd[93234]: Considered 97 cgroups for killing, top candidates were:",
    ],
)
def test_lines_that_only_resemble_a_failure_stay_unnamed(line):
    assert [f.id for f in scan(line)] == []


def test_error_717_is_a_kernel_fault_named_by_the_catch_all_not_801s_unsupported_feature():
    # CUDA error 717, a kernel's fault on an address space (cudaGetErrorString's text): the CUDA catch-all (session 31),
    # never cuda.operation_not_supported, whichever program wraps it
    for line in (
        "RuntimeError: CUDA error: operation not supported on global/shared address space",
        "gpu1:2214:2350 [0] enqueue.cc:1512 NCCL WARN Cuda failure 'operation not supported on global/shared address space'",
    ):
        assert "cuda.operation_not_supported" not in {f.id for f in scan(line)}
    assert [
        f.id for f in scan("RuntimeError: CUDA error: operation not supported on global/shared address space")
    ] == ["cuda.cuda_error"]


def test_a_stream_capture_refusal_is_the_capture_failure_not_a_permission_error():
    """'operation not permitted when stream is capturing' is CUDA graph capture (vLLM's entry),
    not cudaErrorNotPermitted."""
    line = "RuntimeError: CUDA error: operation not permitted when stream is capturing"
    assert [f.id for f in scan(line)] == ["vllm.cuda_graph_capture_failed"]


def test_mxnet_check_naming_cudart_unloading_is_the_error_it_reports():
    """MXNet's CUDA check prints `e == cudaSuccess || e == cudaErrorCudartUnloading` before every
    error: the constant there is the check's text, the failure is the one named after it."""
    line = "Check failed: e == cudaSuccess || e == cudaErrorCudartUnloading CUDA: invalid device ordinal"
    assert [f.id for f in scan(line)] == ["cuda.invalid_device_ordinal"]


def test_a_call_after_cuda_unloaded_is_a_warning_not_the_failure():
    """'driver shutting down' is noise at exit: named, but below the errors of the run."""
    (f,) = scan("Warning: CUDA warning: driver shutting down (function uncheckedGetDevice)")
    assert f.id == "cuda.driver_shutting_down" and f.severity == "warn"


@pytest.mark.parametrize(
    "line",
    [
        # a web driver, not CUDA's
        "INFO webdriver: driver shutting down after session end",
        # the JIT compiled fine
        "ptxas info    : Compiling entry function 'kernel' for 'sm_121'",
    ],
)
def test_shutdown_and_ptx_lines_outside_cuda_stay_unnamed(line):
    assert [f.id for f in scan(line)] == []


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("RuntimeError: CUDA error: an illegal instruction was encountered", ["cuda.illegal_instruction"]),
        ("Illegal instruction (core dumped)", ["system.cpu_illegal_instruction"]),
        (
            "./run.sh: line 3: 12345 Illegal instruction     (core dumped) python3 serve.py",
            ["system.cpu_illegal_instruction"],
        ),
        # prose about the crash, not the crash
        ("Illegal instruction in ARM64 (ver 2.0.0)", []),
    ],
)
def test_a_gpu_illegal_instruction_and_a_cpu_one_are_told_apart(line, expected):
    assert [f.id for f in scan(line)] == expected


def test_the_loader_tls_figure_names_the_library_to_preload():
    line = "OSError: /usr/lib/aarch64-linux-gnu/libgomp.so.1: cannot allocate memory in static TLS block"
    (f,) = scan(line)
    assert f.id == "system.static_tls_exhausted"
    assert f.figures["library"] == "/usr/lib/aarch64-linux-gnu/libgomp.so.1"


def test_a_c_runtime_too_old_says_which_version_and_for_whom():
    line = (
        "ImportError: /usr/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.30' not found "
        "(required by /opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_python.so)"
    )
    (f,) = scan(line)
    assert f.id == "system.libstdcxx_too_old"
    assert f.figures["version"] == "3.4.30"
    assert f.figures["required_by"].endswith("libtorch_python.so")
    (g,) = scan("tgpt: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found (required by tgpt)")
    assert g.id == "system.glibc_too_old" and g.figures["version"] == "2.34"


def test_a_gpu_held_by_nova_names_the_holder():
    (f,) = scan("[  201.910514] NVRM: GPU 0000:01:00.0 is already bound to NovaCore.")
    assert f.id == "driver.probe_failed"
    assert f.figures == {"pci": "0000:01:00.0", "owner": "NovaCore"}


def test_a_module_the_key_refused_is_not_also_a_failed_insert():
    line = "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service"
    assert [f.id for f in scan(line)] == ["system.module_signature_rejected"]


def test_an_ngc_banner_names_the_driver_the_image_needs():
    text = (
        "ERROR: This container was built for NVIDIA Driver Release 590.48 or later, but\n"
        "       version 580.159.03 was detected and compatibility mode is UNAVAILABLE.\n"
    )
    (f,) = scan(text)
    assert f.id == "cuda.driver_too_old"
    assert f.figures["driver_needed"] == "590.48"
    assert "590.48" in f.title
