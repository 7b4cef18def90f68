"""While serving: the head's /metrics, every node's load, named signals, and the deployment found by its labels."""
