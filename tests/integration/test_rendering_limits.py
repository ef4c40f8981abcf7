"""How many ``dot`` processes run at once, what a view sees when they are all busy, and a
layout that ran out of time being remembered.

A fake ``dot`` on ``PATH`` stands in for Graphviz: it says it started (a file per process),
then holds its layout until the test releases it (or until its own bound runs out), so a test
controls exactly when a layout ends, without measuring or sleeping for any time.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.cache import caches
from django.db import connection
from django.test import Client
from pytest_django import Settings

from editor import rendering
from editor.models import FrozenGraph
from tests.integration.api.callers import make_user
from tests.integration.inbox import frozen, gated

#: The canvas cache is a table of the database, read and written from the layouts' threads.
pytestmark = pytest.mark.django_db(transaction=True)

#: The longest any wait in these tests may last before it fails the test.
BOUND = 30.0

FAKE_DOT = f"""#!{sys.executable}
import os, pathlib, sys, time
state = pathlib.Path(os.environ["FAKE_DOT_STATE"])
(state / f"started-{{os.getpid()}}").touch()
sys.stdin.buffer.read()
deadline = time.monotonic() + {BOUND}
while not (state / "release").exists() and time.monotonic() < deadline:
    time.sleep(0.005)
if "-Tjson0" in sys.argv:  # the editor's first layout: where everything goes (nothing here)
    sys.stdout.write('{{"bb": "0,0,10,10", "objects": [], "edges": []}}')
else:
    sys.stdout.write('<svg xmlns="http://www.w3.org/2000/svg"><text>drawn</text></svg>')
"""


class FakeDot:
    def __init__(self, state: Path) -> None:
        self.state = state

    @property
    def started(self) -> int:
        return len(list(self.state.glob("started-*")))

    def wait_until_started(self, count: int) -> None:
        deadline = time.monotonic() + BOUND
        while self.started < count:
            assert time.monotonic() < deadline, f"dot did not start {count} time(s)"
            time.sleep(0.005)

    def release(self) -> None:
        (self.state / "release").touch()


@pytest.fixture
def fake_dot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDot]:
    binaries = tmp_path / "bin"
    binaries.mkdir()
    script = binaries / "dot"
    script.write_text(FAKE_DOT)
    script.chmod(0o755)
    state = tmp_path / "state"
    state.mkdir()
    monkeypatch.setenv("PATH", f"{binaries}:/usr/bin:/bin")
    monkeypatch.setenv("FAKE_DOT_STATE", str(state))
    caches[rendering.CACHE].clear()
    fake = FakeDot(state)
    yield fake
    fake.release()  # never leave a fake dot waiting
    caches[rendering.CACHE].clear()


@pytest.fixture
def one_slot(settings: Settings) -> None:
    settings.GATEHOUSE_GRAPHVIZ_MAX_PROCESSES = 1
    settings.GATEHOUSE_GRAPHVIZ_WAIT = 0


class Layout(threading.Thread):
    """A view's layout, in a thread of its own (as in a threaded web process)."""

    def __init__(self, source: str) -> None:
        super().__init__(daemon=True)
        self.source = source
        self.canvas: rendering.Canvas | None = None

    def run(self) -> None:
        try:
            self.canvas = rendering.render_svg(self.source, nodes=1, edges=0)
        finally:
            connection.close()

    def finish(self) -> rendering.Canvas:
        self.join(BOUND)
        assert not self.is_alive(), "the layout did not finish"
        assert self.canvas is not None
        return self.canvas


@pytest.fixture
def busy(fake_dot: FakeDot, one_slot: None) -> Iterator[Layout]:
    """The process's only dot slot, taken by a layout that lasts until the test releases it."""
    holder = Layout("digraph { holder }")
    holder.start()
    fake_dot.wait_until_started(1)
    yield holder
    fake_dot.release()
    holder.finish()


def test_a_view_that_finds_every_dot_slot_taken_is_told_to_try_again(
    fake_dot: FakeDot, busy: Layout
) -> None:
    canvas = rendering.render_svg("digraph { other }", nodes=1, edges=0)

    assert not canvas.drawn and canvas.busy
    assert canvas.problem == rendering.BUSY
    assert "Try again in a moment." in canvas.problem
    assert fake_dot.started == 1  # no second dot was started

    fake_dot.release()
    assert busy.finish().drawn
    again = rendering.render_svg("digraph { other }", nodes=1, edges=0)
    assert again.drawn  # "busy" is not remembered
    assert fake_dot.started == 2


def test_a_view_waits_a_bounded_time_for_a_slot_and_draws_once_it_is_free(
    fake_dot: FakeDot, busy: Layout, settings: Settings
) -> None:
    settings.GATEHOUSE_GRAPHVIZ_WAIT = int(BOUND)
    waiting = Layout("digraph { waiting }")
    waiting.start()

    fake_dot.release()

    assert busy.finish().drawn
    assert waiting.finish().drawn
    assert fake_dot.started == 2


def test_a_graph_page_shows_the_busy_message_in_place_of_the_canvas(
    client: Client, fake_dot: FakeDot, busy: Layout
) -> None:
    author = make_user("ada", "authors")
    _slug, digest = frozen(author, gated())
    client.force_login(author)

    response = client.get(f"/g/{digest.removeprefix('sha256:')}/")

    assert response.status_code == 200
    page = response.content.decode()
    assert "The server is drawing other graphs right now" in page
    assert "data-key=" not in page  # so the editor asks for the canvas again
    assert FrozenGraph.objects.count() == 1


def test_a_layout_that_timed_out_is_remembered_as_too_large_with_its_size(
    fake_dot: FakeDot, settings: Settings
) -> None:
    settings.GATEHOUSE_GRAPHVIZ_TIMEOUT = 0.2  # the fake dot never finishes on its own

    first = rendering.render_svg("digraph { a -> b -> c }", nodes=3, edges=2)
    second = rendering.render_svg("digraph { a -> b -> c }", nodes=3, edges=2)

    expected = (
        "This graph is too large to draw here: laying out its 3 nodes and 2 edges "
        "took longer than 0.2 s."
    )
    assert first.problem == expected and not first.drawn
    assert second.problem == expected and not second.drawn
    assert fake_dot.started == 1  # the second view cost no layout


def test_an_editor_layout_that_timed_out_is_remembered_too(
    fake_dot: FakeDot, settings: Settings
) -> None:
    settings.GATEHOUSE_GRAPHVIZ_TIMEOUT = 0.2  # the fake dot never finishes on its own

    first = rendering.lay_out("digraph { a -> b -> c }", nodes=3, edges=2)
    second = rendering.lay_out("digraph { a -> b -> c }", nodes=3, edges=2)

    expected = (
        "This graph is too large to draw here: laying out its 3 nodes and 2 edges "
        "took longer than 0.2 s."
    )
    assert first == expected
    assert second == expected
    assert fake_dot.started == 1  # the second open cost no layout
