"""Without Chromium the browser tests skip with a message, unless CI requires them."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _run_browser_tests(required):
    env = dict(os.environ, LUCENT_CHROMIUM="/nonexistent/chromium")
    env.pop("LUCENT_BROWSER_TESTS", None)
    if required:
        env["LUCENT_BROWSER_TESTS"] = "required"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:xdist", "-p", "no:cacheprovider",
         "tests/tutorials/test_tutorials_browser.py", "-k", "quickstart"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )


def test_missing_chromium_skips_with_a_message():
    result = _run_browser_tests(required=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 skipped" in result.stdout
    assert "browser tests need Chromium" in result.stdout and "/nonexistent/chromium" in result.stdout


def test_missing_chromium_fails_when_required():
    result = _run_browser_tests(required=True)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "LUCENT_BROWSER_TESTS=required" in result.stdout
