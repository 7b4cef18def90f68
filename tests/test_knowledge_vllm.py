"""The vLLM family's newer failures (0.9 and later wordings, serving-time refusals, weight loading,
kernels): each real sample names its entry with the figures as values, the specific cause wins over
the generic configuration refusal."""

import pytest

from spark_tui.knowledge import Watch, scan
from tests.helpers import found, sample


@pytest.mark.parametrize(
    "name, ident, figures",
    [
        (
            "vllm_config_invalid_model",
            "vllm.config_invalid",
            {"config": "ModelConfig", "error": "Expecting value: line 1 column 1 (char 0)"},
        ),
        ("vllm_rope_scaling_invalid", "vllm.rope_scaling_invalid", {"key": "rope_type"}),
        (
            "vllm_batched_tokens_below_max_len",
            "vllm.batched_tokens_below_max_len",
            {"batched": 8192, "max_len": 9216},
        ),
        (
            "vllm_batched_tokens_below_max_len_pydantic",
            "vllm.batched_tokens_below_max_len",
            {"batched": 2048, "max_len": 40960},
        ),
        (
            "vllm_served_model_not_found",
            "vllm.served_model_not_found",
            {"model": "Qwen1.5-14B-Chat-GPTQ-Int8"},
        ),
        (
            "vllm_served_model_not_found_client",
            "vllm.served_model_not_found",
            {"model": "/dev/shm/glm-4-9b-chat/"},
        ),
        ("vllm_tool_parser_not_found", "vllm.parser_not_found", {"kind": "tool call", "parser": "openai"}),
        (
            "vllm_reasoning_parser_not_found",
            "vllm.parser_not_found",
            {"kind": "Reasoning", "parser": "telechat"},
        ),
        (
            "vllm_quant_shard_marlin",
            "vllm.quant_shard_not_divisible",
            {"dim": "input_size_per_partition", "size": 7392, "block": 128},
        ),
        # the message wrapped after "divisible by": the block size is read from the next line
        ("vllm_quant_shard_fp8_block", "vllm.quant_shard_not_divisible", {"size": 64, "block": 128}),
        ("vllm_torch_compile_failed", "vllm.torch_compile_failed", {"backend": "inductor"}),
        ("vllm_triton_shared_memory_t4", "cuda.triton_out_of_resources", {"required": 81920, "limit": 65536}),
        ("vllm_lora_rank_too_large", "vllm.lora_rank_too_large", {"rank": 64, "max_rank": 16}),
        ("vllm_lora_rank_too_large_worker", "vllm.lora_rank_too_large", {"rank": 32, "max_rank": 16}),
        (
            "vllm_tokenizer_class_missing_v5",
            "vllm.tokenizer_class_missing",
            {"tokenizer": "TokenizersBackend"},
        ),
        ("vllm_mm_limit_exceeded", "vllm.mm_limit_exceeded", {"limit": 8, "modality": "image"}),
        (
            "vllm_mm_limit_exceeded_legacy",
            "vllm.mm_limit_exceeded",
            {"limit": 4, "modality": "image", "count": 10},
        ),
        (
            "vllm_weight_name_mismatch_gemma3",
            "vllm.weight_name_mismatch",
            {"name": "language_model", "model_class": "Gemma3ForCausalLM"},
        ),
        (
            "vllm_weight_shape_mismatch_v1",
            "vllm.weight_shape_mismatch",
            {"weight": "2048, 10240", "param": "2048, 4096"},
        ),
        ("vllm_max_tokens_too_large", "vllm.max_tokens_too_large", {"max_tokens": 32000}),
        ("vllm_fp8_unsupported_gpu_arch", "vllm.fp8_unsupported_gpu", {"arch": 89}),
        (
            "vllm_kv_cache_dtype_unsupported",
            "vllm.kv_cache_dtype_unsupported",
            {"backend": "FlashAttention V1"},
        ),
        ("vllm_spec_decode_token_budget", "vllm.spec_decode_token_budget", {"tokens": -1792}),
        ("vllm_unknown_env_var_v1", "vllm.unknown_env_var", {"name": "VLLM_USE_V1"}),
        (
            "vllm_quant_dtype_unsupported_mxfp4",
            "vllm.quant_dtype_unsupported",
            {"dtype": "torch.float16", "method": "mxfp4", "supported": "[torch.bfloat16]"},
        ),
        (
            "vllm_cutlass_kernel_missing",
            "vllm.cutlass_kernel_missing",
            {"op": "get_cutlass_moe_mm_data", "kernel": "cutlass_scaled_mm", "capability": 120},
        ),
        (
            "vllm_zmq_cannot_assign",
            "vllm.zmq_bind_failed",
            {"error": "Cannot assign requested address", "address": "tcp://10.27.91.102:13345"},
        ),
        ("vllm_zmq_address_in_use", "vllm.zmq_bind_failed", {"error": "Address already in use"}),
        ("vllm_invalid_attention_backend", "vllm.invalid_attention_backend", {"device": "cuda"}),
        (
            "vllm_mm_placeholder_mismatch_v1",
            "vllm.mm_placeholder_mismatch",
            {"items": "25 + 25 + 25", "tokens": 75, "placeholders": 147},
        ),
        (
            "vllm_lora_unsupported_model_yet",
            "vllm.lora_unsupported_model",
            {"model_class": "MolmoForCausalLM"},
        ),
        ("vllm_lora_adapter_not_found", "vllm.lora_adapter_not_found", {"name": "table_qc"}),
        ("vllm_kv_cache_memory_negative_spark", "vllm.kv_cache_memory_negative", {"gib": -2.26}),
        ("vllm_kv_cache_memory_negative_v0", "vllm.kv_cache_memory_negative", {"gib": -1.05}),
        (
            "vllm_mamba_block_over_batched_tokens",
            "vllm.mamba_block_over_batched_tokens",
            {"block": 2096, "batched": 2048},
        ),
        ("vllm_engine_variant_mrv2", "vllm.engine_variant_unsupported", {"feature": "hybrid/mamba models"}),
        (
            "vllm_transformers_mismatch_module",
            "vllm.transformers_mismatch",
            {"name": "LlamaFlashAttention2", "module": "transformers.models.llama.modeling_llama"},
        ),
        (
            "vllm_transformers_mismatch_backend",
            "vllm.transformers_mismatch",
            {"tokenizer": "TokenizersBackend"},
        ),
        (
            "vllm_gguf_architecture_unsupported_minimax",
            "vllm.gguf_architecture_unsupported",
            {"arch": "minimax-m2"},
        ),
        ("vllm_fastsafetensors_failed", "vllm.fastsafetensors_failed", {"key": "data_offsets"}),
        ("vllm_shm_broadcast_stall", "vllm.shm_broadcast_stall", {"seconds": 60}),
        ("vllm_quant_config_missing", "vllm.quant_config_missing", {"method": "awq"}),
        ("vllm_prompt_too_long_v0_scheduler", "vllm.prompt_too_long", {"length": 36893, "max_len": 1000}),
        (
            "vllm_unsupported_architecture_transformers",
            "vllm.unsupported_architecture",
            {"architectures": "BertForMaskedLM"},
        ),
        (
            "vllm_custom_all_reduce_failed",
            "vllm.custom_all_reduce_failed",
            {"where": "/workspace/csrc/custom_all_reduce.cuh:455", "error": "invalid argument"},
        ),
        ("vllm_tool_parser_tokens_missing", "vllm.tool_parser_tokens_missing", {"parser": "Hermes 2 Pro"}),
        (
            "vllm_unrecognized_config_class",
            "vllm.unrecognized_config_class",
            {"config_class": "LlavaConfig", "auto_class": "AutoModel"},
        ),
        (
            "vllm_deepgemm_invalid_image_gb10",
            "vllm.deepgemm_unsupported_gpu",
            {"code": 200, "error": "CUDA_ERROR_INVALID_IMAGE"},
        ),
        (
            "vllm_deepgemm_sf_transformation",
            "vllm.deepgemm_unsupported_gpu",
            {"error": "Unknown SF transformation"},
        ),
        (
            "vllm_head_size_flash_attn",
            "vllm.head_size_unsupported",
            {"head": 288, "backend": "FlashAttention", "supported": "[32, 64, 96, 128, 160, 192, 224, 256]"},
        ),
        ("vllm_head_size_v0", "vllm.head_size_unsupported", {"head": 100, "backend": None}),
        (
            "vllm_task_unsupported_embedding",
            "vllm.task_unsupported",
            {"task": "embedding", "supported": "{'generate'}"},
        ),
        ("vllm_transformers_config_clash_glm", "vllm.transformers_config_clash", {"name": "aimv2"}),
        (
            "vllm_model_type_missing_lora_folder",
            "vllm.model_type_missing",
            {"model": "/tmp/pycharm_project_351/src/lora_model_QwQ-32B"},
        ),
        (
            "vllm_invalid_choice_quantization_alias",
            "vllm.invalid_choice",
            {"option": "--quantization", "choice": "ascend"},
        ),
        (
            "vllm_engine_variant_mrv2_spec",
            "vllm.engine_variant_unsupported",
            {"feature": "ngram/ngram_gpu speculative decoding"},
        ),
        (
            "vllm_kv_cache_preemption_recompute",
            "vllm.kv_cache_preemption",
            {"mode": "RECOMPUTE", "total": 101},
        ),
        ("vllm_spec_decode_ray_executor", "vllm.spec_decode_unsupported_executor", {"backend": "RayGPU"}),
        (
            "vllm_moe_backend_unsupported_nvfp4",
            "vllm.moe_backend_unsupported_device",
            {"quant": "NvFp4", "backend": "FLASHINFER_CUTLASS", "reason": "current device"},
        ),
        (
            "vllm_moe_kernel_sm120",
            "vllm.moe_backend_unsupported_device",
            {"backend": "FlashInfer-CUTLASS", "sm": "sm_120"},
        ),
        (
            "vllm_cutlass_kernel_missing_required",
            "vllm.cutlass_kernel_missing",
            {"kernel": "cutlass_scaled_mm", "capability": 120, "required": "90 or 100"},
        ),
        ("vllm_quant_kernel_not_found_wna16", "vllm.quant_kernel_not_found", {"scheme": "WNA16"}),
        (
            "vllm_mm_placeholder_prompt_updates",
            "vllm.mm_placeholder_mismatch",
            {"count": 4, "modality": "image", "found": 3},
        ),
        (
            "vllm_flashinfer_kernel_failed_gb10",
            "vllm.flashinfer_kernel_failed",
            {"kernel": "BatchPrefillWithPagedKVCache", "error": "invalid resource handle"},
        ),
        (
            "vllm_flashinfer_sparse_mla_check",
            "vllm.flashinfer_kernel_failed",
            {"check": "num_tokens > 64 (5 vs. 64) : Decode (num_tokens <= 64)"},
        ),
        ("vllm_bnb_model_unsupported", "vllm.bnb_model_unsupported", {"model_class": "Qwen2ForCausalLM"}),
        ("vllm_token_out_of_vocab_chat", "vllm.token_out_of_vocab", {"token": 151665}),
        (
            "tgi_added_token_not_consecutive",
            "tokenizers.added_token_not_consecutive",
            {"token": "<unk>", "expected": 32000, "index": 0},
        ),
        (
            "vllm_lora_vocab_size_nemo",
            "vllm.lora_vocab_size_unsupported",
            {"min_vocab": 32000, "max_vocab": 128512},
        ),
        # programs beside vLLM: SGLang, TGI, LMDeploy, LiteLLM, Triton's vLLM backend
        ("sglang2_prompt_too_long_json", "vllm.prompt_too_long", {"length": 61709, "max_len": 40960}),
        # wrapped by the client's terminal: the limit is read from the next line
        (
            "vllm2_litellm_prompt_too_long_wrapped",
            "vllm.prompt_too_long",
            {"length": 1492905, "max_len": 1048576},
        ),
        ("sglang2_input_too_long", "sglang.input_too_long", {"length": 160062, "max_len": 59862}),
        (
            "sglang2_unsupported_architectures_legacy",
            "vllm.unsupported_architecture",
            {"architectures": "ChatGLMForConditionalGeneration"},
        ),
        ("sglang2_detokenizer_unresponsive", "sglang.detokenizer_unresponsive", {"seconds": 20}),
        ("tgi2_unsupported_model_type_cogvlm2", "tgi.unsupported_model_type", {"model_type": "cogvlm2"}),
        ("tgi2_sharded_needs_flash_attention", "tgi.sharded_needs_flash_attention", {"model": "Llama"}),
        ("gen_tgi_shard_size_not_divisible", "tgi.shard_size_not_divisible", {"size": 65027, "shards": 4}),
        ("gen_vllm_quant_input_not_aligned", "vllm.quant_shard_not_divisible", {"dim": "input"}),
        ("gen_sglang_scheduler_dead", "sglang.scheduler_died", {"rank": 0}),
        ("gen_sglang_init_failed_warmup", "sglang.init_failed", {"stage": "warmup"}),
        ("tgi2_shard_failed_to_start", "tgi.shard_crashed", {"shard": 0}),
        (
            "lmdeploy_turbomind_oom",
            "lmdeploy.turbomind_oom",
            {"where": "/lmdeploy/src/turbomind/utils/memory_utils.cu:32"},
        ),
        ("lmdeploy_session_len_run_out_of_tokens", "lmdeploy.session_len_exceeded", {"session": 119}),
        ("lmdeploy_engine_main_loop_task_failed", "lmdeploy.engine_loop_failed", {"task": "EngineMainLoop"}),
        (
            "vllm2_triton_backend_stat_loggers",
            "vllm.unrecognized_arguments",
            {"program": "build_async_engine_client_from_engine_args", "args": "stat_loggers"},
        ),
        ("gpustack_no_schedulable_worker", "gpustack.no_schedulable_worker", {"gib": 0.0, "gpus": 0}),
        (
            "tgi2_argument_validation_max_input",
            "tgi.argument_invalid",
            {"error": "`max_input_tokens`(65537) must be < `max_total_tokens`(65536)"},
        ),
        (
            "g3va_torch_cusparse_nvjitlink",
            "vllm.binary_mismatch",
            {"symbol": "__nvJitLinkComplete_12_4", "needs": "libnvJitLink.so.12"},
        ),
        ("g3va_llamacpp_unknown_arch_llama4", "vllm.gguf_architecture_unsupported", {"arch": "llama4"}),
        (
            "g3va_sglang_transformers_no_module",
            "vllm.unsupported_architecture",
            {"architectures": "Qwen2_5OmniModel"},
        ),
        ("g3va_llama_cpp_python_context_window", "vllm.prompt_too_long", {"length": 2285, "max_len": 2048}),
        ("g3va_mlc_prompt_over_limit", "vllm.prompt_too_long", {"length": 38726, "max_len": 8192}),
        ("g3va_rust_panic_addr_in_use", "vllm.port_in_use", {"address": "0.0.0.0:4347"}),
        ("g3va_ollama_listen_addr_in_use", "vllm.port_in_use", {"address": "127.0.0.1:11434"}),
        ("g3va_deepspeed_heads_mp_size", "vllm.tp_heads_divisible", {"heads": 52, "tp": 8}),
        ("g3va_sglang_nan_logits", "vllm.nan_probabilities", {"where": "logits"}),
        ("g3va_dbgpt_model_path_required", "vllm.missing_model", {"args": "--model_path"}),
        ("g3va_clap_unexpected_argument", "vllm.unrecognized_arguments", {"args": "--system"}),
        ("g3va_memory_profiling_wrapped", "vllm.memory_profiling_error", {"initial_gib": 82.94}),
        ("g3vc_tgi_sharded_flash_kernels", "tgi.sharded_needs_flash_attention", {"model": "RefinedWeb"}),
        ("g3vc_vllm_preempted_in_mode", "vllm.kv_cache_preemption", {"mode": "RECOMPUTE", "total": 1}),
        (
            "g3vc_vllm_some_weights_not_initialized",
            "vllm.weights_not_initialized",
            {"first": "model.layers.3.mlp.gate_up_proj.g_idx_sort_indices"},
        ),
        ("g3vc_vllm_bitsandbytes_version_wrong", "vllm.bitsandbytes_missing", {"version": "0.46.1"}),
        (
            "g3vc_transformers_bnb_4bit_min_version",
            "vllm.bitsandbytes_missing",
            {"bits": 4, "version": "0.39.0"},
        ),
        ("g3vc_transformers_bnb_needs_accelerate", "vllm.bitsandbytes_missing", {"bits": 8, "version": None}),
        ("g3vc_flash_attn_headdim_multiple", "vllm.head_size_unsupported", {"multiple": 32, "head": None}),
        ("g3vc_flash_attn3_head_size", "vllm.head_size_unsupported", {"supported": "64, 128, and 256"}),
        (
            "g3vc_gpustack_no_suitable_workers_instance",
            "gpustack.no_schedulable_worker",
            {"instance": "llama3.1-71sW4"},
        ),
        (
            "g3vc_vllm_runner_generate_refused",
            "vllm.task_unsupported",
            {"task": "generate", "supported": None},
        ),
        ("g3vc_vllm_audio_extra_missing", "vllm.video_support_missing", {"modality": "audio"}),
        ("vllm_video_support_missing", "vllm.video_support_missing", {"modality": "video"}),
        ("g3vc_sglang_request_truncated", "sglang.input_too_long", {"length": None, "max_len": None}),
        ("g3vc_sglang_kv_pool_full_retract", "vllm.kv_cache_preemption", {"retracted": 1, "mode": None}),
        (
            "g3vc_tgi_weight_does_not_exist",
            "vllm.weights_not_initialized",
            {"first": "model.layers.0.self_attn.q_proj.weight"},
        ),
        (
            "g3vc_tgi_weight_does_not_exist_json",
            "vllm.weights_not_initialized",
            {"first": "encoder.embed_tokens.weight"},
        ),
        ("g3vc_tgi_sharded_automodel", "tgi.sharded_needs_flash_attention", {"model": None}),
        ("w15b_tgi_sharded_needs_capability", "tgi.sharded_needs_flash_attention", {"model": "Llama"}),
        (
            "g3vb_bf16_gpu_name_unspaced",
            "vllm.bf16_unsupported",
            {"gpu": "NVIDIA GeForce RTX ..", "capability": "7.5"},
        ),
        (
            "g3vb_tgi_no_local_weights",
            "vllm.no_model_weights",
            {
                "model": "/data/models--meta-llama--Llama-2-7b-hf/snapshots/6fdf2e60f86ff2481f2241aaee459f85b5b0bbb9"
            },
        ),
        (
            "g3vb_zmq_address_in_use_windows",
            "vllm.zmq_bind_failed",
            {"error": "Address in use", "address": "tcp://127.0.0.1:45974"},
        ),
        (
            "g3vb_zmq_in_use_no_address",
            "vllm.zmq_bind_failed",
            {"error": "Address already in use", "address": None},
        ),
        (
            "g3vb_llamacpp_unknown_architecture_ollama",
            "vllm.gguf_architecture_unsupported",
            {"arch": "pangu-embedded"},
        ),
        (
            "g3vb_llamacpp_unknown_architecture_lmstudio",
            "vllm.gguf_architecture_unsupported",
            {"arch": "llama4"},
        ),
        (
            "g3vb_vllm_flash_attn_module_missing",
            "vllm.extension_missing",
            {"module": "vllm.vllm_flash_attn.layers"},
        ),
        ("g3vb_served_model_bare_name", "vllm.served_model_not_found", {"model": "$MODEL_ID"}),
        (
            "g3vb_state_dict_size_mismatch_llama31",
            "vllm.weight_shape_mismatch",
            {"name": "tok_embeddings.weight", "weight": "128256, 8192", "param": "32000, 8192"},
        ),
        (
            "g3vb_state_dict_unexpected_keys_gptq",
            "vllm.weight_name_mismatch",
            {"name": "model.layers.32.self_attn.q_proj.zeros"},
        ),
        (
            "g3vb_fp8_moe_gate_up_not_divisible",
            "vllm.quant_shard_not_divisible",
            {"dim": "output_size", "size": 192, "block": 128},
        ),
        (
            "g3vb_cutlass_scaled_mm_less_than_capability",
            "vllm.cutlass_kernel_missing",
            {"kernel": "cutlass_scaled_mm", "capability": 75},
        ),
        (
            "g4vc_flashinfer_error_in_function_sglang",
            "vllm.flashinfer_kernel_failed",
            {"kernel": "BatchPrefillWithRaggedKVCacheDispatched", "error": "Unsupported max_mma_kv: 0"},
        ),
        (
            "g4vc_flashinfer_cuda_call_vllm_rs",
            "vllm.flashinfer_kernel_failed",
            {"kernel": "prefill_sm90.cuh", "error": "invalid argument"},
        ),
        ("g4va_sglang_weights_leave_no_kv_memory", "sglang.not_enough_memory", {"fraction": 0.9}),
        (
            "g4va_quant_scheme_capability_sentence",
            "vllm.quantization_unsupported",
            {"minimum": 200, "current": 70},
        ),
        (
            "g4va_llamacpp_chat_template_parse_failed",
            "llamacpp.chat_template_parse_failed",
            {
                "error": "Failed to parse number: '.' ([json.exception.parse_error.101] parse error at line 1, column 1: syntax error while parsing value - invalid literal; last read: '.') at row 1, column 22:"
            },
        ),
        ("g4va_minja_value_not_callable", "vllm.chat_template_error", {"error": "null"}),
        (
            "g4va_scheduler_grammar_rejected_tokens",
            "vllm.structured_output_fsm_failed",
            {"tokens": "[1710, 198, 248069, 271]"},
        ),
        ("g4va_fa4_only_sm10_sm11", "vllm.kernel_arch_trap", {"arch": "SM 10.x and 11.x"}),
        ("g4vb_transformers_unknown_quantization_fp8", "vllm.unknown_quantization", {"method": "fp8"}),
        ("g4vb_trtllm_lora_low_rank", "vllm.lora_rank_too_large", {"rank": 1024, "max_rank": 64}),
        (
            "g4vb_xinference_mm_limit_image_items",
            "vllm.mm_limit_exceeded",
            {"modality": "image", "limit": 2, "count": 3},
        ),
        ("g4vb_trtllm_attention_sinks_backend", "vllm.attention_sinks_unsupported", {"backend": "TRTLLM"}),
        (
            "g4vb_vllm_mla_kv_data_type",
            "vllm.kv_cache_dtype_unsupported",
            {"backend": "MLA", "dtype": "torch.uint8"},
        ),
        (
            "k15a_vllm_swap_space_too_large",
            "vllm.swap_space_too_large",
            {"swap_gib": 16.0, "total_gib": 15.01},
        ),
        ("k15a_sglang_kv_pool_leak_allocator", "sglang.kv_pool_leak", {"pool": "token_to_kv_pool_allocator"}),
        ("k15a_sglang_kv_pool_leak_pool", "sglang.kv_pool_leak", {"pool": "pool"}),
        (
            "k15a_vllm_api_namespace_kv_cache_dtype",
            "vllm.api_version_mismatch",
            {"object": "Namespace", "attribute": "kv_cache_dtype"},
        ),
        (
            "k15a_vllm_api_asyncllm_engine",
            "vllm.api_version_mismatch",
            {"object": "AsyncLLM", "attribute": "engine"},
        ),
        (
            "k15c_nixl_handshake_setup_failed",
            "vllm.nixl_handshake_failed",
            {"kind": "handshake_setup_failed"},
        ),
        ("k15c_nixl_engine_id_mismatch", "vllm.nixl_handshake_failed", {"request": "chatcmpl"}),
        (
            "k15c_sglang_pd_transfer_timeout",
            "sglang.pd_kv_transfer_failed",
            {
                "side": "Decode",
                "rank": 6,
                "reason": "Request 8360203925601259718 timed out after 600.0s in KVPoll.WaitingForInput",
            },
        ),
        ("k15c_sglang_pd_prefill_transfer", "sglang.pd_kv_transfer_failed", {"side": "Prefill", "rank": 0}),
        # c16vllm: the same failures in other versions' and wrappers' words
        (
            "c16vllm_kv_cache_too_small_wrapped",
            "vllm.kv_cache_too_small",
            {"max_len": 196608, "needed_gib": 23.25, "available_gib": 22.5, "estimated_len": 190272},
        ),
        ("c16vllm_ambiguous_option", "vllm.unrecognized_arguments", {"args": "--model"}),
        ("c16vllm_tp_size_not_divisible", "vllm.tp_size_not_divisible", {"size": 32768, "tp": 3}),
        ("c16vllm_tp_size_not_divisible_vocab", "vllm.tp_size_not_divisible", {"size": 250682, "tp": 8}),
        ("c16vllm_sglang_ranks_load_unbalanced", "sglang.ranks_load_unbalanced", {"rank": 1}),
        ("c16vllm_gguf_arch_llama_server", "vllm.gguf_architecture_unsupported", {"arch": "spark2_5"}),
        ("c16vllm_sglang_scheduler_watchdog", "sglang.watchdog_timeout", {"seconds": 300.0}),
        (
            "w16_vllm_flashinfer_workspace_buffer_overflow",
            "vllm.flashinfer_workspace_overflow",
            {"buffer": "batch_prefill_tmp_v", "size": 283115520, "available": 268435456},
        ),
        (
            "w16_vllm_flashinfer_workspace_failed_to_allocate",
            "vllm.flashinfer_workspace_overflow",
            {"buffer": "batch_prefill_tmp_v", "size": 421134336},
        ),
        ("t16b_nixl_unknown_add_remote", "vllm.nixl_error", {"status": "UNKNOWN"}),
        ("c17serve_tgwebui_openai_context_length", "vllm.prompt_too_long", {"max_len": 4096, "length": 4443}),
        ("c17serve_trtllm_executor_insufficient_memory", "trtllm.executor_oom", {"component": "KV cache"}),
        (
            "c17serve_dify_context_length_messages",
            "vllm.prompt_too_long",
            {"max_len": 128000, "length": 140004},
        ),
        ("c17serve_fastchat_only_allowed_now", "vllm.served_model_not_found", {"model": "chatglm2-6b"}),
        (
            "c17train_diffusers_no_file_named_fp16_bin",
            "vllm.no_model_weights",
            {"model": "/local/data/RealVisXL_V5.0/unet"},
        ),
        ("g19vllmB_completions_api_unsupported_glm45", "vllm.chat_api_unsupported", {"api": "Completions"}),
        (
            "g19vllmB_multiproc_executor_io_thread_pool",
            "vllm.multiproc_executor_no_workers",
            {"attribute": "io_thread_pool"},
        ),
        ("g19vllmB_moe_no_backend_dgx_spark", "vllm.moe_backend_unsupported_device", {"quant": "NvFp4"}),
        (
            "g19vllmB_sglang_pd_prefill_bootstrap_failed_dp_rank",
            "sglang.pd_kv_transfer_failed",
            {"side": "Prefill", "rank": 0},
        ),
        (
            "g19vllmA_binary_mismatch_relative_no_colon",
            "vllm.binary_mismatch",
            {"library": "vllm/_C.abi3.so", "symbol": "_ZN3c106ivalue14ConstantString6createENSt7"},
        ),
        (
            "g19vllmA_binary_mismatch_backtick_quoted",
            "vllm.binary_mismatch",
            {"symbol": "_ZN3c106detail19maybe_wrap_dim_slowEllb"},
        ),
        ("g19vllmA_binary_mismatch_title_backticks", "vllm.binary_mismatch", {"library": "vllm/_C.abi3.so"}),
        (
            "g19vllmA_lmcache_blend_model_not_registered",
            "vllm.lmcache_engine_not_registered",
            {"instance": "vllm-instance"},
        ),
        (
            "t20a_hf_processor_type_step3",
            "vllm.hf_processor_wrong_type",
            {"found": "<class 'transformers.model.llama.tokenization_llama_fast.LlamaTokenizerFast'>"},
        ),
        (
            "t20a_processor_multiple_values_glm4v",
            "vllm.transformers_mismatch",
            {"processor": "Glm4vProcessor", "argument": "tokenizer"},
        ),
        (
            "t20a_max_tokens_chars_precheck",
            "vllm.max_tokens_too_large",
            {"max_tokens": 131072, "max_len": 131072},
        ),
        (
            "t20a_undefined_symbol_bare_c10_spark",
            "vllm.binary_mismatch",
            {"symbol": "_ZN3c1013MessageLoggerC1ENS_14SourceLocationEib"},
        ),
        ("t20a_moe_compressed_fp16", "vllm.quant_dtype_unsupported", {"supported": "float16"}),
        ("t20a_sglang_detokenizer_lowercase", "sglang.detokenizer_unresponsive", {"seconds": 20}),
        (
            "t20e_llamafactory_limit_mm_kwarg_py39",
            "vllm.unrecognized_arguments",
            {"args": "limit_mm_per_prompt"},
        ),
        (
            "t20e_openrlhf_llmengine_no_model_executor",
            "vllm.api_version_mismatch",
            {"object": "LLMEngine", "attribute": "model_executor"},
        ),
        ("t20e_qwen2_tools_extra_forbidden", "vllm.request_field_unknown", {"field": "tool_choice"}),
        ("t20e_runpod_functions_extra_forbidden", "vllm.request_field_unknown", {"field": "functions"}),
        ("t20e_lm_eval_messages_field_required", "vllm.request_field_missing", {"field": "messages"}),
        ("t20e_openrs_trl_server_not_up", "vllm.rl_vllm_server_waiting", {"seconds": 2.0}),
        ("t20e_gpustack_no_backend_image", "gpustack.backend_image_missing", {"backend": "vLLM"}),
        ("t20i_decord_missing", "vllm.video_support_missing", {"package": "decord", "modality": None}),
        (
            "t20i_ray_classmethodnode_tensor_transport",
            "vllm.ray_version_unsupported",
            {"attribute": "with_tensor_transport", "required": None, "found": None},
        ),
        (
            "t20i_eagle_proposer_no_positions",
            "vllm.spec_decode_proposer_bug",
            {"object": "EagleProposer", "attribute": "positions"},
        ),
        (
            "t20i_pp_runner_no_drafter",
            "vllm.spec_decode_proposer_bug",
            {"object": "GPUModelRunner", "attribute": "drafter"},
        ),
        (
            "t20i_tgi_exllamav2_kernels_missing",
            "tgi.exllama_kernels_missing",
            {"kernels": "exllamav2_kernels"},
        ),
    ],
)
def test_figures_come_out_as_values(name, ident, figures):
    finding = found(name, ident)
    assert {k: finding.figures.get(k) for k in figures} == figures


def test_the_fix_carries_the_figures():
    f = found("vllm_batched_tokens_below_max_len", "vllm.batched_tokens_below_max_len")
    assert "--max-num-batched-tokens to 9216" in f.fix and "--max-model-len to 8192" in f.fix
    g = found("vllm_lora_rank_too_large_worker", "vllm.lora_rank_too_large")
    assert "--max-lora-rank 32" in g.fix
    h = found("vllm_mm_limit_exceeded", "vllm.mm_limit_exceeded")
    assert "'{\"image\": N}'" in h.fix and "(8)" in h.title


def test_a_refused_config_names_its_message_and_yields_to_a_known_cause():
    """The pydantic refusal alone names the check's message; with a message the table knows, the
    specific entry is the cause and the generic one follows it."""
    alone = Watch("spark-1")
    alone.feed_lines(sample("vllm_config_invalid_apiserver").splitlines())
    cause = alone.cause()
    assert cause is not None and cause.id == "vllm.config_invalid"
    assert "ModelConfig" in cause.title and "Expecting value" in cause.title

    known = Watch("spark-1")
    known.feed_lines(sample("vllm_batched_tokens_below_max_len_pydantic").splitlines())
    cause = known.cause()
    assert cause is not None and cause.id == "vllm.batched_tokens_below_max_len"
    assert [f.id for f in known.ranked()] == ["vllm.batched_tokens_below_max_len", "vllm.config_invalid"]


def test_an_engine_that_died_is_secondary_to_its_cause():
    """V0's 'Engine loop has died' follows from something said above it: a missing vllm._C is the cause."""
    w = Watch("spark-2")
    w.feed_lines(sample("vllm_extension_missing_qwen").splitlines())
    cause = w.cause()
    assert cause is not None and cause.id == "vllm.extension_missing"
    assert {f.id for f in w.ranked() if f.secondary} == {"vllm.engine_core_died"}


def test_an_ignored_environment_variable_is_information_only():
    """An unknown VLLM_ variable is told (it has no effect) but never stops a launch."""
    w = Watch("spark-1")
    w.feed_lines(sample("vllm_unknown_env_var").splitlines())
    (f,) = w.ranked()
    assert f.severity == "info" and w.cause() is None
    assert f.count == 3 and f.figures["name"] == "VLLM_SERVE_ARGS"  # the latest of the three


def test_a_hybrid_models_block_names_the_budget_to_set():
    f = next(f for f in scan(sample("vllm_mamba_block_over_batched_tokens")) if f.id.startswith("vllm.mamba"))
    assert "(2048)" in f.title and "at least 2096" in f.fix


def test_a_request_refused_in_preprocessing_follows_its_cause():
    """The server's 'Error in preprocessing prompt inputs' wraps the request's own refusal: the
    refusal is the cause, the wrapper is secondary and only a warning (the server keeps serving)."""
    w = Watch("spark-1")
    w.feed_lines(sample("vllm_max_tokens_too_large").splitlines())
    assert [f.id for f in w.ranked()] == ["vllm.max_tokens_too_large", "vllm.request_preprocessing_failed"]
    alone = scan(sample("vllm_request_preprocessing_failed"))
    assert [(f.id, f.severity, f.secondary) for f in alone] == [
        ("vllm.request_preprocessing_failed", "warn", True)
    ]


def test_a_preemption_warning_names_the_mode_and_its_count():
    f = found("vllm_kv_cache_preemption_recompute", "vllm.kv_cache_preemption")
    assert f.severity == "warn" and "(RECOMPUTE)" in f.title and "101 preemptions" in f.title


def test_an_old_engine_that_died_is_secondary_to_what_killed_it():
    """The V0 engine's background loop and a TGI shard that never started are named only when
    nothing above says why (a port taken by another process)."""
    assert [f.id for f in scan(sample("vllm2_engine_background_task_failed"))] == ["vllm.engine_core_died"]
    ids = [f.id for f in scan(sample("tgi2_shard_failed_to_start_port_in_use"))]
    assert ids[0] == "torch.rendezvous_port_in_use"
