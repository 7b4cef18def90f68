"""The labels spark-tui puts on every container it starts (plan, launch, teardown, drift, panes)."""

LABEL_PREFIX = "spark-tui."
CLUSTER = LABEL_PREFIX + "cluster"
ROLE = LABEL_PREFIX + "role"
NODE = LABEL_PREFIX + "node"
CONFIG_HASH = LABEL_PREFIX + "config-hash"
EXECUTOR = LABEL_PREFIX + "executor"
# Set when `up` creates the container (not in the plan: they say who and when, not what): a
# `status` or cockpit started later, anywhere, reads them back as the deployment's provenance.
LAUNCHED_BY = LABEL_PREFIX + "launched-by"
LAUNCHED_AT = LABEL_PREFIX + "launched-at"
