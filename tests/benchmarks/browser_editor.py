"""Browser benchmark of the editor: from a field change to the new canvas painted, in Chromium.

Migrates a throwaway SQLite database in a temporary directory, creates an author and drafts
built by :func:`graph_core.build_document` (9, 100, 300 and 500 nodes), collects the static
files, and serves the app with gunicorn as in production (2 sync workers, ``DEBUG`` off) on a
free loopback port. Debian's Chromium (``/usr/bin/chromium``, headless, through Playwright)
opens each draft's editor on a gate's form and changes the gate's display name again and again.

Each sample is taken in the page: the time of the ``input`` event the change fires (the form
waits for typing to pause, then posts), to the first frame painted after htmx has settled the
answer with a canvas that shows the new name — so it includes the form's wait, the request,
the server, putting the new drawing in place (only its changed items, for a drawing of the same
structure) and the paint. Then, on the 300-node draft, adding a node with **Add node** (a
structural change: laid out again, the canvas replaced and pan and zoom set up again) to the
canvas painted with it.

Prints p50 / p95 / max per size. Needs ``/usr/bin/chromium``. Run it with ``make bench``, or
alone: ``.venv/bin/python tests/benchmarks/browser_editor.py [--edits N]``. It measures only:
it asserts nothing about the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django_setup import setup_django  # this folder, put on sys.path by running it
from graph_core import build_document
from http_validate import HOST, free_port, gunicorn, stop

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
SIZES = (10, 100, 300, 500)
WARM_UP = 2

# Change the field as typing does (one input event), then resolve with the milliseconds from
# that event to the first frame painted after an htmx swap settled with the new name drawn.
_CHANGE_AND_WAIT = """
async ([selector, text]) => {
  const field = document.querySelector(selector);
  const painted = new Promise((resolve) => {
    function settled() {
      const svg = document.querySelector('#canvas-panel svg');
      if (!svg || !svg.textContent.includes(text)) { return; }
      document.removeEventListener('htmx:afterSettle', settled);
      // A requestAnimationFrame callback runs before the frame is painted; a task queued
      // from it runs after that paint.
      requestAnimationFrame(() => setTimeout(() => resolve(performance.now()), 0));
    }
    document.addEventListener('htmx:afterSettle', settled);
  });
  field.value = text;
  const start = performance.now();
  field.dispatchEvent(new Event('input', { bubbles: true }));
  return (await painted) - start;
}
"""

_ADD_NODE_AND_WAIT = """
async (text) => {
  const form = document.getElementById('add-node-form');
  form.querySelector('[name=kind]').value = 'tool';
  form.querySelector('[name=id]').value = text;
  const painted = new Promise((resolve) => {
    function settled() {
      const svg = document.querySelector('#canvas-panel svg');
      if (!svg || !svg.textContent.includes(text)) { return; }
      document.removeEventListener('htmx:afterSettle', settled);
      requestAnimationFrame(() => setTimeout(() => resolve(performance.now()), 0));
    }
    document.addEventListener('htmx:afterSettle', settled);
  });
  const start = performance.now();
  form.requestSubmit();
  return (await painted) - start;
}
"""


def percentiles(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95, ordered[-1]


def prepare(directory: Path) -> tuple[dict[int, tuple[str, str]], str]:
    """The drafts (size → slug, gate id) and a signed-in session's cookie value."""
    setup_django(directory)
    from django.contrib.auth.models import Group, User
    from django.test import Client

    from editor.services import documents

    user = User.objects.create_user("bench", password="bench-password-not-secret")
    user.groups.add(Group.objects.get(name="authors"))
    drafts = {}
    for size in SIZES:
        document = build_document(size)
        gate = next(n["payload"]["id"] for n in document["nodes"] if n["kind"] == "gate")
        slug = f"bench-{size}"
        documents.create_document(
            user, title=f"Bench {size}", slug=slug, text=json.dumps(document, indent=2)
        )
        drafts[size] = (slug, gate)
    client = Client()
    client.force_login(user)
    return drafts, client.cookies["sessionid"].value


def server_environment(directory: Path) -> dict[str, str]:
    settings_dir = directory / "settings"
    settings_dir.mkdir(exist_ok=True)
    (settings_dir / "bench_settings.py").write_text(
        "from editor.settings import *  # noqa: F403\n"
        f"STATIC_ROOT = {str(directory / 'static')!r}\n"
    )
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in ("DATABASE_URL_FILE", "SECRET_KEY_FILE", "DJANGO_SETTINGS_MODULE")
    }
    environment.update(
        DEBUG="false",
        SECRET_KEY="benchmark-only-secret-key-" + "x" * 30,
        ALLOWED_HOSTS=f"{HOST},localhost",
        GATEHOUSE_SECURE_COOKIES="false",
        GATEHOUSE_VAR_DIR=str(directory),
        GATEHOUSE_LOG_LEVEL="WARNING",
        DATABASE_URL=f"sqlite:///{directory / 'bench.sqlite3'}",
        DJANGO_SETTINGS_MODULE="bench_settings",
        PYTHONPATH=os.pathsep.join([str(settings_dir), str(ROOT)]),
    )
    return environment


def collect_static(environment: dict[str, str]) -> None:
    """``collectstatic`` into the ``STATIC_ROOT`` of :func:`server_environment`, as a
    deployment does before gunicorn serves the pages."""
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--no-input", "--verbosity", "0"],
        cwd=ROOT,
        env=environment,
        check=True,
    )


@contextmanager
def db_worker(environment: dict[str, str], *options: str, quiet: bool = False) -> Iterator[None]:
    """A ``db_worker`` driving the runs (``options`` added to its command; ``quiet``: its log
    discarded), stopped on exit."""
    output = subprocess.DEVNULL if quiet else None
    process = subprocess.Popen(
        [sys.executable, "manage.py", "db_worker", "--no-reload", *options],
        cwd=ROOT,
        env=environment,
        stdout=output,
        stderr=output,
    )
    try:
        yield
    finally:
        stop(process)


def measure(port: int, drafts: dict[int, tuple[str, str]], session: str, edits: int) -> None:
    from playwright.sync_api import sync_playwright

    base = f"http://{HOST}:{port}"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--headless", "--disable-gpu", "--no-first-run"],
        )
        context = browser.new_context(base_url=base, viewport={"width": 1400, "height": 900})
        context.add_cookies([{"name": "sessionid", "value": session, "url": base}])
        context.set_default_timeout(60_000)
        page = context.new_page()
        print("browser: a display-name change to the new canvas painted, ms (Chromium)")
        print(f"{'nodes':>6} {'edits':>6} {'p50':>8} {'p95':>8} {'max':>8}")
        for size in SIZES:
            slug, gate = drafts[size]
            page.goto(f"/graphs/{slug}/?node={gate}")
            page.wait_for_selector("#f-name")
            page.wait_for_function("() => window.htmx !== undefined")
            samples: list[float] = []
            for edit in range(WARM_UP + edits):
                elapsed = page.evaluate(
                    _CHANGE_AND_WAIT, ["#f-name", f"Review {edit} of {size} nodes"]
                )
                if edit >= WARM_UP:
                    samples.append(elapsed)
            p50, p95, largest = percentiles(samples)
            print(f"{size:>6} {edits:>6} {p50:8.0f} {p95:8.0f} {largest:8.0f}")
        slug, _ = drafts[300]
        page.goto(f"/graphs/{slug}/")
        page.wait_for_selector("#add-node-form")
        added = [
            page.evaluate(_ADD_NODE_AND_WAIT, f"added{number}")
            for number in range(WARM_UP + max(5, edits // 2))
        ][WARM_UP:]
        p50, p95, largest = percentiles(added)
        print(
            f"add a node at 300 nodes ({len(added)}): "
            f"p50 {p50:.0f}  p95 {p95:.0f}  max {largest:.0f}"
        )
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=20, help="measured edits per size")
    arguments = parser.parse_args()
    if not CHROMIUM.exists():
        print(f"{CHROMIUM} is missing: the browser benchmark was not run (make chromium).")
        return
    with tempfile.TemporaryDirectory(prefix="gatehouse-browser-bench-") as temporary:
        directory = Path(temporary)
        drafts, session = prepare(directory)
        environment = server_environment(directory)
        collect_static(environment)
        port = free_port()
        with gunicorn(environment, port):
            measure(port, drafts, session, arguments.edits)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
