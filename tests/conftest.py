"""Suite-wide pytest setup.

Both execution paths
--------------------
Every test of a module that imports ``run`` from ``tests.helpers``, every test
marked ``both_modes`` (``pytestmark = pytest.mark.both_modes`` for a whole
module) and every test that asks for the ``lucent_mode`` fixture by name runs
once per mode of ``tests.helpers.MODES``: ``[py]`` on FAST_COMPILE (Python
linker, minimal rewrites) and ``[numba]`` on FAST_RUN (full rewrites, Numba
linker). The autouse ``lucent_mode`` fixture tells ``run`` which mode the
variant uses and sets ``config.mode`` to it for the test, so ``verify_grad``
and functions compiled with the default mode follow the variant too. Select
one path with ``-k "[numba"`` / ``-k "[py"``.

With ``--debugmode`` (or ``LUCENT_TEST_DEBUGMODE=1``) a third variant,
``[debug]``, runs the test under DebugMode: every node of every graph the
test compiles runs on both paths, and every ``fast_run`` rewrite applied to
it is checked for value preservation (``make test-debugmode``). Each graph
is rewritten twice there, not ``DebugMode__patience`` (10) times, unless
``LUCENT_FLAGS`` sets the flag, and a parametrised test keeps only the
[debug] variants that use each parameter value once (``--debugmode-all``
keeps every one). ``@pytest.mark.not_debugmode(reason=...)`` skips a test's
[debug] variant with that reason.

Policy for the numba variants in the default run (``make test``, which
deselects ``slow``): see ``NUMBA_DEFAULT_RUN`` below. ``--numba-all``
(or ``LUCENT_TEST_NUMBA_ALL=1``) keeps every numba variant in the default run.

Compile cache
-------------
``lucent.config.base_compiledir`` points at ``<repo>/.lucent-cache/tests``,
one directory shared by all pytest-xdist workers of a run and by later runs,
so compiled kernels are reused (unless ``LUCENT_FLAGS`` sets it).
"""

import inspect
import os
from collections import defaultdict
from pathlib import Path

import pytest

import lucent
from tests import helpers

REPO = Path(__file__).resolve().parents[1]
TEST_COMPILEDIR = REPO / ".lucent-cache" / "tests"


# Policy: which [numba] variants of a parametrised test stay in the default run
# (the others are marked ``slow``; every test function keeps at least one):
#   "all"   - every variant;
#   "cover" - enough variants that each value of each parameter is used at least once;
#   N (int) - at most N variants, spread over the parametrisation.
# The library's growth made "cover" (enough variants to use every parameter value)
# cost more than the default run's time budget; one variant per test function keeps
# every test on the fast path, and ``make test-all`` still runs them all.
NUMBA_DEFAULT_RUN = 1


def pytest_addoption(parser):
    parser.addoption(
        "--numba-all", action="store_true", default=False,
        help="keep every FAST_RUN ([numba]) test variant in the default run (none marked slow)",
    )
    parser.addoption(
        "--debugmode-all", action="store_true", default=False,
        help="with --debugmode, keep every [debug] variant of a parametrised test "
        "(LUCENT_TEST_DEBUGMODE_ALL=1 too); by default only enough to use each parameter value once",
    )
    parser.addoption(
        "--debugmode", action="store_true", default=False,
        help="also run every both-path test under DebugMode ([debug] variants): every node "
        "on both paths and every fast_run rewrite checked (LUCENT_TEST_DEBUGMODE=1 too)",
    )


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "both_modes: run the test once per mode (FAST_COMPILE [py], FAST_RUN [numba]) "
        "with config.mode set accordingly",
    )
    config.addinivalue_line(
        "markers", "not_debugmode(reason): the test's [debug] variant is skipped with this reason "
        "(what the test checks cannot hold under DebugMode, e.g. memory sharing with the caller's "
        "arrays, since DebugMode runs every node on copies of its inputs)",
    )
    if config.getoption("--debugmode") or os.environ.get("LUCENT_TEST_DEBUGMODE"):
        helpers.MODES["debug"] = "DebugMode"
        if "DebugMode__patience" not in os.environ.get("LUCENT_FLAGS", ""):
            # Rewriting each graph twice still checks that rewriting is deterministic
            # (StochasticOrder); the default ten rewrites made the suite ten times slower.
            lucent.config.DebugMode__patience = 2
    if "base_compiledir" not in os.environ.get("LUCENT_FLAGS", ""):
        TEST_COMPILEDIR.mkdir(parents=True, exist_ok=True)
        lucent.config.base_compiledir = str(TEST_COMPILEDIR)


def _parametrised_by_hand(metafunc):
    for marker in metafunc.definition.iter_markers("parametrize"):
        names = marker.args[0] if marker.args else marker.kwargs.get("argnames", ())
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",")]
        if "lucent_mode" in names:
            return True
    return False


def pytest_generate_tests(metafunc):
    uses_run = getattr(metafunc.module, "run", None) is helpers.run
    asks_mode = "lucent_mode" in inspect.signature(metafunc.function).parameters
    marked = metafunc.definition.get_closest_marker("both_modes") is not None
    if (uses_run or asks_mode or marked) and not _parametrised_by_hand(metafunc):
        metafunc.parametrize(
            "lucent_mode", list(helpers.MODES.values()), ids=list(helpers.MODES), indirect=True
        )


@pytest.fixture(autouse=True)
def lucent_mode(request):
    """The mode name of this test variant (``None`` for tests not run on both paths).

    The variant's mode is what ``tests.helpers.run`` compiles with, and also
    ``config.mode``, so functions compiled with the default mode (e.g. by
    ``verify_grad``) take the same path.
    """
    mode = getattr(request, "param", None)
    if mode is None:
        yield None
        return
    helpers._current_mode = mode
    try:
        with lucent.config.change_flags(mode=mode):
            yield mode
    finally:
        helpers._current_mode = None


def _kept_variants(variants, policy):
    """Indices of the variants (items of one test function) the policy keeps."""
    n = len(variants)
    if policy == "cover":
        kept, covered = set(), set()
        for i, item in enumerate(variants):
            # (parameter, identity of its value): parametrize reuses the value objects
            # across combinations, so this is the same selection in every xdist worker.
            values = {(name, id(value)) for name, value in item.callspec.params.items()}
            if not values <= covered:
                kept.add(i)
                covered |= values
        return kept
    if n <= policy:
        return set(range(n))
    return {round(i * (n - 1) / (policy - 1)) for i in range(policy)} if policy > 1 else {0}


def _thin_debug_variants(config, items):
    """Deselect the [debug] variants beyond a "cover" set per test function.

    DebugMode checks every node and rewrite of a graph; running it over every
    combination of a parametrised sweep (tests/tensor/test_math.py alone has
    hundreds) finds little that the variants using each parameter value once
    do not, and made the run last hours. ``--debugmode-all`` keeps them all.
    """
    debug = helpers.MODES.get("debug")
    if debug is None or config.getoption("--debugmode-all") or os.environ.get("LUCENT_TEST_DEBUGMODE_ALL"):
        return
    groups = defaultdict(list)
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("lucent_mode") == debug:
            groups[item.nodeid.split("[", 1)[0]].append(item)
    dropped = set()
    for variants in groups.values():
        kept = _kept_variants(variants, "cover")
        dropped.update(id(item) for i, item in enumerate(variants) if i not in kept)
    if dropped:
        config.hook.pytest_deselected(items=[item for item in items if id(item) in dropped])
        items[:] = [item for item in items if id(item) not in dropped]


def _skip_debug_variants(items):
    """Skip the [debug] variant of tests marked ``not_debugmode(reason=...)``, with that reason."""
    debug = helpers.MODES.get("debug")
    if debug is None:
        return
    for item in items:
        callspec = getattr(item, "callspec", None)
        marker = item.get_closest_marker("not_debugmode")
        if marker is None or callspec is None or callspec.params.get("lucent_mode") != debug:
            continue
        reason = marker.kwargs.get("reason") or (marker.args[0] if marker.args else None)
        if not reason:
            raise pytest.UsageError(f"{item.nodeid}: not_debugmode needs a reason")
        item.add_marker(pytest.mark.skip(reason=f"not under DebugMode: {reason}"))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    _thin_debug_variants(config, items)
    _skip_debug_variants(items)
    policy = NUMBA_DEFAULT_RUN
    if policy == "all" or config.getoption("--numba-all") or os.environ.get("LUCENT_TEST_NUMBA_ALL"):
        return
    groups = defaultdict(list)
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("lucent_mode") == helpers.MODES["numba"]:
            groups[item.nodeid.split("[", 1)[0]].append(item)
    for variants in groups.values():
        kept = _kept_variants(variants, policy)
        for i, item in enumerate(variants):
            if i not in kept:
                item.add_marker(pytest.mark.slow)
