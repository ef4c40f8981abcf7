"""Documents: a named lineage of one mutable draft and its frozen versions, and the editor's
work on a draft.

This ``__init__`` is the family's façade: ``documents.create_document(...)``,
``documents.read_draft(...)`` and the other names of :mod:`.core` (with the draft's, which it
re-exports) and of :mod:`.creating` read as they always did. It imports those two alone, so
every other module of the family may import the façade.

The family by concern:

* :mod:`.core`: listing, reading, freezing and diffing documents; :mod:`.creating`: new
  documents (a slug given, or the first free one derived from the title), imports;
  :mod:`.rows`: finding and checking a document's row, the free slugs; :mod:`.managing`:
  rename, duplicate, archive, delete; :mod:`.comparing`: **Compare**, the changes and their
  canvas;
* :mod:`.drafts`: reading and saving a draft at the revision the writer read;
  :mod:`.history`: its revisions, undo, redo and restore;
* :mod:`.graphs`: frozen graphs, stored content-addressed, and validation;
  :mod:`.canvas`: a graph drawn with its errors or its run's states marked;
* :mod:`.editing`: the editor's edit → save → validate → draw pipeline; :mod:`.editor_edits`:
  the editor page's edits by name; :mod:`.editor_page`: its answer (:class:`EditorAnswer`);
* :mod:`.samples`: a document's named sample inputs; :mod:`.demo`: the demo content.

The family may import the shared modules only (``pyproject.toml``: the services' families in
layers).
"""

from editor.services.documents import core, creating
from editor.services.documents.core import *  # noqa: F403 (the façade: every name core exports)
from editor.services.documents.creating import *  # noqa: F403 (and every name creating exports)

__all__ = [*core.__all__, *creating.__all__]
