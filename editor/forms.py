"""The page forms: **New graph** and **Import JSON** (spec 06, *Graphs list*); the agent
definition form of **Agents** and **Start run** (spec 06, *Agents and tools*, *Runs*).

Each form checks what the person typed and builds what the service needs (the draft text);
the views hand that to :mod:`editor.services.documents`.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile

from editor.graph import (
    Graph,
    MalformedDocument,
    parse_document,
    short_hash,
    wire_value,
)
from editor.graph.agent_files import MAX_AGENT_FILE_BYTES
from editor.graph.edits import format_draft
from editor.graph.model import U32_MAX
from editor.graph.templates import (
    MAX_PERSONAS,
    MAX_ROUNDS,
    MIN_PERSONAS,
    TEMPLATES,
    approval_gate,
    blank,
    parallel,
    rounds,
)
from editor.presentation.typed import read_typed_json
from editor.services.agents import AgentInfo
from editor.services.documents import MAX_TITLE_LENGTH
from editor.services.numbers import INT64_MAX, InvalidNumber, strict_int

__all__ = ["IMPORTED_TITLE", "AgentForm", "ImportForm", "NewGraphForm", "StartRunForm"]

#: The title of a document imported from pasted text.
IMPORTED_TITLE = "Imported graph"

#: The templates that run agent definitions, and the agent fields each needs.
_AGENT_FIELDS = {
    "approval_gate": ("writer",),
    "parallel": ("critic", "synthesizer"),
    "rounds": ("critic", "synthesizer"),
}


class StrictIntegerField(forms.IntegerField):
    """Django's integer field, read by :func:`strict_int`: ASCII digits only (Django's own
    reads ``١٢`` as 12 and ``1_2`` as 12). The bounds stay the field's validators."""

    def to_python(self, value: Any) -> int | None:
        if value in self.empty_values:
            return None
        try:
            return strict_int(str(value).strip(), "value", minimum=-INT64_MAX, maximum=INT64_MAX)
        except InvalidNumber:
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid") from None


class NewGraphForm(forms.Form):
    title = forms.CharField(label="Title", max_length=MAX_TITLE_LENGTH)
    template = forms.ChoiceField(
        label="Starting point",
        choices=list(TEMPLATES.items()),
        initial="blank",
        widget=forms.RadioSelect,
    )
    writer = forms.ChoiceField(
        label="Writer agent", required=False, help_text="For Approval gate: runs the write node."
    )
    critic = forms.ChoiceField(label="Critic agent", required=False)
    synthesizer = forms.ChoiceField(label="Synthesizer agent", required=False)
    personas = forms.CharField(
        label="Personas",
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=f"One per line, {MIN_PERSONAS} to {MAX_PERSONAS}.",
    )
    max_rounds = StrictIntegerField(
        label="Rounds",
        required=False,
        min_value=1,
        max_value=MAX_ROUNDS,
        initial=3,
        help_text=f"For Critic panel — rounds: 1 to {MAX_ROUNDS}.",
    )

    def __init__(self, *args: Any, agents: list[AgentInfo], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = [("", "— choose —")] + [
            (agent.agent, f"{agent.name or '(unnamed)'} · {short_hash(agent.agent)}")
            for agent in agents
        ]
        for name in ("writer", "critic", "synthesizer"):
            self.fields[name].choices = choices  # type: ignore[attr-defined]
            if len(agents) == 1:
                # One agent definition: it is the only possible choice, so it is chosen.
                self.fields[name].initial = agents[0].agent
        self.graph: Graph | None = None

    def clean_title(self) -> str:
        title = self.cleaned_data["title"].strip()
        if "\x00" in title:
            raise forms.ValidationError("The title must not contain NUL characters.")
        return title

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data  # what Form.clean returns; its stubs allow None
        template = data.get("template")
        for name in _AGENT_FIELDS.get(template or "", ()):
            if not data.get(name):
                self.add_error(name, "Choose an agent definition.")
        personas: list[str] = []
        if template in ("parallel", "rounds"):
            personas = [line.strip() for line in data.get("personas", "").splitlines()]
            personas = [persona for persona in personas if persona]
            if not MIN_PERSONAS <= len(personas) <= MAX_PERSONAS:
                self.add_error(
                    "personas",
                    f"Give {MIN_PERSONAS} to {MAX_PERSONAS} personas, one per line "
                    f"({len(personas)} given).",
                )
            elif len(set(personas)) != len(personas):
                self.add_error("personas", "The personas must be different from each other.")
        if template == "rounds" and data.get("max_rounds") is None:
            self.add_error("max_rounds", f"Give a number of rounds from 1 to {MAX_ROUNDS}.")
        if self.errors or template is None:
            return data
        try:
            self.graph = _build(template, data, personas)
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None
        return data

    def draft_text(self) -> str:
        """The new document's draft: wire-order JSON indented by two spaces."""
        assert self.graph is not None
        return format_draft(wire_value(self.graph))


def _build(template: str, data: dict[str, Any], personas: list[str]) -> Graph:
    if template == "approval_gate":
        return approval_gate(data["writer"])
    if template == "parallel":
        return parallel(data["critic"], data["synthesizer"], personas)
    if template == "rounds":
        return rounds(data["critic"], data["synthesizer"], personas, data["max_rounds"])
    return blank()


def imported_title(text: str, file_name: str | None) -> str:
    """The title of an imported graph: its entry node's display name, else the file's name
    without its extension, else *Imported graph*."""
    try:
        graph = parse_document(text)
    except MalformedDocument:
        graph = None
    if graph is not None:
        targets = {edge.target for edge in graph.edges}
        for node in graph.nodes:
            if node.id not in targets and node.name and node.name.strip():
                return node.name.strip()[:MAX_TITLE_LENGTH]
    if file_name:
        stem = PurePath(file_name).stem.strip()
        if stem:
            return stem[:MAX_TITLE_LENGTH]
    return IMPORTED_TITLE


class ImportForm(forms.Form):
    title = forms.CharField(
        label="Title",
        required=False,
        max_length=MAX_TITLE_LENGTH,
        help_text="Optional: by default the entry node's name, or the file's name.",
    )
    file = forms.FileField(
        label="File", required=False, help_text="A graph document (.json), up to the body cap."
    )
    text = forms.CharField(
        label="Or paste the JSON",
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false"}),
    )

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data  # what Form.clean returns; its stubs allow None
        upload: UploadedFile | None = data.get("file")
        pasted: str = data.get("text") or ""
        limit = settings.GATEHOUSE_MAX_BODY_BYTES
        if upload is not None and pasted.strip():
            raise forms.ValidationError("Give a file or pasted text, not both.")
        if upload is not None:
            if upload.size is not None and upload.size > limit:
                self.add_error("file", f"The file is {upload.size} bytes; the limit is {limit}.")
                return data
            try:
                data["document_text"] = upload.read().decode("utf-8")
            except UnicodeDecodeError:
                self.add_error("file", "The file is not UTF-8 text.")
                return data
            file_name = upload.name
        elif pasted.strip():
            size = len(pasted.encode("utf-8", "surrogatepass"))
            if size > limit:
                self.add_error("text", f"The text is {size} bytes; the limit is {limit}.")
                return data
            data["document_text"] = pasted
            file_name = None
        else:
            raise forms.ValidationError("Choose a file or paste a graph document.")
        if "\x00" in data["document_text"]:
            self.add_error(
                "file" if upload else "text", "The text must not contain NUL characters."
            )
            return data
        typed = (data.get("title") or "").strip()
        if "\x00" in typed:
            self.add_error("title", "The title must not contain NUL characters.")
        data["document_title"] = typed or imported_title(data["document_text"], file_name)
        return data


# --- Agents ------------------------------------------------------------------------------

#: The ``model`` choices: the offline models, or an OpenAI-compatible one named beside it.
MODEL_CHOICES = [
    ("echo", "echo — answers with the value it is given"),
    ("scripted", "scripted — answers with the replies below, in turn"),
    ("openai", "openai: — an OpenAI-compatible model, named below"),
]
#: Where the service's error ``field`` is shown on the form.
_AGENT_ERROR_FIELDS = {
    "name": "name",
    "model": "model",
    "prompt": "prompt",
    "tools": "tools",
    "budget.max_steps": "max_steps",
    "budget.max_tokens": "max_tokens",
}


class AgentForm(forms.Form):
    name = forms.CharField(label="Name", max_length=64, help_text="Graphs offer agents by name.")
    model = forms.ChoiceField(label="Model", choices=MODEL_CHOICES, initial="echo")
    openai_model = forms.CharField(
        label="OpenAI model name",
        required=False,
        max_length=200,
        help_text="For openai: the model's name at the configured endpoint, e.g. gpt-4o-mini.",
    )
    prompt = forms.CharField(
        label="Prompt",
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text="The agent's instructions (the system message).",
    )
    tools = forms.MultipleChoiceField(
        label="Tools",
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="The tools the model may call.",
    )
    # A budget is a positive 32-bit integer (spec 01).
    max_steps = StrictIntegerField(
        label="Budget: max steps", required=False, min_value=1, max_value=U32_MAX
    )
    max_tokens = StrictIntegerField(
        label="Budget: max tokens", required=False, min_value=1, max_value=U32_MAX
    )
    replies = forms.CharField(
        label="Scripted replies",
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
        help_text=(
            "For scripted: one reply per line (blank lines are skipped). For replies that span "
            "lines, give a JSON list of strings instead, starting with <code>[</code>: e.g. "
            '<code>["first reply", "second\\nreply"]</code>.'
        ),
    )

    def __init__(self, *args: Any, tool_names: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["tools"].choices = [(name, name) for name in tool_names]  # type: ignore[attr-defined]

    def _replies(self, text: str) -> list[str] | None:
        if text.strip().startswith("["):
            replies, problem = read_typed_json(text)
            if problem is not None:
                self.add_error("replies", f"Not valid JSON: {problem.error}")
                return None
            if not isinstance(replies, list) or any(type(reply) is not str for reply in replies):
                self.add_error("replies", "A JSON list of replies must hold strings only.")
                return None
            return replies
        return [line for line in text.splitlines() if line.strip()]

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data  # what Form.clean returns; its stubs allow None
        model = data.get("model")
        if model == "openai" and not (data.get("openai_model") or "").strip():
            self.add_error("openai_model", "Name the OpenAI model.")
        if model == "scripted":
            replies = self._replies(data.get("replies") or "")
            if replies is not None and not replies:
                self.add_error("replies", "A scripted agent needs at least one reply.")
            data["reply_list"] = replies or []
        return data

    def definition(self) -> dict[str, Any]:
        """The agent definition to store (spec 01, *Agent definitions*)."""
        data = self.cleaned_data
        model = data["model"]
        if model == "openai":
            model = "openai:" + data["openai_model"].strip()
        definition: dict[str, Any] = {
            "name": data["name"],
            "model": model,
            "prompt": data.get("prompt") or "",
            "tools": list(data.get("tools") or ()),
        }
        budget = {
            key: data[key] for key in ("max_steps", "max_tokens") if data.get(key) is not None
        }
        if budget:
            definition["budget"] = budget
        if data["model"] == "scripted":
            definition["options"] = {"replies": data["reply_list"]}
        return definition

    def add_service_errors(self, errors: list[dict[str, str]]) -> None:
        """Show each of the service's errors beside the field it is about."""
        for error in errors:
            where = str(error.get("field", ""))
            field = _AGENT_ERROR_FIELDS.get(where)
            if where.startswith("options"):
                field = "replies"
            if field == "model" and self.cleaned_data.get("model") == "openai":
                field = "openai_model"
            self.add_error(field, error["message"])


class AgentFileForm(forms.Form):
    """The reference's agent file, pasted as it is (``POST /v1/agents`` with TOML)."""

    source = forms.CharField(
        label="Agent file (TOML)",
        strip=False,
        max_length=MAX_AGENT_FILE_BYTES,
        widget=forms.Textarea(attrs={"rows": 12, "spellcheck": "false"}),
        help_text=(
            "The reference's agent file. Each <code>[[mcp_servers]]</code> entry must name a "
            "server of this installation's catalogue: the same <code>command</code> and "
            "<code>args</code>, or the same <code>url</code> (no <code>env</code> or "
            "<code>cwd</code>)."
        ),
    )

    def add_service_errors(self, errors: list[dict[str, str]]) -> None:
        """Show each of the service's errors, located by the field of the file it is about."""
        for error in errors:
            where = str(error.get("field", ""))
            message = error["message"]
            self.add_error("source", f"{where}: {message}" if where else message)


# --- Start run ---------------------------------------------------------------------------


class StartRunForm(forms.Form):
    input = forms.CharField(
        label="Input (JSON)",
        required=False,
        strip=False,
        widget=forms.Textarea(
            attrs={"rows": 6, "spellcheck": "false", "class": "json-input", "data-json-check": ""}
        ),
        help_text="The value the entry nodes receive, as JSON; <code>null</code> for none.",
    )
    document = forms.SlugField(required=False, widget=forms.HiddenInput)

    def clean_input(self) -> Any:
        if self.data.get("input_from") == "fields":
            return None  # the input is the generated fields' (services.documents.samples)
        text = self.cleaned_data.get("input") or ""
        if not text.strip():
            raise forms.ValidationError("Enter the input as JSON (null for none).")
        value, problem = read_typed_json(text)
        if problem is not None:
            raise forms.ValidationError(f"Not valid JSON: {problem.error}")
        return value
