"""Sessions with the catalogue's MCP servers, through the official ``mcp`` client.

One :class:`McpConnections` per process holds at most one session per server, opened at the
first call that needs it and reused by every later call (of any run, from any thread); a session
whose server exited is dropped and the next call starts the server again. The sessions live on
one event loop in a daemon thread of their own; callers block on :meth:`McpConnections.call`.

A stdio server is started through :mod:`editor.tools.mcp.launch`, so it gets only its catalogue
``env`` plus ``PATH``, its own process group (the client stops the whole group on close), and a
supervisor that a parent-death signal wakes: a worker killed with SIGKILL takes its servers, and
what they started, with it. Its stderr goes to
the ``editor.tools.mcp`` logger, each line prefixed with the server's name.

:meth:`McpConnections.list_tools` is the short listing: it starts the server, lists its tools,
and stops it again (what the web process and ``manage.py mcp list`` do).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import sys
import threading
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Sequence
from pathlib import Path
from typing import Any, TextIO

import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from editor.engine.errors import ToolError
from editor.tools.http import check_allowed_url, parse_allow_list
from editor.tools.mcp.catalogue import Catalogue, McpServerEntry

__all__ = ["McpConnections", "McpServerUnavailable"]

logger = logging.getLogger("editor.tools.mcp")

_LAUNCHER = str(Path(__file__).with_name("launch.py"))


class McpServerUnavailable(ToolError):
    """A catalogue server that could not be started or reached; the message names it."""

    def __init__(self, server: str, reason: str) -> None:
        super().__init__(f"the MCP server `{server}` could not be started: {reason}")
        self.server = server


class _Session:
    """One running server and its client session; lives on the connections' loop."""

    def __init__(self, entry: McpServerEntry, http_allow: tuple[Any, ...]) -> None:
        self.entry = entry
        self.http_allow = http_allow
        self.client: ClientSession | None = None
        self.ready: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
        # A start given up on (timed out) fails later with nobody waiting: that is expected.
        self.ready.add_done_callback(lambda done: done.cancelled() or done.exception())
        self.stop = asyncio.Event()
        self.exited = False
        self.stderr_tail: deque[str] = deque(maxlen=5)
        self.stderr_done = threading.Event()
        self.task = asyncio.get_running_loop().create_task(self._hold())

    @property
    def alive(self) -> bool:
        return not self.exited and not self.task.done()

    def tail(self) -> str:
        return " | ".join(self.stderr_tail)

    async def _hold(self) -> None:
        try:
            async with self._transport() as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                self.client = client
                self.ready.set_result(client)
                await self.stop.wait()
        except BaseException as error:
            if not self.ready.done():
                self.ready.set_exception(error)
            if not isinstance(error, Exception):
                raise
        finally:
            self.exited = True

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[tuple[Any, Any]]:
        entry = self.entry
        if entry.url is not None:
            self.stderr_done.set()  # nothing to read: an HTTP server's stderr is its own
            await asyncio.to_thread(check_allowed_url, entry.url, self.http_allow)
            token = os.environ.get(entry.bearer_token_env, "") if entry.bearer_token_env else ""
            headers = {"Authorization": f"Bearer {token}"} if token else None
            async with (
                create_mcp_http_client(headers=headers) as http,
                streamable_http_client(entry.url, http_client=http) as (read, write),
            ):
                yield read, write
            return
        assert entry.command is not None  # the catalogue guarantees one transport
        keep = ",".join(sorted({*entry.env, "PATH"}))
        parameters = StdioServerParameters(
            command=sys.executable,
            args=["-I", _LAUNCHER, str(os.getpid()), keep, entry.command, *entry.args],
            env={"PATH": os.environ.get("PATH", os.defpath), **entry.env},
            cwd=entry.cwd,
        )
        read_end, write_end = os.pipe()
        errlog: TextIO = os.fdopen(write_end, "w")
        threading.Thread(
            target=self._log_stderr,
            args=(os.fdopen(read_end, "r", errors="replace"), asyncio.get_running_loop()),
            name=f"mcp-stderr-{entry.name}",
            daemon=True,
        ).start()
        try:
            async with stdio_client(parameters, errlog=errlog) as (read, write):
                errlog.close()  # the server holds its own copy: EOF comes when it exits
                yield read, write
        finally:
            if not errlog.closed:
                errlog.close()

    def _log_stderr(self, stream: TextIO, loop: asyncio.AbstractEventLoop) -> None:
        with stream:
            for line in stream:
                text = line.rstrip("\n")
                self.stderr_tail.append(text)
                logger.warning("MCP server `%s`: %s", self.entry.name, text)
        self.stderr_done.set()
        # The server exited (or closed its stderr): the session is not reused.
        with contextlib.suppress(RuntimeError):  # the loop is closed at exit
            loop.call_soon_threadsafe(self._server_exited)

    def _server_exited(self) -> None:
        self.exited = True
        self.stop.set()

    async def close(self) -> None:
        self.stop.set()
        if not self.ready.done():
            self.task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.shield(self.task), 10)


class McpConnections:
    """The catalogue's servers, started on demand; see the module docs."""

    def __init__(
        self,
        catalogue: Catalogue,
        *,
        http_allow: Sequence[str] = (),
        start_timeout: float = 10.0,
        max_result_bytes: int = 1024 * 1024,
    ) -> None:
        self.catalogue = catalogue
        self.http_allow = parse_allow_list(http_allow)
        self.start_timeout = start_timeout
        self.max_result_bytes = max_result_bytes
        self._guard = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = 0
        self._sessions: dict[str, _Session] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        atexit.register(self.close)

    # --- the blocking API ------------------------------------------------------------------

    def list_tools(self, server: str) -> list[types.Tool]:
        """Start ``server``, list every tool it offers, stop it again."""
        return self._run(self._list(server), self.start_timeout * 2 + 5)

    def call(
        self, server: str, tool: str, arguments: dict[str, Any] | None, timeout: float
    ) -> types.CallToolResult:
        """Call ``tool`` on ``server``'s session (started if need be); a failure is a
        :class:`ToolError` naming the server."""
        return self._run(
            self._call(server, tool, arguments, timeout), timeout + self.start_timeout + 5
        )

    def running(self) -> dict[str, bool]:
        """Which servers have a live session in this process (for tests and diagnostics)."""
        return {name: session.alive for name, session in self._sessions.items()}

    def close(self) -> None:
        """Stop every server this process started (also run at interpreter exit)."""
        with self._guard:
            loop, self._loop = self._loop, None
        if loop is None or self._pid != os.getpid() or loop.is_closed():
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._close_all(), loop).result(15)
        loop.call_soon_threadsafe(loop.stop)

    # --- on the loop -----------------------------------------------------------------------

    async def _list(self, server: str) -> list[types.Tool]:
        session = await self._start(self._entry(server))
        try:
            assert session.client is not None
            tools: list[types.Tool] = []
            cursor: str | None = None
            while True:
                params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
                page = await asyncio.wait_for(
                    session.client.list_tools(params=params), self.start_timeout
                )
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    return tools
        except TimeoutError:
            raise McpServerUnavailable(
                server, f"it did not list its tools within {self.start_timeout:g} s"
            ) from None
        finally:
            await session.close()

    async def _call(
        self, server: str, tool: str, arguments: dict[str, Any] | None, timeout: float
    ) -> types.CallToolResult:
        session = await self._session(server)
        assert session.client is not None
        try:
            result = await asyncio.wait_for(
                session.client.call_tool(tool, arguments, read_timeout_seconds=timeout), timeout
            )
        except TimeoutError:
            raise ToolError(
                f"the MCP server `{server}` did not answer `{tool}` within {timeout:g} s"
            ) from None
        except MCPError as error:
            if not session.alive or error.code == types.CONNECTION_CLOSED:
                session.exited = True
                detail = f" (its stderr: {session.tail()})" if session.stderr_tail else ""
                raise ToolError(
                    f"the MCP server `{server}` stopped during the call to `{tool}`; it is "
                    f"started again for the next call{detail}"
                ) from None
            raise ToolError(
                f"the MCP server `{server}` refused the call to `{tool}`: {error.message}"
            ) from None
        except Exception as error:
            raise ToolError(
                f"the call to `{tool}` on the MCP server `{server}` failed: "
                f"{type(error).__name__}: {error}"
            ) from None
        if not isinstance(result, types.CallToolResult):
            raise ToolError(f"the MCP server `{server}` answered `{tool}` with no tool result")
        return result

    async def _session(self, server: str) -> _Session:
        entry = self._entry(server)
        lock = self._locks.setdefault(server, asyncio.Lock())
        async with lock:
            session = self._sessions.get(server)
            if session is not None and session.alive:
                return session
            if session is not None:
                logger.warning("MCP server `%s` exited; starting it again", server)
                await session.close()
            session = await self._start(entry)
            self._sessions[server] = session
            return session

    async def _start(self, entry: McpServerEntry) -> _Session:
        session = _Session(entry, self.http_allow)
        try:
            await asyncio.wait_for(asyncio.shield(session.ready), self.start_timeout)
        except TimeoutError:
            await session.close()
            raise McpServerUnavailable(
                entry.name, f"it did not answer `initialize` within {self.start_timeout:g} s"
            ) from None
        except ToolError as error:  # the HTTP allow-list check
            await session.close()
            raise McpServerUnavailable(entry.name, str(error)) from None
        except Exception as error:
            await session.close()
            # The server's own last words say more than the transport's error: let them in.
            await asyncio.to_thread(session.stderr_done.wait, 2)
            raise McpServerUnavailable(entry.name, _reason(error, session)) from None
        return session

    async def _close_all(self) -> None:
        sessions = list(self._sessions.values())
        self._sessions.clear()
        await asyncio.gather(*(session.close() for session in sessions))

    def _entry(self, server: str) -> McpServerEntry:
        entry = self.catalogue.get(server)
        if entry is None:
            raise McpServerUnavailable(server, "it is not in GATEHOUSE_MCP_SERVERS")
        return entry

    # --- the loop thread -------------------------------------------------------------------

    def _run[T](self, coroutine: Awaitable[T], bound: float) -> T:
        loop = self._running_loop()
        future = asyncio.run_coroutine_threadsafe(_awaited(coroutine), loop)
        try:
            return future.result(bound)
        except TimeoutError:
            future.cancel()
            raise ToolError(f"the MCP client gave no answer within {bound:g} s") from None

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._guard:
            if self._loop is None or self._pid != os.getpid():
                # A forked child does not inherit the parent's thread: start its own loop.
                self._pid = os.getpid()
                self._sessions = {}
                self._locks = {}
                self._loop = asyncio.new_event_loop()
                threading.Thread(
                    target=self._loop.run_forever, name="mcp-sessions", daemon=True
                ).start()
            return self._loop


async def _awaited[T](awaitable: Awaitable[T]) -> T:
    return await awaitable


def _reason(error: BaseException, session: _Session) -> str:
    """What to tell a person about a failed start: the server's last stderr lines beat an
    exception group from the transport."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    if session.stderr_tail:
        return f"it exited before answering: {session.tail()}"
    if isinstance(error, MCPError):
        return f"it exited before answering ({error.message})"
    if isinstance(error, OSError):
        return f"{error.strerror or error}"
    return f"{type(error).__name__}: {error}"
