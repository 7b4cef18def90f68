"""The launch lifecycle: the plan per node, launch with readiness and rollback, supervision, teardown, drift, and the events they emit."""
