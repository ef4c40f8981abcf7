"""Presentation: what turns the domain and the services' answers into fields, widgets and words
for people, in plain Python (no ORM, no Django; see ``docs/architecture.md``).

One module per concern: :mod:`.fields` (the types every generated form shares), :mod:`.typed`
(the one reader of numbers and JSON people type), :mod:`.node_form` (the editor's node form),
:mod:`.approval_forms` and :mod:`.approval_rules` (a gate's card), :mod:`.messages` (errors said
for people), :mod:`.rich_text` (prompts as sanitised Markdown) and :mod:`.value_view` (a value as
text or a tree). This package imports none of them, so reading one loads only what it needs.
"""
