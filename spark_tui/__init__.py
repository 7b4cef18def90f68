"""spark-tui: a terminal cockpit for multi-node vLLM on DGX Spark clusters."""

__version__ = "0.1.0"
