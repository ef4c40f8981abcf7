"""The hostile corpus (issue 11, item 9): every attack under ``cases/`` run for real.

Each attack is a graph or a request sent over real HTTP to the web server as the Docker image
runs it (the Dockerfile's ``CMD``: gunicorn with a uvicorn worker), with a real ``db_worker``
process driving its runs, both on a database of their own (SQLite, or PostgreSQL in CI's
second pass). A live server rather than Django's test client because what is attacked is the
processes: their threads, their memory, the ``dot`` processes they start, the log lines they
write, the files they create, and whether they keep answering; the test client shares the test
process and its database connection and would measure none of that.

Each attack asserts what a user sees (a validation error naming the problem, a run that failed
with its reason, a ``4xx`` with a clear message) and, whatever it expects, that:

* it finished within its time bound (``bounds.seconds``: a hang fails it, not slowness);
* the worker's and the web process's resident memory and threads stayed under their bounds,
  sampled from ``/proc`` every 20 ms while it ran, and the web process never ran more ``dot``
  processes at once than its cap;
* nothing was fetched from the outside world (a loopback server that counts requests), no
  answer held the secret of the outside world's file, and no answer was a ``500``;
* the worker is still running.

README.md says how to add an attack.
"""

from __future__ import annotations

import os
import time

import pytest

from tests.hostile.cases import Case, load_cases
from tests.hostile.processes import Watch
from tests.hostile.steps import Corpus, run_step

CASES = load_cases()

#: When ``make test`` runs the suite in several processes (pytest-xdist, ``--dist loadgroup``),
#: every attack goes to the same one: they share one installation (a server and a worker) and
#: measure its memory, which a second corpus beside them would disturb.
pytestmark = pytest.mark.xdist_group("hostile")


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_the_attack_is_contained(corpus: Corpus, watch: Watch, case: Case) -> None:
    worker = corpus.workers.ensure(case.worker)
    bounds = case.bounds
    corpus.begin(bounds.seconds)
    watch.reset()
    began = time.monotonic()

    steps: list[str] = []
    for number, step in enumerate(case.steps, 1):
        step_began = time.monotonic()
        try:
            run_step(corpus, step)
        except AssertionError as failed:
            raise AssertionError(f"{case.name}, step {number} ({step['do']}): {failed}") from None
        steps.append(f"{time.monotonic() - step_began:.1f}")

    took = time.monotonic() - began
    peaks = watch.peaks()
    worker_peaks, server_peaks = peaks["worker"], peaks["server"]
    print(
        f"\n{case.name}: {took:.1f} s; worker {worker_peaks.rss_mib:.0f} MiB, "
        f"{worker_peaks.threads} threads; server {server_peaks.rss_mib:.0f} MiB, "
        f"{server_peaks.threads} threads, {server_peaks.dot} dot, grew "
        f"{server_peaks.growth_mib:.0f} MiB; steps {' '.join(steps)} s"
    )
    assert took <= bounds.seconds, f"the attack held the installation {took:.1f} s"
    assert corpus.outside.hits == [], f"the outside world was reached: {corpus.outside.hits}"
    if not corpus.worker_exited:
        assert worker.process.poll() is None, "the worker exited:\n" + worker.output()[-3000:]
    assert worker_peaks.rss_mib <= bounds.worker_rss_mib, worker_peaks
    assert worker_peaks.threads <= bounds.worker_threads, worker_peaks
    assert server_peaks.rss_mib <= bounds.server_rss_mib, server_peaks
    assert server_peaks.threads <= bounds.server_threads, server_peaks
    assert server_peaks.dot <= bounds.server_dot, server_peaks
    if bounds.server_growth_mib is not None:
        assert server_peaks.growth_mib <= bounds.server_growth_mib, server_peaks


def test_the_corpus_ran_on_the_database_it_was_meant_to(corpus: Corpus) -> None:
    """CI's second pass sets GATEHOUSE_TEST_EXPECT_DATABASE=postgresql: the corpus must then
    have attacked an installation on PostgreSQL, not quietly on SQLite."""
    expected = os.environ.get("GATEHOUSE_TEST_EXPECT_DATABASE")
    if expected is None:
        pytest.skip("no database expected (GATEHOUSE_TEST_EXPECT_DATABASE is unset)")
    assert corpus.database.engine == expected
