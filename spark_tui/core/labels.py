"""The labels spark-tui puts on every container it starts (plan, launch, teardown, drift, panes)."""

LABEL_PREFIX = "spark-tui."
CLUSTER = LABEL_PREFIX + "cluster"
ROLE = LABEL_PREFIX + "role"
NODE = LABEL_PREFIX + "node"
CONFIG_HASH = LABEL_PREFIX + "config-hash"
EXECUTOR = LABEL_PREFIX + "executor"
