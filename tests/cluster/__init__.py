"""The namespace test cluster: `python -m tests.cluster up N | down | status`."""
