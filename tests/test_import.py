"""``import lucent`` must stay light: no numba, ipywidgets or graphviz."""

import subprocess
import sys


def test_import_lucent_does_not_import_heavy_dependencies():
    code = (
        "import sys, lucent, lucent.tensor\n"
        "heavy = [m for m in ('numba', 'llvmlite', 'ipywidgets', 'anywidget', 'graphviz', 'IPython', 'scipy.linalg') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_public_names_exist():
    import lucent

    for name in ["function", "shared", "In", "Out", "grad", "dprint", "pp", "config", "Mode"]:
        assert hasattr(lucent, name), name
