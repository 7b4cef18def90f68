"""A node and the ways in: its SSH connection, its Docker engine (one door), the probes that read it, its log streams, and what any text from it goes through before a person sees it."""
