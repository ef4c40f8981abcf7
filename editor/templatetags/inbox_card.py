"""An inbox card drawn in Python (spec 06, *Approval inbox*; ``docs/inbox.md``),
``{% load inbox_card %}``:

* ``{% waiting_card card %}``: a waiting card: the line above it (its document and version,
  graph and run, linked), its title, age and state (due time and badge, what its gate still
  needs and from whom, its escalation, its claim with the button that takes or gives it up,
  the box that selects it to be decided with others of its gate), what it waits about (a
  gate's prompt and value, a budget's or a cut-off write's facts), and the form that resolves
  it, or why this person sees it read-only;
* ``{% card_head item %}``: the line above a card in another state;
* ``{% graph_options choices graph %}``: the graph filter's options (``graph`` selected).

The inbox's first page shows 50 cards, and Django's template engine spent most of the page's
server time drawing them (each variable a lookup, each tag a node): here each card is a few
string joins. Every value is escaped with :func:`html.escape` (``quote=True``: the escaping
Django's own ``escape`` applies); the prompt is sanitised Markdown and the value a tree that
escapes every piece (``presentation.rich_text``, ``presentation.value_view``). A card's other
states (a receipt, someone else was first) stay in ``inbox/page.html#card``: a page shows them
one at a time.
"""

from __future__ import annotations

import functools
from datetime import datetime
from html import escape
from typing import Any

from django import template
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.timesince import timesince

from editor.graph import hex_digits, short_hash
from editor.presentation.rich_text import markdown_html
from editor.presentation.value_view import value_html
from editor.templatetags.approval import approval_decision, form_body
from editor.templatetags.gatehouse import SHORT_RUN_CHARS

register = template.Library()

#: What stands for the one argument of each address a card links to, to reverse it once.
_PLACEHOLDERS = {
    "graph": "0" * 64,
    "run": "00000000-0000-4000-8000-000000000000",
    "inbox_resolve": "00000000-0000-4000-8000-000000000000",
    "inbox_claim": "00000000-0000-4000-8000-000000000000",
    "inbox_release": "00000000-0000-4000-8000-000000000000",
}


@functools.lru_cache(maxsize=64)
def _address_parts(name: str, prefix: str, urlconf: str | None) -> tuple[str, str]:
    address = reverse(name, args=[_PLACEHOLDERS[name]], urlconf=urlconf)
    head, _, tail = address.partition(_PLACEHOLDERS[name])
    return head, tail


def _address(name: str, argument: str) -> str:
    """``reverse(name, args=[argument])`` for a run id or a graph's hex digits, reversed once
    per script prefix (a page links 50 cards, four addresses each)."""
    head, tail = _address_parts(name, get_script_prefix(), get_urlconf())
    return f"{head}{argument}{tail}"


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
    claim_url = _address("inbox_claim", item.run)
    action = _address("inbox_release", item.run) if mine else claim_url
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


def _state(card: Any, item: Any, csrf_token: str) -> str:
    """A waiting card's due time, needs, escalation and claim, its claim's button and its
    selection box."""
    notice = f'<p class="notice" role="alert">{escape(card.notice)}</p>' if card.notice else ""
    parts = [
        _deadline(item),
        _needs(item),
        _claim(card, item),
        notice,
        _claim_form(card, item, csrf_token),
        _select(card, item),
    ]
    return "".join(parts)


def _head(item: Any) -> str:
    """The line above a card: its document and version, graph and run, linked."""
    document = ""
    if item.document_title:
        version = f" v{item.version}" if item.version else ""
        document = f"{escape(item.document_title)}{version} · "
    graph = _address("graph", hex_digits(str(item.graph_hash)))
    run = _address("run", item.run)
    return (
        f'<p class="inbox-graph">\n    {document}<a href="{escape(graph)}" '
        f'title="{escape(item.graph_hash)}"><code>{escape(short_hash(str(item.graph_hash)))}'
        f'</code></a>\n    · <a href="{escape(run)}">run <code>{escape(item.run[:SHORT_RUN_CHARS])}'
        "</code></a>\n  </p>"
    )


@register.simple_tag
def card_head(item: Any) -> SafeString:
    """:func:`_head` for a card in another state (a receipt, someone else was first)."""
    # Every piece is constant markup or escaped text.
    return mark_safe(_head(item))


def _title(card: Any, item: Any) -> str:
    name = escape(item.display_name)
    if item.kind == "budget":
        name = f"Budget exceeded at {name}"
    elif item.kind != "gate":
        name = f"Unknown outcome at {name}"
    node = f' <code class="node-id">{escape(item.node)}</code>' if item.node_name else ""
    return f'<h2 id="{escape(card.card_id)}-title">\n    {name}{node}\n  </h2>'


class _Plural:
    """An English unit for ``timesince`` (``%(num)d day`` or ``%(num)d days``): the page is in
    English, and Django's own units are lazily translated strings, which cost a third of each
    card's age."""

    def __init__(self, unit: str) -> None:
        self.one, self.many = f"%(num)d {unit}", f"%(num)d {unit}s"

    def __mod__(self, values: dict[str, int]) -> str:
        return (self.one if values["num"] == 1 else self.many) % values


_AGE_UNITS = {unit: _Plural(unit) for unit in ("year", "month", "week", "day", "hour", "minute")}


def _waited(item: Any) -> str:
    since = item.waiting_since  # a property that parses the recorded time: read once
    if since is None:
        return '<p class="waited">Waiting</p>'
    age = timesince(since, item.moment, time_strings=_AGE_UNITS)  # type: ignore[arg-type]
    return (
        f'<p class="waited">Waiting for {escape(age)}, since <time datetime="'
        f'{escape(since.isoformat())}" data-local-time>{since.strftime("%Y-%m-%d %H:%M")} UTC'
        "</time></p>"
    )


def _facts(card: Any, item: Any) -> str:
    card_id = escape(card.card_id)
    if item.kind == "gate":
        prompt = ""
        if item.reason:
            text = markdown_html(item.reason) if isinstance(item.reason, str) else ""
            prompt = f'<div class="prompt">{text}</div>'
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


def _hidden(card: Any, item: Any, csrf_token: str) -> str:
    """What a card's form posts beside what a person fills in: the token, and which
    suspension it answers (a crafted post naming another is refused)."""
    scope = (
        f'<input type="hidden" name="scope" value="{escape(card.scope_json)}">'
        if item.scope
        else ""
    )
    return (
        f'<input type="hidden" name="csrfmiddlewaretoken" value="{escape(csrf_token)}">'
        f'<input type="hidden" name="node" value="{escape(item.node)}">'
        f'<input type="hidden" name="seq" value="{item.seq}">{scope}'
    )


def _error(card_id: str, name: str, messages: list[str]) -> tuple[str, str]:
    """A control's ARIA marks and the message under it, for the errors of field ``name``."""
    if not messages:
        return "", ""
    marks = f' aria-invalid="true" aria-describedby="{card_id}-{name}-error"'
    text = escape(" ".join(messages))
    return marks, f'<p class="field-error" id="{card_id}-{name}-error">{text}</p>'


def _gate_form(card: Any, item: Any) -> str:
    form = card.form
    decision = form.decision
    schema = item.schema_text if form.is_fallback and item.input_schema else ""
    body = form_body(form, card.card_id, schema_text=schema)
    if decision:
        return body + "\n" + approval_decision(decision, card.card_id)
    return body + '\n<button type="submit" class="button">Resolve</button>'


def _budget_form(card: Any, item: Any) -> str:
    card_id = escape(card.card_id)
    kind = (item.budget or {}).get("kind")
    step = "any" if kind in ("cost_usd", "wall_time") else "1"
    marks, error = _error(card_id, "limit", card.errors.get("limit"))
    return (
        f'<div class="field"><label for="{card_id}-limit">New limit</label>'
        f'<input type="number" id="{card_id}-limit" name="limit" '
        f'value="{escape(card.limit_text)}" step="{step}" min="0"{marks}>'
        f'<p class="help">Suggested: {escape(str(item.suggested_limit))} (twice the old limit, '
        f"and above what was observed).</p>{error}</div>"
        '<button type="submit" class="button">Raise limit and continue</button>'
    )


def _output_form(card: Any) -> str:
    card_id = escape(card.card_id)
    marks, error = _error(card_id, "output", card.errors.get("output"))
    return (
        f'<div class="field"><label for="{card_id}-output">Output (JSON)</label>'
        f'<textarea id="{card_id}-output" name="output" rows="4" class="json-input"{marks}>'
        f"{escape(card.output_text)}</textarea>{error}</div>"
        '<div class="actions"><button type="submit" class="button" name="action" '
        'value="record">Record output</button><button type="submit" class="button secondary" '
        'name="action" value="retry">Run again</button></div>'
    )


def _form(card: Any, item: Any, csrf_token: str) -> str:
    """The form that resolves a card, or why this person sees it read-only."""
    if not card.may_resolve:
        if card.refusal:
            return (
                f'<p class="notice read-only refusal" role="status" '
                f'data-code="{escape(card.refusal_code or "")}">{escape(card.refusal)} '
                "You see it read-only.</p>"
            )
        who = "approvers can resolve a gate"
        if item.kind != "gate":
            who = "operators can resolve this"
        return f'<p class="notice read-only">Only {who}; you see it read-only.</p>'
    action = escape(_address("inbox_resolve", item.run))
    general = "".join(
        f'<p class="field-error" role="alert">{escape(message)}</p>' for message in card.general
    )
    if item.kind == "gate":
        fields = _gate_form(card, item)
    elif item.kind == "budget":
        fields = _budget_form(card, item)
    else:
        fields = _output_form(card)
    return (
        f'<form class="stacked-form approval-form" method="post" action="{action}" '
        f'hx-post="{action}">\n{_hidden(card, item, csrf_token)}{general}\n{fields}\n</form>'
    )


@register.simple_tag(takes_context=True)
def waiting_card(context: Any, card: Any) -> SafeString:
    """A waiting card: its head, title, age, state (:func:`_state`), what it waits about,
    and the form that resolves it (or why this person sees it read-only)."""
    item = card.item
    card_id = escape(card.card_id)
    csrf_token = str(context.get("csrf_token") or "")
    parts = [
        f'<article class="card inbox-card inbox-{escape(item.kind)}" id="{card_id}" '
        f'hx-target="this" hx-swap="outerHTML" aria-labelledby="{card_id}-title">',
        _head(item),
        _title(card, item),
        _waited(item),
        _state(card, item, csrf_token),
        _facts(card, item),
        _form(card, item, csrf_token),
        "</article>",
    ]
    # Every piece above is constant markup, escaped text, or the sanitised prompt and value.
    return mark_safe("\n  ".join(parts))


@register.simple_tag
def graph_options(choices: Any, selected: str) -> SafeString:
    """The graph filter's options, one a graph with something waiting (up to 100)."""
    options = [
        f'<option value="{escape(choice.graph_hash)}"'
        f"{' selected' if choice.graph_hash == selected else ''}>{escape(choice.label)}</option>"
        for choice in choices
    ]
    # Every piece is constant markup or escaped text.
    return mark_safe("".join(options))
