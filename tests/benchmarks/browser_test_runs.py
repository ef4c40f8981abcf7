"""Browser benchmark of a test run drawn on the editor's canvas (issue 24), in Chromium.

Migrates a throwaway SQLite database in a temporary directory, creates an author and a draft of
20 ``echo`` nodes in a chain, collects the static files, and serves the app with gunicorn as in
production (``DEBUG`` off) on a free loopback port, beside one ``db_worker`` process. Debian's
Chromium (``/usr/bin/chromium``, headless, through Playwright) opens the draft's editor and
presses **Test run** again and again.

Each sample is taken in the page, from the click on **Test run** to the first frame painted
after the canvas shows, for the new run:

* the first node's state (the first node painted with a state: the run was queued, a worker
  claimed it, its first events reached the page's event stream, the list was fetched and the
  canvas painted);
* the whole run (every node painted, the run completed).

The worker is measured twice: polling its queue every 1 s (django-tasks-db's own default), then
every 0.1 s (Gatehouse's, ``GATEHOUSE_WORKER_POLL_MS``, as deployed), since the wait for a worker to
pick the run up is most of the first figure. Prints p50 / p95 / max of each. Needs
``/usr/bin/chromium``. Run it with ``make bench``, or alone: ``.venv/bin/python
tests/benchmarks/browser_test_runs.py [--runs N]``. It measures only: it asserts nothing about the
figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from browser_editor import CHROMIUM, collect_static, db_worker, percentiles, server_environment
from django_setup import setup_django  # this folder, put on sys.path by running it
from http_validate import HOST, free_port, gunicorn

ROOT = Path(__file__).resolve().parents[2]
NODES = 20
WARM_UP = 2
INTERVALS = ("1", "0.1")

# Click Test run, then resolve with the milliseconds from the click to the first frame painted
# after the canvas showed the new run's first node state, and after it showed the whole run.
_TEST_AND_WAIT = """
async (nodes) => {
  const svg = () => document.querySelector('#canvas-panel svg');
  const before = ((svg() && svg().getAttribute('data-test-painted')) || '').split(' ')[0];
  const start = performance.now();
  let first = null;
  const painted = () => new Promise(
    (resolve) => requestAnimationFrame(() => setTimeout(() => resolve(performance.now()), 0))
  );
  const whole = await new Promise((resolve) => {
    const observer = new MutationObserver(() => {
      const [run, state, count] = ((svg() && svg().getAttribute('data-test-painted')) || '')
        .split(' ');
      if (!run || run === before) { return; }
      if (first === null && Number(count) >= 1) {
        first = painted();
      }
      if (state === 'completed' && Number(count) === nodes) {
        observer.disconnect();
        resolve(painted());
      }
    });
    observer.observe(document.body, {
      subtree: true, attributes: true, attributeFilter: ['data-test-painted'],
    });
    document.getElementById('test-run-button').click();
  });
  return [(await first) - start, whole - start];
}
"""


def chain(size: int) -> dict[str, object]:
    return {
        "schema_version": 1,
        "nodes": [
            {"kind": "tool", "payload": {"id": f"step{index}", "tool": "echo"}}
            for index in range(size)
        ],
        "edges": [{"from": f"step{index}", "to": f"step{index + 1}"} for index in range(size - 1)],
    }


def prepare(directory: Path) -> tuple[str, str]:
    """The draft's slug and a signed-in author's session cookie value."""
    setup_django(directory)
    from django.contrib.auth.models import Group, User
    from django.test import Client

    from editor.services import documents

    user = User.objects.create_user("bench", password="bench-password-not-secret")
    user.groups.add(Group.objects.get(name="authors"))
    slug = "bench-test-runs"
    documents.create_document(user, title="Bench", slug=slug, text=json.dumps(chain(NODES)))
    client = Client()
    client.force_login(user)
    return slug, client.cookies["sessionid"].value


def measure(port: int, slug: str, session: str, runs: int, interval: str) -> None:
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
        page.goto(f"/graphs/{slug}/")
        page.wait_for_selector("#test-run-button")
        page.wait_for_function("() => window.htmx !== undefined")
        firsts: list[float] = []
        wholes: list[float] = []
        for number in range(WARM_UP + runs):
            first, whole = page.evaluate(_TEST_AND_WAIT, NODES)
            if number >= WARM_UP:
                firsts.append(first)
                wholes.append(whole)
        for label, samples in (("first node's state", firsts), ("the whole run", wholes)):
            p50, p95, largest = percentiles(samples)
            print(
                f"  worker polling every {interval:>4} s  {label:18}  runs {len(samples):3}  "
                f"p50 {p50:6.0f}  p95 {p95:6.0f}  max {largest:6.0f}"
            )
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="measured test runs per worker")
    arguments = parser.parse_args()
    if not CHROMIUM.exists():
        print(f"{CHROMIUM} is missing: the browser benchmark was not run (make chromium).")
        return
    with tempfile.TemporaryDirectory(prefix="gatehouse-test-runs-bench-") as temporary:
        directory = Path(temporary)
        slug, session = prepare(directory)
        environment = server_environment(directory)
        collect_static(environment)
        port = free_port()
        print(
            f"browser: Test run to the canvas painted, ms (Chromium, a {NODES}-node echo chain, "
            "SQLite, one db_worker)"
        )
        with gunicorn(environment, port):
            for interval in INTERVALS:
                # Its log says a line per task; the figures are what this prints.
                with db_worker(
                    environment, "--no-startup-delay", "--interval", interval, quiet=True
                ):
                    measure(port, slug, session, arguments.runs, interval)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
