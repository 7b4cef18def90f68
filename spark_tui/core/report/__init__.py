"""What spark-tui tells: check, the cluster's state for status, the report bundle, status text."""
