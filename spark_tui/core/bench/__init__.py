"""The load generator and the results database."""
