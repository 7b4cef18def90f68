"""Node-to-node copies of the image and the model's cache entry."""
