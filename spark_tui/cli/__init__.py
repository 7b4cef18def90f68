"""The headless face: the spark-tui command, its commands, and the live bars of up."""
