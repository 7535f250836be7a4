"""Small helpers that do not belong to one layer (``lucent.misc.may_share_memory``)."""
