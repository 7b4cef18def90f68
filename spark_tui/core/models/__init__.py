"""The model on the nodes: its Hugging Face cache entry, its files per node, whether it fits in memory."""
