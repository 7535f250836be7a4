"""The ``lucent.config`` object, built once from ``LUCENT_FLAGS`` at import."""

from lucent.configparser import _make_config

config = _make_config()

__all__ = ["config"]
