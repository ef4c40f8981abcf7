"""The application layer: the one place that combines the ORM, the domain and the engine.

Three families, each a package whose ``__init__`` is a façade (:mod:`.documents`, :mod:`.runs`,
:mod:`.inbox`), and the shared modules beside them (``access``, ``errors``, ``paging``, …).
Views, API operations and commands call these functions; they never reach into the ORM or
``editor.graph`` for business rules themselves. A family imports only the families below it
(inbox, then runs, then documents) and the shared modules (``pyproject.toml``).
"""
