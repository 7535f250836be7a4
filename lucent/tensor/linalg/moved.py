"""Old module paths whose names moved into ``lucent.tensor.linalg``.

``nlinalg`` and ``slinalg`` keep older programs importing: each of their
names is looked up in its new home on first access, with a
``DeprecationWarning`` that says where it lives now.
"""

import importlib
import warnings


def moved_names(module_name, moved):
    """``(__getattr__, __dir__)`` for a module whose names ``moved`` maps to new modules."""

    # Programs ported from PyTensor know the module by its PyTensor path: name both.
    pytensor_name = "pytensor" + module_name[len("lucent"):] if module_name.startswith("lucent.") else module_name

    def __getattr__(name):
        if name in moved:
            warnings.warn(
                f"Importing {name!r} from '{module_name}' (PyTensor's '{pytensor_name}') is deprecated. "
                f"Use 'from lucent.tensor.linalg import {name}' instead.",
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(importlib.import_module(moved[name]), name)
        raise AttributeError(f"module {module_name!r} has no attribute {name!r}")

    def __dir__():
        return list(moved)

    return __getattr__, __dir__
