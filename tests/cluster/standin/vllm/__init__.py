"""Stand-in vLLM (tests/cluster/standin): the parts of vLLM spark-tui meets, no GPU needed."""

from vllm._standin_profile import VERSION as __version__

__all__ = ["__version__"]
