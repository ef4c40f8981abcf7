"""Found 6: a canvas whose layout timed out was laid out again at every view."""

from typing import Any

from tests.hostile.documents import dense_graph

TOO_LARGE = (
    "This graph is too large to draw here: laying out its 400 nodes and 1900 edges took longer "
    "than 1 s."
)


def view_twice(corpus: Any) -> None:
    """The first view runs ``dot`` until GATEHOUSE_GRAPHVIZ_TIMEOUT (1 s) and says why there is
    no drawing; the second says the same without starting ``dot``."""
    page = f"/g/{corpus.names['graph'].removeprefix('sha256:')}/"
    before = corpus.dot_started()
    first = corpus.request("GET", page, client="browser")
    after_first = corpus.dot_started()
    second = corpus.request("GET", page, client="browser")

    assert first.status_code == second.status_code == 200
    assert TOO_LARGE in first.text, first.text[:3000]
    assert TOO_LARGE in second.text, second.text[:3000]
    assert after_first == before + 1
    assert corpus.dot_started() == after_first, "the second view laid the graph out again"


CASE = {
    "found": 6,
    "attack": (
        "A graph under the drawing cap that Graphviz takes seconds to lay out (400 nodes, 1,900 "
        "random edges: about 13 s): every view of it used to run `dot` until the timeout again"
    ),
    "steps": [
        {"do": "store_graph", "graph": dense_graph(seed=13)},
        {"do": "python", "call": view_twice},
    ],
}
