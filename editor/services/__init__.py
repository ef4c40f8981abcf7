"""The application layer: the one place that combines the ORM, the domain and the engine.

One module per resource. Views, API operations and commands call these
functions; they never reach into the ORM or ``editor.graph`` for business rules
themselves.
"""
