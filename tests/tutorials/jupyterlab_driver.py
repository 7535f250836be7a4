"""Drive JupyterLab in headless Chromium: open a notebook, run it, inspect what rendered.

The tutorials are meant to be read in JupyterLab, so their test opens them
there: a JupyterLab server on 127.0.0.1 (a free port, a temporary root and
configuration, no token), Debian's Chromium driven by Playwright, "run all
cells", then reports of what the page shows: error outputs, widgets that
failed to render, tracebacks inside widgets, texts and SVG labels in the
outputs. Screenshots go to ``screenshots/`` (git-ignored).

JupyterLab 4 virtualises the notebook (cells outside the viewport are not in
the DOM): the server's settings turn that off, and news / update checks
off, since this machine has no network beyond package registries.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

#: Debian's Chromium; LUCENT_CHROMIUM names another build.
CHROMIUM = os.environ.get("LUCENT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings":
        {"windowingMode": "none", "scrollPastEnd": False},
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings":
        {"autosave": False},
}


class LabError(Exception):
    """The server, the browser or the kernel did not do what the test needed."""


def chromium_available():
    return os.path.exists(CHROMIUM) and os.access(CHROMIUM, os.X_OK)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _descendants(pid):
    parents = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _kill(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


class LabServer:
    """A JupyterLab server serving ``root``, isolated from the user's Jupyter configuration."""

    def __init__(self, root, env=None, timeout=90):
        self.root = Path(root)
        self.workdir = Path(tempfile.mkdtemp(prefix="lucent-lab-"))
        self.extra_env = dict(env or {})
        self.timeout = timeout
        self.proc = None
        self.port = None
        self.kernel_pids = set()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        settings = self.workdir / "lab-settings"
        for rel, value in LAB_SETTINGS.items():
            path = settings / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(value))
        env = dict(os.environ)
        env.update(
            JUPYTER_CONFIG_DIR=str(self.workdir / "config"),
            JUPYTER_RUNTIME_DIR=str(self.workdir / "runtime"),
            JUPYTER_DATA_DIR=str(self.workdir / "data"),
            JUPYTERLAB_SETTINGS_DIR=str(settings),
            JUPYTERLAB_WORKSPACES_DIR=str(self.workdir / "workspaces"),
            IPYTHONDIR=str(self.workdir / "ipython"),
            PATH=os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""),
            PYTHONUNBUFFERED="1",
        )
        env.update(self.extra_env)
        self.port = _free_port()
        cmd = [
            sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
            f"--port={self.port}", "--port-retries=0", f"--ServerApp.root_dir={self.root}",
            "--IdentityProvider.token=", "--PasswordIdentityProvider.hashed_password=",
            "--LabApp.expose_app_in_browser=True",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.news_url=", "--LabApp.extension_manager=readonly",
            "--ServerApp.terminals_enabled=False",
        ]
        if os.geteuid() == 0:
            cmd.append("--allow-root")
        self.log_path = self.workdir / "lab.log"
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(cmd, cwd=self.root, env=env, stdout=self._log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise LabError(f"JupyterLab exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/status", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.25)
        raise LabError(f"JupyterLab did not answer within {self.timeout} s:\n{self.log_tail()}")

    def trust(self, path):
        """Sign a notebook so its saved HTML/JS outputs render (as when the user ran it)."""
        import nbformat
        from nbformat.sign import NotebookNotary

        notary = NotebookNotary(data_dir=str(self.workdir / "data"))
        nb = nbformat.read(path, as_version=4)
        notary.sign(nb)
        nbformat.write(nb, path)

    def log_tail(self, n=40):
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def remember_kernels(self):
        if self.proc is not None and self.proc.poll() is None:
            self.kernel_pids.update(_descendants(self.proc.pid))

    def stop(self):
        if self.proc is None:
            return
        self.remember_kernels()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        _kill([p for p in self.kernel_pids if os.path.exists(f"/proc/{p}")])
        self._log.close()
        shutil.rmtree(self.workdir, ignore_errors=True)
        self.proc = None


JS_OPEN = """
async (path) => {
  const app = window.jupyterapp;
  await app.restored;
  let panel = Array.from(app.shell.widgets('main')).find(w => w.context && w.context.path === path);
  if (!panel) panel = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  if (!panel || !panel.sessionContext) return 'could not open ' + path;
  window.__lucent_panel = panel;
  await panel.context.ready;
  await panel.sessionContext.ready;
  app.shell.activateById(panel.id);
  app.shell.collapseLeft();
  return 'ok';
}
"""
JS_STATUS = """
() => {
  const s = window.__lucent_panel.sessionContext;
  const k = s.session && s.session.kernel;
  return k ? k.status + '/' + k.connectionStatus : 'no-kernel';
}
"""
JS_RUN_ALL = """
async () => {
  const app = window.jupyterapp;
  app.shell.activateById(window.__lucent_panel.id);
  await app.commands.execute('notebook:run-all-cells');
}
"""
JS_CELLS = """
() => {
  const cells = window.__lucent_panel.content.model.cells;
  const errors = [], notRun = [];
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    if (c.type !== 'code') continue;
    if (c.sharedModel.getSource().trim() && (c.executionCount === null || c.executionCount === undefined))
      notRun.push(i);
    for (let j = 0; j < c.outputs.length; j++) {
      const o = c.outputs.get(j).toJSON();
      if (o.output_type === 'error')
        errors.push({cell: i, ename: o.ename, evalue: o.evalue,
                     traceback: (o.traceback || []).join('\\n').replace(/\\x1b\\[[0-9;]*m/g, '')});
    }
  }
  return {errors, notRun, ncells: cells.length};
}
"""
JS_WIDGETS = """
() => {
  const outs = Array.from(document.querySelectorAll('.jp-Notebook .jp-OutputArea-output'));
  const txt = e => (e.textContent || '').trim();
  return {
    loading: outs.filter(e => txt(e) === 'Loading widget...').length,
    failed: outs.filter(e => txt(e).startsWith('Error displaying widget')).map(txt),
    errorWidgets: Array.from(document.querySelectorAll('.jp-Notebook .jupyter-widgets-error-widget'))
      .map(e => (e.closest('.jupyter-widgets') || e).textContent.trim().slice(0, 300)),
    widgetTracebacks: Array.from(document.querySelectorAll(
      '.jp-Notebook .jupyter-widgets .jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'))
      .map(txt).filter(t => /Traceback|Error/.test(t)).map(t => t.slice(0, 500)),
  };
}
"""
JS_EXEC = """
async (code) => {
  const k = window.__lucent_panel.sessionContext.session.kernel;
  const f = k.requestExecute({code, stop_on_error: true, store_history: false});
  const msgs = [];
  f.onIOPub = m => {
    const t = m.header.msg_type;
    if (t === 'error') msgs.push(m.content.ename + ': ' + m.content.evalue);
    if (t === 'stream') msgs.push(m.content.text);
  };
  const reply = await f.done;
  return {status: reply.content.status, output: msgs.join('')};
}
"""
JS_FIT = """
() => {
  const n = window.__lucent_panel.content.node;
  const sc = n.querySelector('.jp-WindowedPanel-outer') || n;
  sc.scrollTop = 0;
  return sc.scrollHeight + (window.innerHeight - sc.clientHeight);
}
"""


class LabPage:
    """One notebook open in Chromium; methods run it and read what it shows."""

    def __init__(self, page, timeout):
        self.page = page
        self.timeout = timeout

    def status(self):
        return self.page.evaluate(JS_STATUS)

    def wait_idle(self, what, settle=1.0):
        """The kernel idle for ``settle`` s in a row (widget messages make it blink busy)."""
        deadline = time.monotonic() + self.timeout
        idle_since, status = None, "?"
        while time.monotonic() < deadline:
            status = self.status()
            if status.startswith("dead"):
                raise LabError(f"the kernel died during {what}")
            if status == "idle/connected":
                idle_since = idle_since or time.monotonic()
                if time.monotonic() - idle_since >= settle:
                    return
            else:
                idle_since = None
            time.sleep(0.2)
        raise LabError(f"the kernel was not idle {self.timeout} s after {what}; last status {status}")

    def run_all(self):
        self.page.evaluate(JS_RUN_ALL)
        self.wait_idle("run all")
        self.wait_widgets()

    def wait_widgets(self, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.page.evaluate(JS_WIDGETS)["loading"]:
            time.sleep(0.2)

    def execute(self, code):
        """Run ``code`` in the kernel without adding a cell; its printed output, or LabError."""
        result = self.page.evaluate(JS_EXEC, code)
        self.wait_idle(f"executing {code!r}")
        if result["status"] != "ok":
            raise LabError(f"{code!r} failed in the kernel: {result['output'].strip()}")
        return result["output"]

    def click(self, selector):
        """Click the first match of ``selector`` inside the output areas."""
        self.page.locator(f".jp-Notebook .jp-OutputArea-output {selector}").first.click()
        self.page.wait_for_timeout(300)

    def reconnect_kernel(self):
        """Drop the kernel's connection and connect again (as after a network hiccup)."""
        self.page.evaluate(
            "async () => { await window.__lucent_panel.sessionContext.session.kernel.reconnect(); }")
        self.wait_idle("reconnecting the kernel")

    def problems(self, require_run=True):
        """Error outputs, cells not run, widgets that failed: one message each."""
        cells = self.page.evaluate(JS_CELLS)
        out = [
            f"cell {e['cell']} has an error output: {e['ename']}: {e['evalue']}\n{e['traceback'][-1500:]}"
            for e in cells["errors"]
        ]
        if require_run and cells["notRun"]:
            out.append(f"code cells never executed: {cells['notRun']}")
        widgets = self.page.evaluate(JS_WIDGETS)
        if widgets["loading"]:
            out.append(f"{widgets['loading']} widget output(s) still show 'Loading widget...'")
        out += [f"widget failed to render: {t}" for t in widgets["failed"]]
        out += [f"widget error view: {t}" for t in widgets["errorWidgets"]]
        out += [f"traceback inside a widget: {t}" for t in widgets["widgetTracebacks"]]
        return out

    def output_texts(self, selector):
        """``textContent`` of every match of ``selector`` inside the notebook's output areas."""
        return self.page.evaluate(
            "(sel) => Array.from(document.querySelectorAll('.jp-Notebook .jp-OutputArea-output ' + sel))"
            ".map(e => e.textContent)",
            selector,
        )

    def wait_for_change(self, selector, before, timeout=20):
        """The texts of ``selector`` once they differ from ``before`` (or as they are after ``timeout``)."""
        deadline = time.monotonic() + timeout
        while True:
            now = self.output_texts(selector)
            if now != before or time.monotonic() > deadline:
                return now
            time.sleep(0.2)

    def wait_for(self, selector, timeout=20):
        """Wait until ``selector`` matches in an output area; False when it never does."""
        from playwright.sync_api import Error as PlaywrightError

        try:
            self.page.locator(f".jp-Notebook .jp-OutputArea-output {selector}").first.wait_for(
                state="attached", timeout=timeout * 1000)
            return True
        except PlaywrightError:
            return False

    def screenshot(self, path, width=1280):
        height = self.page.evaluate(JS_FIT)
        self.page.set_viewport_size({"width": width, "height": max(900, min(height + 20, 16000))})
        self.page.wait_for_timeout(400)
        self.page.evaluate(JS_FIT)
        self.page.wait_for_timeout(200)
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path), full_page=True)
        self.page.set_viewport_size({"width": width, "height": 900})


class Browser:
    """Headless Chromium (Debian's) under Playwright; ``open(server, path)`` gives a LabPage."""

    def __init__(self, timeout=300):
        self.timeout = timeout
        self._pw = None
        self._ctx = None
        self._pids = []
        self.console_errors = []

    def start(self):
        from playwright.sync_api import sync_playwright

        self.profile = Path(tempfile.mkdtemp(prefix="lucent-chromium-"))
        self._pw = sync_playwright().start()
        before = set(_descendants(os.getpid()))
        self._ctx = self._pw.chromium.launch_persistent_context(
            user_data_dir=str(self.profile), executable_path=CHROMIUM, headless=True,
            args=CHROMIUM_ARGS, viewport={"width": 1280, "height": 900}, device_scale_factor=1,
        )
        self._pids = [p for p in _descendants(os.getpid()) if p not in before]
        return self

    def open(self, server, path):
        page = self._ctx.new_page()
        page.set_default_timeout(self.timeout * 1000)
        page.on("pageerror", lambda e: self.console_errors.append(str(e)[:300]))
        page.goto(f"{server.url}/lab?reset", wait_until="domcontentloaded")
        page.wait_for_function("() => window.jupyterapp !== undefined")
        result = page.evaluate(JS_OPEN, path)
        if result != "ok":
            raise LabError(result)
        lab_page = LabPage(page, self.timeout)
        lab_page.wait_idle("kernel start")
        server.remember_kernels()
        return lab_page

    def close_page(self, lab_page):
        """Close the notebook's tab, shutting its kernel down."""
        try:
            lab_page.page.evaluate(
                "async () => { const p = window.__lucent_panel; await p.sessionContext.shutdown(); p.dispose(); }")
        finally:
            lab_page.page.close()

    def stop(self):
        try:
            if self._ctx is not None:
                self._ctx.close()
            if self._pw is not None:
                self._pw.stop()
        finally:
            _kill([p for p in self._pids if os.path.exists(f"/proc/{p}")])
            shutil.rmtree(getattr(self, "profile", ""), ignore_errors=True)
