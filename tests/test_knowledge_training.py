"""Training rounds (tests/data/training/): real lines and whole pastes sampled the way a blind round is (THE line or
paste of each thread, from threads nothing in the project cited, labelled from the thread before the table was run),
scored once at first look, then fixed by the kind of each miss (a kind's other wordings, a kind the table lacked).
Unlike the held-out rounds they are knowledge: every row must be named as labelled now, except the ones LEFT (with
why). Each file's header tells how it was collected and its first-look and final scores."""

import pytest

from spark_tui.knowledge import scan
from tests.held_out import PasteRound, Round, label_ids, page_side, well_formed
from tests.helpers import DATA

FOLDER = DATA / "training"
LINES = {path.stem: Round(path.stem, folder="training") for path in sorted(FOLDER.glob("*_round.tsv"))}
PASTES = {path.stem: PasteRound(path.stem, folder="training") for path in sorted(FOLDER.glob("pastes_*.tsv"))}
# A row no fix may name as labelled: source -> why.
GH = "https://github.com/"
LEFT = {
    # t38n: OpenFlowLM-Next's download check warns `Hash mismatch (expected A, have B); continuing` (its source could not be
    # read here); the same words are printed by many programs for many kinds of files, so the line alone does not say a
    # model download arrived wrong
    GH
    + "Atomic-Germ/OpenFlowLM-Next/issues/61": "oflm's `Hash mismatch (expected A, have B); continuing` warning",
    # t36f: aiohttp's TransferEncodingError class line, its message on the next line (which the table names): the class is
    # also raised for a malformed chunk size, so the line alone does not say the answer was cut
    GH
    + "vllm-project/vllm/issues/6885": "aiohttp's `TransferEncodingError: 400, message:` without its message line",
    # t33a: the loader's `undefined symbol: S` retold in a title without its library; lld's link-time
    # `error: undefined symbol: S` says the same words, so they do not say a library loaded against the wrong one
    GH + "kvcache-ai/ktransformers/issues/1667": "`undefined symbol: aocl_...` retold without its library",
    # t27b: a Dify 2.0 beta's own UnboundLocalError in its LLM node (fixed in Dify): no failure of the backend or the cluster
    GH
    + "langgenius/dify/issues/25959": "Dify's own bug (curr_message_tokens unbound), not the stack spark-tui runs",
    # t25j: retold in the reporter's own words (host-OOM-killed, the kernel sends SIGKILL): no program's wording to anchor on
    GH + "vllm-project/vllm/issues/43969": "a host OOM kill retold in a sentence (no program's words)",
    # t28g: an EngineCore kill -9 cannot end, retold in the reporter's words (no kernel line, no program's wording)
    GH + "vllm-project/vllm/issues/25127": "an unkillable process retold in a sentence (no program's words)",
    # t25j: cut before the missing target: `ptxas` has no ... does not say what it lacks
    GH + "THUDM/slime/pull/1835": "a retold ptxas limit cut before its sm_121a target",
    # t25j: NVML's refusal retold in the reporter's words (cannot give GPU memory information), no NVML wording left
    GH + "rossumai/nvgpu/pull/37": "NVML's memory query refusal on GB10 retold without NVML's words",
    # vLLM 0.4.0's pynccl destructor after a failed constructor: held-out round 14 labels this `Exception ignored` noise
    # `-` (the failure is the error above it), so no entry may name it; round 21 asks for a kind (left to the lead, t24c)
    GH
    + "NVIDIA/nccl/issues/1257": "'NCCLCommunicator' object has no attribute 'comm' (a held-out row says noise)",
    # NCCL's WARN around CUDA's 'invalid argument': the README's rule names the wrapped error's entry, but held-out rows
    # (rounds 7-13) label this wording nccl.cuda_error, so cuda.invalid_argument may not take it (t24c)
    GH
    + "vllm-project/vllm/issues/4411": "NCCL's `Cuda failure 'invalid argument'` (held-out rows say nccl.cuda_error)",
    # the same jit/handle.hpp CUDA_ERROR_INVALID_IMAGE line is DeepGEMM's missing sm_12x path on a GB10 (its sample)
    GH
    + "deepseek-ai/DeepGEMM/issues/359": "an NVRTC failure on Hopper that the line cannot tell from a GB10's",
    # TVM's generic check; the line never says FlashInfer
    GH + "flashinfer-ai/flashinfer/pull/3989": "TVM's `Check failed: (ok) is false`",
    # a plugin's method called with a keyword it lacks: any Python program prints it
    GH
    + "tonyd2wild/DeepSeek-v4-Flash-Vision-Exp-DSpark-1M-NVFP4-KV-2x-DGX-Spark/issues/11": "a plain TypeError",
    # the line is a real loss's; only the thread shows that a retry overcame it
    GH + "meta-pytorch/torchcomms/pull/2358": "a TCPStore reset that a retry overcame",
    # nccl-tests built without MPI=1: no line says so
    GH + "NVIDIA/nccl-tests/issues/107": "each process its own rank 0",
    # no kind of the serving stack says why the backend answered 503
    GH + "open-webui/open-webui/issues/9419": "aiohttp's 503 from a llama.cpp backend",
    # a bug of one program
    GH + "gpustack/gpustack/issues/568": "GPUStack's KeyError 'usage'",
    # a bare 500 passed on by an agent: the server's log holds why
    GH + "FoundationAgents/OpenManus/issues/827": "the OpenAI client's `Internal Server Error`",
    # internal assertions of TensorRT-LLM; the threads show no one cause an operator could act on
    GH + "NVIDIA/TensorRT-LLM/issues/699": "TensorRT-LLM's `mNextBlocks.empty()` assertion",
    GH + "NVIDIA/TensorRT-LLM/issues/5389": "TensorRT-LLM's `Error occurred when running GEMM!`",
    # torch's words for a vLLM op missing from torch.ops.vllm on a Jetson source build: the thread never says why
    GH + "vllm-project/vllm/issues/2021": "'_OpNamespace' 'vllm' object has no attribute ...",
    # TGI logs it when it falls back to models without flash attention: harmless there (a held-out round's TGI#211)
    GH
    + "huggingface/text-generation-inference/issues/533": "TGI's `GPU with CUDA capability 7 0 is not supported`",
    # Triton's bare PTXASError heads every ptxas failure and reads as cuda.ptxas_unknown_arch (a Spark's usual cause); this
    # thread's cause is the ptxas line after it ('Feature ... not supported on .target'), cuda.ptxas_unsupported_instruction
    GH + "sgl-project/sglang/issues/8879": "Triton's bare `Internal Triton PTX codegen error`",
    # a vLLM API change under a Ray Serve tutorial's deployment: Python's AttributeError names no program (t22c)
    GH + "ray-project/ray/issues/50275": "AttributeError: 'str' object has no attribute 'name'",
    # the user's own code.py shadowed the standard library's `code` module, which Ray imports: nothing in the line says so (t22c)
    GH + "ray-project/ray/issues/50163": "AttributeError: module 'ray._private' has no attribute 'worker'",
    # Databricks' Ray-on-(Apache) Spark API of another Ray release: a plain TypeError of one function (t22c)
    GH + "ray-project/ray/issues/44295": "TypeError: _setup_ray_cluster() missing ... 'num_worker_nodes'",
    # torch's per-address connect warning, labelled as the error after the retries (`failed to connect to any network
    # address`, torch.rendezvous_timeout): the line itself says one attempt failed, torch.store_connect_retrying
    GH
    + "hiyouga/LlamaFactory/issues/3715": "c10d's `[W socket.cpp] The client socket has failed to connect to`",
    # Tenstorrent's vLLM plugin refusing a length on its N150 card: no kind of an NVIDIA cluster's stack
    GH + "tenstorrent/tt-inference-server/issues/3151": "TT-Llama's max_model_len limit on N150",
    # a check of one TRL development build that every non-main process failed (fixed the next day)
    GH + "huggingface/trl/issues/3885": "TRL's `vllm_mode must be either 'server' or 'colocate'` bug",
    # KServe's wrapper around a bare ZeroDivisionError; the thread never says what divided by zero
    GH
    + "kserve/kserve/issues/3769": "KServe's `Failed to start model server: integer division or modulo by zero`",
    # a bug of vLLM 0.8.3 (gone in 0.8.5): an AttributeError on a layer any Python program could print
    GH + "kubeai-project/kubeai/issues/533": "'ColumnParallelLinear' object has no attribute 'input_scale'",
    # ethtool's `Link detected: no` retold in prose: diagnose's ethtool reader names link.down with the port from the
    # whole output; a line pattern would name it twice there and name a Spark's unused ports in any paste (t25e)
    GH + "EttusResearch/uhd/issues/765": "ethtool's `link detected: no` retold without the output around it",
    # Dify's summary of any 404 of an OpenAI-compatible server: a wrong model name and a wrong route read the same
    GH + "langgenius/dify/issues/13297": "Dify's `Credentials validation failed with status code 404`",
    # the header TGI's shard logs before the traceback of a model it could not build: the table names the traceback's
    # cause, not the header (tests/data/source_messages/srcservers_tgi.tsv)
    GH + "huggingface/text-generation-inference/issues/1365": "TGI's `Error when initializing model` header",
    # a bare `KeyError: '<model type>'` is any missing key (test_a_bare_key_error_is_no_unknown_model_type_...): only
    # transformers' CONFIG_MAPPING line above it, which the reporter did not paste, makes it an unknown model type
    GH + "hiyouga/LlamaFactory/issues/8521": "a bare `KeyError: 'qwen2_5_vl'`",
    # NVSHMEM's warning only turns off Data Direct (its source: libmlx5 is dlopen-ed for that alone); the thread's fatal
    # cause, IBGDA on a NIC that is not mlx5 (Alibaba eRDMA), is on lines the reporter did not paste (t23b)
    GH
    + "deepseek-ai/DeepEP/issues/759": "NVSHMEM's `Unable to dlopen libmlx5dv. Disabling directNIC features.`",
    # msgspec's bare refusal of a Struct field (ROLL's vendored engine building vLLM's EngineCoreRequest with the `prompt`
    # newer releases dropped): msgspec prints it for any Struct of any program (t23a)
    GH + "alibaba/ROLL/issues/153": "msgspec's bare `TypeError: Unexpected keyword argument 'prompt'`",
    # lm-eval importing a name vLLM 0.22 moved: the module (`from 'vllm.entrypoints.chat_utils'`) was re-wrapped onto the
    # next line, so nothing on this one says whose name it is (t23a)
    GH
    + "vllm-project/vllm-ascend/pull/10595": "`cannot import name 'resolve_hf_chat_template'` without its module",
    # verl's Megatron worker building its synchronous rollout class for the async server mode: a bug of one program (t23a)
    GH
    + "verl-project/verl/issues/2001": "AttributeError: 'vLLMRollout' object has no attribute 'execute_method'",
    # Ollama 0.1.2x prints the same empty list after its ROCm library search on every NVIDIA host; the line alone
    # cannot say that libnvidia-ml is the library missing (a Jetson before JetPack 6) (t23h)
    GH + "ollama/ollama/issues/1979": "Ollama's `Discovered GPU libraries: []`",
    # a Jetson has no nvidia-smi at all; on a dGPU host the same line is a container started without the GPU runtime
    # (docker.gpu_not_in_container), which the line cannot tell apart (t23h)
    GH + "NVIDIA/nvidia-docker/issues/1019": '`exec: "nvidia-smi": executable file not found` on a Jetson',
    # TurboMind's internal FT_CHECK that a device's shared weights exist (LlamaTritonModel.cc getParams): the thread shows a
    # CUDA 11.8 wheel on CUDA 12 and then an out-of-memory, no one cause the line could name (t23g)
    GH + "InternLM/lmdeploy/issues/1375": "TurboMind's `Assertion fail: .../LlamaTritonModel.cc:384`",
    # a bug of one program: RAGFlow's model check calling .strip() on an answer without content (t23g)
    GH
    + "infiniflow/ragflow/issues/10349": "RAGFlow's `Fail to access model(...).'NoneType' object has no attribute 'strip'`",
    # as dify#13297: Dify's summary of any 404 of an OpenAI-compatible server, a wrong model name and a wrong route alike (t23g)
    GH + "langgenius/dify/issues/5419": "Dify's `Credentials validation failed with status code 404`",
    # serde's words for one Rust server's config struct (candle-vllm reading a multimodal config.json): no kind of the stack (t23g)
    GH + "EricLBuehler/candle-vllm/issues/199": "candle-vllm's `missing field `vocab_size``",
    # a bug of one program: GPUStack's scheduler comparing an unset extended-KV-cache size (fixed in 2.0.1) (t23g)
    GH + "gpustack/gpustack/issues/3013": "GPUStack's `Failed to find candidate: '>' not supported ...`",
    # a plain TypeError of vLLM's MTP auto-detection (num_speculative_tokens unset): any Python program prints it (t23i)
    GH + "vllm-project/vllm/issues/55323": "TypeError: '>' not supported between 'NoneType' and 'int'",
    # MinerU's SGLang engine started outside the main process: the AttributeError names neither (t23i)
    GH + "opendatalab/MinerU/issues/2651": "AttributeError: 'NoneType' object has no attribute 'event'",
    # Transformers' Qwen2.5-VL processor check on a vLLM/Transformers pairing: the thread shows no one cause (t23i)
    GH
    + "vllm-project/vllm/issues/13655": "`The length of fps (3) must be equal to the length of video_grid_thw (1)`",
    # a bare 500 of a llama.cpp rerank server passed on by RAGFlow: the server's log holds why (t23i)
    GH + "infiniflow/ragflow/issues/16033": "requests' `500 Server Error ... for url: .../rerank`",
    # as LlamaFactory#8521: a bare `KeyError: '<model type>'`, retold in Chinese without transformers' CONFIG_MAPPING line (t24e)
    GH + "QwenLM/Qwen3/issues/247": "a bare `KeyError: 'qwen2'` retold",
    # ctr with containerd/rust-extensions' skeleton shim, which implements no task service: a shim developer's
    # experiment, not a runtime an operator installs (t24d)
    GH + "containerd/rust-extensions/issues/53": "ctr's `/containerd.task.v2.Task/Create is not supported`",
    # Cline's own cloud gateway refusing a field its client release sent (reasoning_details): a bug of one release, and
    # the zod wording `Invalid input: expected string, received undefined` is any TypeScript validator's (t25c)
    GH + "cline/cline/issues/8295": "Cline's gateway `Invalid input: expected string, received undefined`",
    # LiteLLM reading an Ollama reply without eval_count, passed on as a 500 whose whole message is the KeyError's key:
    # a bug of one LiteLLM release, and `'eval_count'` alone says nothing an operator can act on (t25c)
    GH + "microsoft/autogen/issues/2163": "LiteLLM's KeyError `'eval_count'` passed on as a 500",
    # a JavaScript TypeError in Continue's diff streamer for its vllm provider (one Continue release's bug); the words
    # `reading 'toLowerCase'` are any JavaScript program's (t25n)
    GH
    + "continuedev/continue/issues/3021": "Continue's vllm provider: `Cannot read properties of undefined`",
    # a bare JSONDecodeError message: Dify's agent parsing streamed tool-call arguments, but any JSON parser says it (t26f)
    GH
    + "langgenius/dify-official-plugins/issues/1121": "a bare `Unterminated string starting at` (any JSON parser's)",
    # gradio indexing choices[0] of vLLM's usage-only last stream chunk: the line is any Python program's IndexError (t26f)
    GH + "gradio-app/gradio/issues/11729": "a bare `IndexError: list index out of range`",
    # the OpenAI API refusing a bare tool name as tool_choice, the title cut after `is invalid.`: a client's bug, no kind (t26f)
    GH + "langchain-ai/langchain/issues/16767": "OpenAI's `'$.tool_choice' is invalid.` cut in a title",
    # a notes page retelling an IndexError in fused_moe/layer.py (mxfp4 forced on a BF16 checkpoint): vLLM prints no words
    # of its own for it, and `IndexError` in a layer file is any tensor bug's (t28p)
    "https://conselara.dev/notes/dgx-spark-model-selection/": "a retold IndexError of mxfp4 on a BF16 checkpoint",
    # a blog's bullet retelling SGLang's 400 for a Mistral conversation as `strict-alternation`: not the validator's words
    # (its `Unexpected role 'X' after role 'Y'` and the templates' `Conversation roles must alternate` are named) (t28p)
    "https://sovgrid.org/blog/five-dgx-spark-disasters-i-survived/": "a retold strict-alternation BadRequestError",
    # a maintainer's paraphrase of vLLM's start-up refusal, `free memory less than desired` in quotes: vLLM says `Free memory
    # on device (...) on startup is less than desired GPU memory utilization`, and a pattern on the paraphrase would be a
    # near miss squeezed in (t29f)
    GH
    + "MiaAI-Lab/DeepSeek-v4-Flash-DSpark-2x-DGX-Spark/issues/5": "a paraphrased `free memory less than desired`",
    # libibverbs warns for every provider listed in /etc/libibverbs.d whose library is missing; the table names it only for
    # mlx5 (a Spark's ConnectX-7) and leaves other providers unnamed (srcnccl_rdma.tsv, not_recognised's pvrdma line): the
    # line alone cannot say an rxe (Soft-RoCE) device was in use (t35d2)
    GH
    + "SoftRoCE/rxe-dev/issues/49": "libibverbs' `couldn't load driver 'rxe'` (a provider of no Spark hardware)",
    # t35j: labelled blind ollama.capability_unsupported, whose means then also listed chatting with an embedding model; the
    # table gives Ollama's `does not support chat` / `generate` to vllm.chat_api_unsupported (session 26, ph26b) and names
    # it so, rightly: the label picked the sibling entry (its means now points there)
    GH
    + "ollama/ollama/issues/12183": "Ollama's `does not support generate`: vllm.chat_api_unsupported by the table's split",
}
LINE_ROWS = [(name, row) for name, r in LINES.items() for row in r.rows()]
PASTE_ROWS = [(name, row) for name, r in PASTES.items() for row in r.rows()]


def _sources(path, column: int) -> set[str]:
    rows = path.read_text(encoding="utf-8").splitlines()
    return {raw.split("\t")[column] for raw in rows if raw and not raw.startswith("#")}


def test_the_training_rounds_are_there_and_share_no_thread_with_a_held_out_round():
    held_out = {s for path in (DATA / "held_out").glob("round*.tsv") for s in _sources(path, 0)}
    held_out |= {s for path in (DATA / "held_out").glob("pastes*.tsv") for s in _sources(path, 1)}
    training = [row.source for _, row in LINE_ROWS + PASTE_ROWS]
    assert len(LINES) >= 3 and len(PASTES) >= 1 and len(held_out) > 1000
    assert len(training) == len(set(training)) and set(training).isdisjoint(held_out)
    # a web page has no number to split by: the hash of its address puts it on the training side or the blind one
    assert all(page_side(source) == "odd" for source in training if not source.startswith(GH))
    assert all(well_formed(r.rows()) for r in LINES.values())
    assert all(r.unknown_labels() == [] for r in LINES.values())


@pytest.mark.parametrize(
    ("name", "row"), LINE_ROWS, ids=[r.source.removeprefix("https://github.com/") for _, r in LINE_ROWS]
)
def test_a_training_line_is_named_as_labelled(name, row):
    right = {f.id for f in scan(row.line)} == label_ids(row.label)
    assert right != (row.source in LEFT), (row.what, LEFT.get(row.source, ""))


@pytest.mark.parametrize(("name", "row"), PASTE_ROWS, ids=[f"{n}:{r.file}" for n, r in PASTE_ROWS])
def test_a_training_paste_names_its_cause_first(name, row):
    right, _, first = PASTES[name].judged(row)
    assert right != (row.source in LEFT), (row.what, first, LEFT.get(row.source, ""))
