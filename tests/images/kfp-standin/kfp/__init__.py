"""Regatta's test stand-in for the kfp runtime (see ../README.md); not the kfp SDK."""
__version__ = "2.7.0"

from kfp import dsl  # noqa: E402,F401
