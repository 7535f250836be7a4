"""Signal processing: linear convolution of 1-d and 2-d arrays (``pytensor.tensor.signal``)."""

from lucent.tensor.signal.conv import convolve1d, convolve2d

__all__ = ("convolve1d", "convolve2d")
