"""A gate's generated approval form (spec 06, *Approval inbox*), ``{% load approval %}``:

* ``{% approval_field field prefix %}``: one field of the form (label, marks, control, help and
  errors), from the plain description ``presentation.approval_forms`` gives (a
  :class:`FieldView`);
* ``{% approval_decision field prefix %}``: the decision's two buttons;
* ``{% approval_form_body form prefix note %}``: the form between its hidden inputs and its
  buttons (:func:`form_body`; an inbox card's form is ``{% load inbox_card %}``'s).

The forms are built in Python rather than by templates: the inbox's first page shows 50 cards,
and the template's per-field conditionals were most of its server time. Every value is escaped
with :func:`html.escape` (``quote=True``: the escaping Django's own ``escape`` applies), and the
markup is the one the templates had.
"""

from __future__ import annotations

from html import escape

from django import template
from django.utils.safestring import SafeString, mark_safe

from editor.presentation.approval_forms import ApprovalForm
from editor.presentation.fields import FieldView

register = template.Library()

_SOURCES = {
    "run": '<span class="source">from the run</span>',
    "proposed": '<span class="source">proposed</span>',
}


def _aria(field: FieldView, field_id: str, *, required: bool) -> str:
    text = ""
    if required and field.required:
        text += ' aria-required="true"'
    if field.errors:
        text += ' aria-invalid="true"'
    if field.focus:
        # After a refused submit: the browser (or htmx, after its swap) focuses this field.
        text += " autofocus"
    described = []
    if field.help:
        described.append(f"{field_id}-help")
    if field.constraints.words:
        described.append(f"{field_id}-limits")
    if field.errors:
        described.append(f"{field_id}-error")
    if described:
        text += f' aria-describedby="{escape(" ".join(described))}"'
    return text


def _checks(field: FieldView) -> str:
    """The constraint attributes the browser enforces (the server checks them again)."""
    text = "".join(
        f" {name}" if value == "" else f' {name}="{escape(value)}"'
        for name, value in field.constraints.attributes
    )
    if field.constraints.pattern:
        text += f' data-pattern="{escape(field.constraints.pattern)}"'
    return text


def _limits(field: FieldView, field_id: str) -> str:
    words = field.constraints.words
    if not words:
        return ""
    parts = [f"<code>{escape(text)}</code>" if code else escape(text) for text, code in words]
    return f'<p class="limits" id="{field_id}-limits">{"; ".join(parts)}</p>'


def _control(field: FieldView, field_id: str, name: str) -> str:
    aria = _aria(field, field_id, required=True) + _checks(field)
    if field.kind == "select":
        options = "".join(
            f'<option value="{escape(value)}"{" selected" if value == field.selected else ""}>'
            f"{escape(label)}</option>"
            for value, label in field.choices
        )
        empty = " selected" if not field.selected else ""
        return (
            f'<select id="{field_id}" name="{name}"{aria}>\n'
            f'<option value=""{empty}>—</option>{options}</select>'
        )
    if field.kind == "number":
        return (
            f'<input type="number" id="{field_id}" name="{name}" value="{escape(field.initial)}" '
            f'step="{escape(field.step)}"{aria}>'
        )
    if field.kind == "text":
        value = escape(field.initial)
        return f'<input type="text" id="{field_id}" name="{name}" value="{value}"{aria}>'
    if field.kind == "json":
        return (
            f'<textarea id="{field_id}" name="{name}" rows="3" class="json-input"{aria}>'
            f'{escape(field.initial)}</textarea><span class="help">JSON</span>'
        )
    return (
        f'<textarea id="{field_id}" name="{name}" rows="5"{aria}>{escape(field.initial)}</textarea>'
    )


@register.simple_tag
def approval_field(field: FieldView, card_id: str) -> SafeString:
    """One field of a card's approval form: label, marks, control, help and errors."""
    field_id = escape(f"{card_id}-{field.html_id}")
    name = escape(field.name)
    label = escape(field.label)
    source = _SOURCES.get(field.source, "")
    if field.kind == "checkbox":
        checked = " checked" if field.checked else ""
        required = ' <span class="required">required</span>' if field.required else ""
        body = (
            f'<div class="choice"><input type="checkbox" id="{field_id}" name="{name}" value="true"'
            f"{checked}{_aria(field, field_id, required=False)}>"
            f'<label for="{field_id}">{label}</label>{required}{source}</div>'
        )
    else:
        required = '<span class="required">required</span>' if field.required else ""
        body = (
            f'<label for="{field_id}">{label}</label>'
            f'<span class="field-marks">{required}{source}</span>{_control(field, field_id, name)}'
        )
    if field.help:
        body += f'<p class="help" id="{field_id}-help">{escape(field.help)}</p>'
    body += _limits(field, field_id)
    if field.errors:
        body += f'<p class="field-error" id="{field_id}-error">{escape(" ".join(field.errors))}</p>'
    # Every piece above is constant markup or escaped text.
    return mark_safe(f'<div class="field approval-field field-{escape(field.kind)}">{body}</div>')


@register.simple_tag
def approval_decision(field: FieldView, card_id: str) -> SafeString:
    """A decision's two buttons, which set it and submit the form; its help and errors."""
    field_id = escape(f"{card_id}-{field.html_id}")
    name = escape(field.name)
    focus = " autofocus" if field.focus else ""
    described = []
    if field.help:
        described.append(f"{field_id}-help")
    if field.errors:
        described.append(f"{field_id}-error")
    aria = f' aria-describedby="{" ".join(described)}"' if described else ""
    body = ""
    if field.help:
        body += f'<p class="help" id="{field_id}-help">{escape(field.help)}</p>'
    if field.errors:
        body += f'<p class="field-error" id="{field_id}-error">{escape(" ".join(field.errors))}</p>'
    body += (
        f'<div class="actions"><button type="submit" class="button" id="{field_id}" name="{name}"'
        f' value="true"{aria}{focus}>{escape(field.yes_label)}</button>'
        f'<button type="submit" class="button secondary" name="{name}" value="false"{aria}>'
        f"{escape(field.no_label)}</button></div>"
    )
    # Every piece above is constant markup or escaped text.
    return mark_safe(f'<div class="field approval-decision">{body}</div>')


#: A form with decision buttons gets this first: Enter in a text field presses the form's
#: default button, which must not pick a decision, so it is this disabled one.
_IMPLICIT_SUBMIT = (
    '<button type="submit" class="implicit-submit" disabled hidden aria-hidden="true" '
    'tabindex="-1"></button>'
)


def form_body(
    form: ApprovalForm, prefix: str, *, schema_text: str = "", comment_note: str = "optional"
) -> str:
    """A gate's approval form between its hidden inputs and its buttons: the default button
    that Enter presses, the errors of no field, the fields (or the JSON of a schema too rich
    for fields, with ``schema_text`` to show beside it) and the comment (``comment_note``
    beside its label), unless the schema has a comment of its own."""
    prefix = escape(prefix)
    parts = [_IMPLICIT_SUBMIT] if form.decision else []
    focus_general = form.focus_general
    for index, message in enumerate(form.errors):
        focus = ' tabindex="-1" autofocus' if index == 0 and focus_general else ""
        parts.append(f'<p class="field-error" role="alert"{focus}>{escape(message)}</p>')
    if form.is_fallback:
        source = '<span class="source">proposed</span>' if form.json_source == "proposed" else ""
        invalid = (
            f' aria-invalid="true" aria-describedby="{prefix}-json-error" autofocus'
            if form.json_errors
            else ""
        )
        schema = (
            '<details class="help"><summary>The schema it must match</summary>'
            f'<pre class="json-view" tabindex="0">{escape(schema_text)}</pre></details>'
            if schema_text
            else ""
        )
        errors = "".join(
            f'<p class="field-error" id="{prefix}-json-error">{escape(message)}</p>'
            for message in form.json_errors
        )
        parts.append(
            f'<div class="field"><label for="{prefix}-approval">Approval (JSON)</label>{source}'
            f'<textarea id="{prefix}-approval" name="approval-json" rows="6" class="json-input"'
            f"{invalid}>{escape(form.json_text)}</textarea>{schema}{errors}</div>"
        )
    else:
        parts.extend(approval_field(field, prefix) for field in form.shown_fields)
    if not form.comment_key:
        parts.append(
            f'<div class="field"><label for="{prefix}-comment">Comment <span class="muted">'
            f"({escape(comment_note)})</span></label>"
            f'<textarea id="{prefix}-comment" name="comment" rows="2" maxlength="2000">'
            f"{escape(form.comment)}</textarea></div>"
        )
    return "\n".join(parts)


@register.simple_tag
def approval_form_body(form: ApprovalForm, prefix: str, comment_note: str) -> SafeString:
    """:func:`form_body` in a template (the page that decides several cards at once)."""
    # Every piece is constant markup or escaped text.
    return mark_safe(form_body(form, prefix, comment_note=comment_note))
