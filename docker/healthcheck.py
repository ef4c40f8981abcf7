"""The Docker HEALTHCHECK: exit 0 when ``/healthz`` answers 200, 1 otherwise.

Written in Python because the slim image has no curl. The request carries a Host header the
app accepts (the first entry of ALLOWED_HOSTS), since Django refuses unknown hosts.
"""

import os
import sys
import urllib.request


def host() -> str:
    for entry in os.environ.get("ALLOWED_HOSTS", "").split(","):
        entry = entry.strip().lstrip(".")
        if entry and entry != "*":
            return entry
    return "localhost"


def main() -> int:
    port = os.environ.get("PORT", "8000")
    request = urllib.request.Request(f"http://127.0.0.1:{port}/healthz", headers={"Host": host()})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return 0 if response.status == 200 else 1
    except OSError as error:
        print(f"healthz: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
