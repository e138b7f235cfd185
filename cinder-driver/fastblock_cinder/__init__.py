"""fastblock for OpenStack Cinder: the namenode REST client and the `fastblock` admin CLI."""

from fastblock_cinder.client import FastblockClient, FastblockConnectionError, FastblockError

__all__ = ["FastblockClient", "FastblockConnectionError", "FastblockError"]
__version__ = "0.1.0"
