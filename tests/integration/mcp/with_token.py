"""Runs one of the reference's client scripts with Gatehouse's API token taken from the
environment: ``python with_token.py SCRIPT ARG…`` with ``GATEHOUSE_API_TOKEN`` set.

The reference's client (``salvor.Client``) takes a token only as an argument, and its example
scripts create their client with the base URL alone, since the reference's server asks for no
token by default. Gatehouse always does, so this wrapper gives ``salvor.Client`` the token as
its default and runs the script unchanged, as ``__main__``: nothing else about the client or
the script differs.
"""

from __future__ import annotations

import os
import runpy
import sys
from typing import Any

import salvor


class _TokenClient(salvor.Client):
    def __init__(self, base_url: str, token: str | None = None, **options: Any) -> None:
        super().__init__(base_url, token or os.environ["GATEHOUSE_API_TOKEN"], **options)


if __name__ == "__main__":
    salvor.Client = _TokenClient  # type: ignore[misc]
    script, *arguments = sys.argv[1:]
    sys.argv = [script, *arguments]
    runpy.run_path(script, run_name="__main__")
