"""Runs (spec 04, spec 05 *Runs*, spec 06 *Runs*): starting them, reading them, resolving them,
and what the pages show of them.

This ``__init__`` is the family's façade: ``runs.start_run(...)``, ``runs.resume(...)`` and the
other names of :mod:`.core` (with the resolutions it re-exports) read as they always did. It
imports :mod:`.core` alone, so every other module of the family may import the façade.

The family by concern:

* :mod:`.core`: starting a run and reading one (its detail, events, graph, replay, the list);
* :mod:`.resolutions`: resuming, resolving, waking and abandoning, the one place each is
  recorded; :mod:`.forks`: forks and **Run again**; :mod:`.failures`: the ``RunFailed`` a
  worker records for a drive that crashed or overran;
* :mod:`.rows`: a run as the services show it; :mod:`.log_reads`: a log read a bounded slice at
  a time; :mod:`.live`: the short reads of the streams;
* :mod:`.filters` and :mod:`.lists`: the **Runs** list; :mod:`.pages`, :mod:`.timeline`,
  :mod:`.nodes` and :mod:`.compare`: what the run pages show;
* :mod:`.test_runs` and :mod:`.test_panel`: test runs of a draft and the editor's **Test**
  panel; :mod:`.agent_runs`: the reference's agent runs.

The family may import the documents family and the shared modules, never the inbox
(``pyproject.toml``: the services' families in layers).
"""

from editor.services.runs import core
from editor.services.runs.core import *  # noqa: F403 (the façade: every name core exports)

__all__ = core.__all__
