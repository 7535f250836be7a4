"""Types of the non-tensor values tensor ops take as inputs: ``None`` markers.

``NoneConst`` (of type ``NoneTypeT``) stands for "nothing given here" as an
ordinary graph input, so an op's inputs can line up one to one with, say,
the dimensions of a tensor (``SpecifyShape`` uses it for unknown lengths).
They are defined with the shape ops, which need them first; this module is
their home at the path PyTensor code imports them from.
"""

from lucent.tensor.shape import NoneConst, NoneTypeT

#: The one ``NoneTypeT`` instance (all instances are equal).
none_type_t = NoneConst.type

__all__ = ["NoneConst", "NoneTypeT", "none_type_t"]
