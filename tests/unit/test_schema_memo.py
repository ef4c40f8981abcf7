"""The memos of what schemas cost to read keep neither the schemas' bytes nor more than their
bounds (``editor.graph.closed_schemas.memo``)."""

from __future__ import annotations

import gc
import json
import tracemalloc

from editor.graph import validate_document
from editor.graph.closed_schemas.memo import DigestMemo


def test_a_memo_forgets_the_least_recently_used_past_its_size() -> None:
    memo: DigestMemo[int] = DigestMemo(2)
    made: list[bytes] = []

    def value(text: bytes) -> int:
        return memo.get(text, lambda: made.append(text) or len(made))

    assert [value(b"a"), value(b"b"), value(b"a"), value(b"c"), value(b"a"), value(b"b")] == [
        1, 2, 1, 3, 1, 4,
    ]  # fmt: skip
    assert memo.info().currsize == 2


def test_a_memo_forgets_past_the_text_its_values_stand_for() -> None:
    memo: DigestMemo[str] = DigestMemo(100, max_bytes=10)

    for text in (b"aaaa", b"bbbb", b"cccc"):
        memo.get(text, lambda text=text: text.decode())

    assert memo.info().currsize == 2  # 12 bytes would be over 10: the oldest went
    assert memo.get(b"x" * 50, lambda: "big") == "big"
    assert memo.info().currsize == 1  # one value larger than the bound is still kept


def test_validating_large_schemas_leaves_their_bytes_behind_nowhere() -> None:
    """Found: the memos were keyed by the canonical bytes, so each large schema validated
    stayed in memory (thousands of entries of up to megabytes)."""

    def document(n: int) -> str:
        members = list(range(n * 50_000, (n + 1) * 50_000))
        node = {
            "kind": "tool",
            "payload": {"id": "t", "tool": "echo", "input_schema": {"enum": members}},
        }
        return json.dumps({"schema_version": 1, "nodes": [node], "edges": []})

    texts = [document(n) for n in range(20)]
    validate_document(texts[0])  # whatever a first validation sets up
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for text in texts[1:]:
            assert validate_document(text)["valid"]
        gc.collect()
        grown = sum(
            stat.size_diff for stat in tracemalloc.take_snapshot().compare_to(before, "filename")
        )
    finally:
        tracemalloc.stop()

    assert grown < 1 << 20, f"{grown} bytes kept after 19 validations of 350 kB schemas"
