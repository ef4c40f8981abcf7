"""The gunicorn worker class of the production server: uvicorn's, tuned for event streams.

``gunicorn editor.asgi:application -k editor.server.UvicornWorker``. Server-sent event streams
stay open until their run rests (a page's, until the page is closed), so a worker that is told
to stop waits for them only briefly, then closes them; browsers and the reference's client
reconnect on their own (``Last-Event-ID``, ``from_seq``) and carry on where they were.
"""

from typing import Any, ClassVar

from uvicorn_worker import UvicornWorker as _UvicornWorker

__all__ = ["UvicornWorker"]

#: Seconds a stopping worker lets open streams run before it closes them.
STREAMS_GRACE_SECONDS = 3


class UvicornWorker(_UvicornWorker):
    CONFIG_KWARGS: ClassVar[dict[str, Any]] = {
        **_UvicornWorker.CONFIG_KWARGS,
        "lifespan": "on",
        "timeout_graceful_shutdown": STREAMS_GRACE_SECONDS,
    }
