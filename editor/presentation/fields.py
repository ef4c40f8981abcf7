"""The two types every generated form shares: a field as the page shows it, and a post read back.

Gatehouse generates two forms from data rather than declaring them: the editor's node form
(:mod:`editor.presentation.node_form`, from the graph model's field table) and a gate's card
(:mod:`editor.presentation.approval_forms`, from the gate's ``approval_schema``). Both describe
each control with a :class:`FieldView` and read a post back into a :class:`FormRead`, so the
templates, the card's tags and the views meet one shape.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from editor.presentation.approval_rules import NO_CONSTRAINTS, Constraints

__all__ = ["FieldView", "FormRead"]

_NOT_IN_ID = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True, slots=True)
class FieldView:
    """One control of a generated form: what it is, what it shows, and what is wrong with it.

    ``kind`` is the control (a node form's ``text``, ``number``, ``duration``, ``tool``, …; a
    card's ``decision``, ``checkbox``, ``select``, ``number``, ``textarea``, ``text``,
    ``json``); ``initial`` is the text it shows. A field reads by key too (``field["label"]``),
    and by the node form's names for two of its attributes (``widget`` for ``kind``, ``value``
    for ``initial``), which its templates use.
    """

    key: str
    kind: str
    label: str
    required: bool
    help: str = ""
    initial: str = ""
    #: The name the control is posted under (the key itself unless the form prefixes it).
    posted_as: str = ""
    errors: tuple[str, ...] = ()
    #: What the editor points out beside the field without it being an error (a reference
    #: reading a path nothing flowing in describes, an id hard to read): never blocking.
    hints: tuple[str, ...] = ()
    #: A choice control's options: a card's ``(option value, label)`` pairs (the option value
    #: is the index in ``enum``), the tool picker's ``(name, label, description)``, the agent
    #: field's ``{"value", "choice"}`` entries.
    choices: Sequence[Any] = ()
    #: What a select offers by value: the node form's tool names or ``(value, words)`` pairs.
    options: Sequence[Any] = ()
    # A card's controls.
    checked: bool = False
    #: Where the initial value came from: ``"run"`` (the value at the gate), ``"proposed"``
    #: (the schema's default), or ``""``.
    source: str = ""
    selected: str = ""
    #: For a number: ``"1"`` for an integer, ``"any"`` otherwise.
    step: str = "any"
    #: What the browser checks beside the server (``approval_rules.constraints_of``).
    constraints: Constraints = NO_CONSTRAINTS
    #: A decision's two buttons: the label that sets ``true``, and the one that sets ``false``.
    yes_label: str = ""
    no_label: str = ""
    #: The first field with an error after a refused submit: it takes the focus.
    focus: bool = False
    # The node form's controls.
    #: A tool the installation does not register (the picker says so).
    unknown: bool = False
    #: A duration's stored seconds, shown beside what the person reads.
    seconds: int | None = None
    #: The stored agent definition the agent field names, if it names one.
    chosen: Any = None
    #: A schema field's builder (:class:`~editor.presentation.schema_builder.SchemaBuilder`).
    builder: Any = None

    @property
    def name(self) -> str:
        return self.posted_as or self.key

    @property
    def html_id(self) -> str:
        return "f-" + _NOT_IN_ID.sub("_", self.key)

    @property
    def widget(self) -> str:
        return self.kind

    @property
    def value(self) -> str:
        return self.initial

    def __getitem__(self, name: str) -> Any:
        try:
            return getattr(self, name)
        except AttributeError:
            raise KeyError(name) from None


@dataclass
class FormRead:
    """A generated form read back from a post. ``fields``: by key, the values that could be
    read (``None`` unsets a node's field); ``errors``: by key, why a field could not be read,
    with the text as typed in ``typed``; ``general``: what belongs to no field. True when
    something could not be read."""

    fields: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, list[str]] = field(default_factory=dict)
    general: list[str] = field(default_factory=list)
    typed: dict[str, str] = field(default_factory=dict)
    #: What the form shows next beside the values (a schema builder's mode, the control to
    #: focus), by key; and whether a part of it must be drawn again (a button was pressed).
    shown: dict[str, str] = field(default_factory=dict)
    redraw: bool = False

    def refuse(self, key: str, message: str, typed: str) -> None:
        self.errors.setdefault(key, []).append(message)
        self.typed[key] = typed

    @property
    def problems(self) -> dict[str, str]:
        """By key, why a field could not be read, in one sentence."""
        return {key: " ".join(messages) for key, messages in self.errors.items()}

    def __bool__(self) -> bool:
        return bool(self.errors or self.general)
