"""The data network measured: check --fabric, its node programs and its last figures."""
