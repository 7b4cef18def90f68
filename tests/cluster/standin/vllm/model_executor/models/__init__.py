"""The model registry as vLLM exposes it: `ModelRegistry.get_supported_archs()`."""

from vllm._standin_profile import ARCHS


class _ModelRegistry:
    def __init__(self, archs: list[str]):
        self.models = dict.fromkeys(archs, "lazy")  # vLLM loads each model class on first use

    def get_supported_archs(self):
        return self.models.keys()


ModelRegistry = _ModelRegistry(ARCHS)
