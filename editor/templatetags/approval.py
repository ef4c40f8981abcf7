"""The inbox card's generated parts (spec 06, *Approval inbox*), ``{% load approval %}``:

* ``{% approval_field field card.card_id %}``: one field of a gate's approval form (label,
  marks, control, help and errors), from the plain description ``presentation.approval_forms``
  gives (a :class:`FieldView`);
* ``{% approval_decision field card.card_id %}``: the decision's two buttons;
* ``{% card_head item %}`` and ``{% card_waiting card %}``: a card's graph and run line, and a
  waiting card's title, age, prompt and value (budget and reconciliation cards: their facts);
* ``{% card_state card %}``: a card's due time and badge, what its gate still needs and from
  whom, its escalation, its claim with the button that takes or gives it up, and the box that
  selects it to be decided with others of its gate (``docs/inbox.md``);
* ``{{ item.reason|markdown }}``: the gate's prompt as sanitised Markdown (``rich_text``);
* ``{{ item.value|value_view }}``: the value at the gate as text or a tree (``value_view``).

The fields are built in Python rather than by the card's template: the inbox's first page shows
50 cards, and the template's per-field conditionals were most of its server time. Every value
is escaped with :func:`html.escape` (``quote=True``: the escaping Django's own ``escape``
applies), and the markup is the one the template had.
"""

from __future__ import annotations

from datetime import datetime
from html import escape
from typing import Any

from django import template
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.timesince import timesince

from editor.graph import hex_digits, short_hash
from editor.presentation.fields import FieldView
from editor.presentation.rich_text import markdown_html
from editor.presentation.value_view import value_html

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


@register.filter
def markdown(text: Any) -> SafeString:
    """A prompt as sanitised Markdown; nothing when there is no text."""
    # rich_text sanitises what it writes (nh3), so the result is safe to insert.
    return mark_safe(markdown_html(text) if isinstance(text, str) and text else "")


@register.filter
def value_view(value: Any) -> SafeString:
    """The value at a gate, readable: text, or a tree."""
    # value_view escapes every piece it writes.
    return mark_safe(value_html(value))


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


def _time(moment: datetime, text: str) -> str:
    return f'<time datetime="{escape(moment.isoformat())}" data-local-time>{escape(text)}</time>'


def _names(names: Any) -> str:
    return ", ".join(f"<em>{escape(str(name))}</em>" for name in names)


def _deadline(item: Any) -> str:
    due = item.due_at
    if due is None:
        return ""
    badge = ""
    if item.overdue:
        badge = '<span class="badge overdue">Overdue</span> '
    elif item.due_soon:
        badge = '<span class="badge due-soon">Due soon</span> '
    words = item.due_words
    text = f'{badge}<time datetime="{escape(due.isoformat())}" title="{escape(due.isoformat())}">'
    text += f"{escape(words[:1].upper() + words[1:])}</time>"
    escalated = item.escalated_moment
    if item.escalated_at:
        text += f" · escalated from {_names(item.escalated_from)}"
        if escalated is not None:
            text += " at " + _time(escalated, escalated.strftime("%Y-%m-%d %H:%M UTC"))
    return f'<p class="deadline">{text}</p>'


def _needs(item: Any) -> str:
    needs = item.needs
    if needs is None or not (needs.counted or needs.names):
        return ""
    text = ""
    if needs.counted:
        voters = f" ({escape(item.voters)})" if item.votes else ""
        text = f"{escape(needs.counted)}{voters}, {escape(needs.more)}"
    else:
        text = escape(needs.more[:1].upper() + needs.more[1:])
    if needs.names:
        text += f" from {_names(needs.names)}"
    return f'<p class="quorum">{text}.</p>'


def _claim(card: Any, item: Any) -> str:
    if not item.claimed_by:
        return ""
    until = ""
    if item.claim_until is not None:
        until = " (until " + _time(item.claim_until, item.claim_until.strftime("%H:%M UTC")) + ")"
    if card.claimed_by_viewer:
        return f'<p class="claim" role="status">You are on it{until}.</p>'
    warning = ": you may still decide it, but check with them first" if card.may_resolve else ""
    return (
        f'<p class="claim claim-other" role="status"><strong>{escape(item.claimed_by)}</strong>'
        f" is on it{warning}{until}.</p>"
    )


def _claim_form(card: Any, item: Any, csrf_token: str) -> str:
    mine = card.claimed_by_viewer
    if not mine and not (card.may_resolve and not card.claimed_by_other):
        return ""
    claim_url = reverse("inbox_claim", args=[item.run])
    action = reverse("inbox_release", args=[item.run]) if mine else claim_url
    renew = f' data-claim-renew="{escape(claim_url)}"' if mine else ""
    scope = (
        f'<input type="hidden" name="scope" value="{escape(card.scope_json)}">'
        if item.scope
        else ""
    )
    label = "Release" if mine else "I'm on it"
    return (
        f'<form class="claim-form" method="post" action="{escape(action)}" '
        f'hx-post="{escape(action)}"{renew}>'
        f'<input type="hidden" name="csrfmiddlewaretoken" value="{escape(csrf_token)}">'
        f'<input type="hidden" name="node" value="{escape(item.node)}">'
        f'<input type="hidden" name="seq" value="{item.seq}">{scope}'
        f'<button type="submit" class="button small secondary">{label}</button></form>'
    )


def _select(card: Any, item: Any) -> str:
    if not card.selectable:
        return ""
    box = escape(f"{card.card_id}-select")
    return (
        f'<p class="select-card"><input type="checkbox" id="{box}" name="card" '
        f'value="{escape(item.run)}:{item.seq}" form="bulk-select"> <label for="{box}">'
        f"Select to decide with other cards of <code>{escape(item.node)}</code></label></p>"
    )


@register.simple_tag(takes_context=True)
def card_state(context: Any, card: Any) -> SafeString:
    """A waiting card's due time, needs, escalation and claim, its claim's button and its
    selection box, built here rather than by the card's template (50 cards a page)."""
    item = card.item
    notice = f'<p class="notice" role="alert">{escape(card.notice)}</p>' if card.notice else ""
    parts = [
        _deadline(item),
        _needs(item),
        _claim(card, item),
        notice,
        _claim_form(card, item, str(context.get("csrf_token") or "")),
        _select(card, item),
    ]
    # Every piece above is constant markup or escaped text.
    return mark_safe("".join(parts))


#: How many characters of a run's id stand for it where people read it (``short_run``).
_SHORT_RUN = 8


@register.simple_tag
def card_head(item: Any) -> SafeString:
    """The line above a card: its document and version, graph and run, linked."""
    document = ""
    if item.document_title:
        version = f" v{item.version}" if item.version else ""
        document = f"{escape(item.document_title)}{version} · "
    graph = reverse("graph", args=[hex_digits(str(item.graph_hash))])
    run = reverse("run", args=[item.run])
    return mark_safe(
        f'<p class="inbox-graph">\n    {document}<a href="{escape(graph)}" '
        f'title="{escape(item.graph_hash)}"><code>{escape(short_hash(str(item.graph_hash)))}'
        f'</code></a>\n    · <a href="{escape(run)}">run <code>{escape(item.run[:_SHORT_RUN])}'
        "</code></a>\n  </p>"
    )


def _title(card: Any, item: Any) -> str:
    name = escape(item.display_name)
    if item.kind == "budget":
        name = f"Budget exceeded at {name}"
    elif item.kind != "gate":
        name = f"Unknown outcome at {name}"
    node = f' <code class="node-id">{escape(item.node)}</code>' if item.node_name else ""
    return f'<h2 id="{escape(card.card_id)}-title">\n    {name}{node}\n  </h2>'


def _waited(item: Any) -> str:
    since = item.waiting_since
    text = f"Waiting for {escape(timesince(since))}" if since is not None else "Waiting"
    if item.waiting_since_iso:
        text += (
            f', since <time datetime="{escape(item.waiting_since_iso)}" data-local-time>'
            f"{escape(item.waiting_since_text)} UTC</time>"
        )
    return f'<p class="waited">{text}</p>'


def _facts(card: Any, item: Any) -> str:
    card_id = escape(card.card_id)
    if item.kind == "gate":
        prompt = ""
        if item.reason:
            prompt = f'<div class="prompt">{markdown(item.reason)}</div>'
        return (
            f'{prompt}<div class="value-head"><p class="label" id="{card_id}-value-label">'
            f'Value at the gate</p><button type="button" class="button small secondary" '
            f'data-copy="{card_id}-json" hidden>Copy JSON</button></div>'
            f'<div class="value-view" tabindex="0" role="group" '
            f'aria-labelledby="{card_id}-value-label">{value_html(item.value)}</div>'
            f'<details class="value-json"><summary>JSON</summary><pre class="json-view" '
            f'id="{card_id}-json" tabindex="0">{escape(item.value_text)}</pre></details>'
        )
    if item.kind == "budget":
        budget = item.budget or {}
        return (
            f"<p>The <strong>{escape(str(budget.get('kind', '')))}</strong> budget of "
            f"{escape(str(budget.get('limit', '')))} was crossed: "
            f"{escape(str(item.observed))} observed.</p>"
        )
    return (
        f"<p>The write tool <code>{escape(str(item.tool))}</code> was cut off (call "
        f"{escape(str(item.call))}): whether it happened is unknown. Record what it returned, "
        'or run it again.</p><p class="label">Its input</p>'
        f'<pre class="json-view" tabindex="0">{escape(item.tool_input_text)}</pre>'
    )


@register.simple_tag(takes_context=True)
def card_waiting(context: Any, card: Any) -> SafeString:
    """A waiting card's title, age, state (:func:`card_state`) and what it waits about: a
    gate's prompt and value, a budget's or a cut-off write's facts."""
    item = card.item
    parts = [_title(card, item), _waited(item), card_state(context, card), _facts(card, item)]
    # Every piece above is constant markup, escaped text, or the sanitised prompt and value.
    return mark_safe("\n  ".join(parts))
