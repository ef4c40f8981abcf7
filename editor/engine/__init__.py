"""The run engine: pure Python, no Django (spec 04).

Deterministic orchestration apart from side effects: the engine walks a frozen graph and
records every step as an event; storage, tools, model providers, agent definitions and the
clock come in through the ports of :mod:`editor.engine.ports`. A run's state is a fold of its
log (:func:`run_status`), so a run can be re-driven after a crash, projected onto the canvas
(:func:`graph_projection`) and audited (:func:`audit`).
"""

from editor.engine.errors import (
    AlreadyVoted,
    AppendRefused,
    EngineError,
    ForkRefused,
    InvalidForkNode,
    InvalidResumeInput,
    NotParked,
    OriginMoving,
    OriginNeedsReconciliation,
    ProviderError,
    RunLost,
    ToolError,
    TransitionRefused,
    WriteReplayHazard,
)
from editor.engine.events import (
    EVENT_FIELDS,
    TERMINAL_KINDS,
    audit,
    check_append,
    envelope_from_json,
)
from editor.engine.forks import ForkPlan, fork_events, fork_origin, plan_fork
from editor.engine.memory import InMemoryStore
from editor.engine.ports import (
    ANSWER_TOOL,
    AgentDirectory,
    Clock,
    Envelope,
    Installation,
    Limits,
    ModelProvider,
    ModelReply,
    ModelRequest,
    ProviderRegistry,
    RunRecord,
    RunStore,
    SystemClock,
    ToolCall,
    ToolContext,
    ToolEffect,
    ToolRegistry,
    ToolSpec,
    Usage,
)
from editor.engine.records import (
    park_again,
    prepare_abandon,
    prepare_decision,
    prepare_failure,
    prepare_resume,
    prepare_wake,
    start_event,
    timestamp,
)
from editor.engine.resolution import resolve_names
from editor.engine.runner import Engine, compact_json
from editor.engine.schemas import violations
from editor.engine.states import PARKED, TERMINAL, TRANSITIONS, RunState, check_transition
from editor.engine.status import StatusFold, graph_projection, run_status
from editor.engine.trace import Levels, NodeMark, RunTrace, level_of, levels, run_trace
from editor.engine.transitions import allowed_sources, check_append_states

__all__ = [
    "ANSWER_TOOL",
    "EVENT_FIELDS",
    "PARKED",
    "TERMINAL",
    "TERMINAL_KINDS",
    "TRANSITIONS",
    "AgentDirectory",
    "AlreadyVoted",
    "AppendRefused",
    "Clock",
    "Engine",
    "EngineError",
    "Envelope",
    "ForkPlan",
    "ForkRefused",
    "InMemoryStore",
    "Installation",
    "InvalidForkNode",
    "InvalidResumeInput",
    "Levels",
    "Limits",
    "ModelProvider",
    "ModelReply",
    "ModelRequest",
    "NodeMark",
    "NotParked",
    "OriginMoving",
    "OriginNeedsReconciliation",
    "ProviderError",
    "ProviderRegistry",
    "RunLost",
    "RunRecord",
    "RunState",
    "RunStore",
    "RunTrace",
    "StatusFold",
    "SystemClock",
    "ToolCall",
    "ToolContext",
    "ToolEffect",
    "ToolError",
    "ToolRegistry",
    "ToolSpec",
    "TransitionRefused",
    "Usage",
    "WriteReplayHazard",
    "allowed_sources",
    "audit",
    "check_append",
    "check_append_states",
    "check_transition",
    "compact_json",
    "envelope_from_json",
    "fork_events",
    "fork_origin",
    "graph_projection",
    "level_of",
    "levels",
    "park_again",
    "plan_fork",
    "prepare_abandon",
    "prepare_decision",
    "prepare_failure",
    "prepare_resume",
    "prepare_wake",
    "resolve_names",
    "run_status",
    "run_trace",
    "start_event",
    "timestamp",
    "violations",
]
