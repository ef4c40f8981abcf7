"""The HTML of a generated approval field (spec 06, *Approval inbox*).

Built in Python with :func:`~django.utils.html.format_html` (every value escaped) rather than
in the card's template: the inbox's first page shows 50 cards, and the template's per-field
conditionals were most of its server time. The markup is the one the template had.
"""

from __future__ import annotations

from django.utils.html import escape, format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from editor.services.approval_forms import ApprovalField

__all__ = ["field_html"]


def _aria(field: ApprovalField, field_id: str, *, required: bool) -> SafeString:
    parts = []
    if required and field.required:
        parts.append(' aria-required="true"')
    if field.errors:
        parts.append(' aria-invalid="true"')
    described = []
    if field.help:
        described.append(f"{field_id}-help")
    if field.errors:
        described.append(f"{field_id}-error")
    if described:
        parts.append(f' aria-describedby="{escape(" ".join(described))}"')
    return mark_safe("".join(parts))


def _marks(field: ApprovalField) -> SafeString:
    text = ""
    if field.required:
        text += '<span class="required">required</span>'
    if field.source == "run":
        text += '<span class="source">from the run</span>'
    elif field.source == "proposed":
        text += '<span class="source">proposed</span>'
    return mark_safe(text)


def _control(field: ApprovalField, field_id: str) -> SafeString:
    aria = _aria(field, field_id, required=True)
    if field.kind == "select":
        options = format_html_join(
            "",
            '<option value="{}"{}>{}</option>',
            (
                (value, mark_safe(" selected") if value == field.selected else "", label)
                for value, label in field.choices
            ),
        )
        empty = mark_safe(" selected") if not field.selected else ""
        return format_html(
            '<select id="{}" name="{}"{}>\n<option value=""{}>—</option>{}</select>',
            field_id,
            field.name,
            aria,
            empty,
            options,
        )
    if field.kind == "number":
        return format_html(
            '<input type="number" id="{}" name="{}" value="{}" step="{}"{}>',
            field_id,
            field.name,
            field.initial,
            field.step,
            aria,
        )
    if field.kind == "text":
        return format_html(
            '<input type="text" id="{}" name="{}" value="{}"{}>',
            field_id,
            field.name,
            field.initial,
            aria,
        )
    json_field = field.kind == "json"
    return format_html(
        '<textarea id="{}" name="{}" rows="{}"{}{}>{}</textarea>{}',
        field_id,
        field.name,
        "3" if json_field else "5",
        mark_safe(' class="json-input"') if json_field else "",
        aria,
        field.initial,
        mark_safe('<span class="help">JSON</span>') if json_field else "",
    )


def field_html(field: ApprovalField, card_id: str) -> SafeString:
    """One field of a card's approval form: label, marks, control, help and errors."""
    field_id = f"{card_id}-{field.html_id}"
    if field.kind == "checkbox":
        body = format_html(
            '<div class="choice"><input type="checkbox" id="{}" name="{}" value="true"{}{}>'
            '<label for="{}">{}</label>{}{}</div>',
            field_id,
            field.name,
            mark_safe(" checked") if field.checked else "",
            _aria(field, field_id, required=False),
            field_id,
            field.label,
            mark_safe(' <span class="required">required</span>') if field.required else "",
            mark_safe(
                '<span class="source">from the run</span>'
                if field.source == "run"
                else '<span class="source">proposed</span>'
                if field.source == "proposed"
                else ""
            ),
        )
    else:
        body = format_html(
            '<label for="{}">{}</label><span class="field-marks">{}</span>{}',
            field_id,
            field.label,
            _marks(field),
            _control(field, field_id),
        )
    help_html = (
        format_html('<p class="help" id="{}-help">{}</p>', field_id, field.help)
        if field.help
        else ""
    )
    errors_html = (
        format_html('<p class="field-error" id="{}-error">{}</p>', field_id, " ".join(field.errors))
        if field.errors
        else ""
    )
    return format_html(
        '<div class="field approval-field field-{}">{}{}{}</div>',
        field.kind,
        body,
        help_html,
        errors_html,
    )
