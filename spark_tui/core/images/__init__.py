"""Images: what an image can run, known before a model load."""
