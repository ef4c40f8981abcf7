"""Tool and model calls, and the agent loop (spec 04, *agent* and *tool*).

A mixin of the drive (:mod:`editor.engine.runner`): every call is recorded before it is made,
replayed when the log already holds its completion, and re-issued with the same idempotency
key when it was interrupted (a ``write`` is parked for a person instead).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any, cast

from editor.engine.errors import ProviderError, ToolError
from editor.engine.history import CallHistory, NodeHistory, Scope
from editor.engine.parks import (
    PARK_IN_AGENT,
    ParkRequestError,
    SuspendRequest,
    asks_to_park,
    park_request,
    without_park,
)
from editor.engine.ports import (
    ANSWER_TOOL,
    CallClaim,
    CallCommitments,
    ModelReply,
    ModelRequest,
    ToolContext,
    ToolEffect,
    ToolSpec,
    Usage,
)
from editor.engine.records import timestamp
from editor.engine.schemas import first_violation, violations
from editor.engine.status import instant
from editor.engine.steps import (
    Buffer,
    DriveState,
    Parked,
    StepFailed,
    compact_json,
    error_message,
    event_payload,
    scope_json,
)
from editor.graph import (
    MISSING,
    AgentDefinition,
    AgentNode,
    JsonError,
    ToolNode,
    hash_value,
    parse_reference,
    read_json,
)

__all__ = [
    "INVALID_ANSWER_FEEDBACK",
    "NOT_ALONE_FEEDBACK",
    "NO_ANSWER_FEEDBACK",
    "CallSteps",
]

#: What the structured loop tells a model that did not answer through ``salvor_answer`` as
#: required (spec 08, section 4: the texts are Gatehouse's own, exact).
NOT_ALONE_FEEDBACK = (
    f"call {ANSWER_TOOL} alone: finish the other tool calls first, then call {ANSWER_TOOL} "
    "once with the final answer"
)
INVALID_ANSWER_FEEDBACK = (
    f"the {ANSWER_TOOL} input does not match the required schema: {{violations}}; "
    f"call {ANSWER_TOOL} again with an input that matches it"
)
NO_ANSWER_FEEDBACK = (
    f"answer by calling {ANSWER_TOOL} with an input that matches the required schema"
)


if TYPE_CHECKING:
    _DriveBase = DriveState
else:
    _DriveBase = object


class CallSteps(_DriveBase):
    """The drive's tool nodes, agent nodes and the calls they make.

    Uses the drive's state (``run_id``, ``installation``, ``limits``, ``flush``…): it is only
    ever mixed into :class:`editor.engine.runner._Drive`."""

    # tool ---------------------------------------------------------------------------

    def _tool_node(
        self, node: ToolNode, value: Any, scope: Scope, buffer: Buffer, past: NodeHistory
    ) -> Any:
        if node.input:
            data: dict[str, Any] = {}
            for name, reference in node.input.items():
                resolved = parse_reference(reference).resolve(value)
                if resolved is MISSING:
                    raise StepFailed(
                        f"tool node `{node.id}`: the input reference `{reference}` for "
                        f"`{name}` is missing"
                    )
                data[name] = resolved
        else:
            data = value
        self.check_schema(
            node.input_schema, data, f"tool node `{node.id}`: its input", "input_schema"
        )
        spec = self.installation.tools.get(node.tool)
        assert spec is not None  # resolve_names checked it
        output = self._tool_call(
            spec, node.id, data, scope, 0, buffer, past, f"tool node `{node.id}` failed"
        )
        output = self._parked_by_result(node, output, scope, buffer, past)
        self.check_schema(
            node.output_schema, output, f"tool node `{node.id}`: its output", "output_schema"
        )
        return output

    def _parked_by_result(
        self, node: ToolNode, output: Any, scope: Scope, buffer: Buffer, past: NodeHistory
    ) -> Any:
        """The node's output once the park its result asks for is over (spec 08, section 5):
        the resume input after a suspension, the result without ``_meta.salvor`` after a sleep;
        the result itself when it asks for none. Parks the run while the park lasts."""
        try:
            park = park_request(output)
        except ParkRequestError as error:
            raise StepFailed(f"tool node `{node.id}` failed: {error}") from None
        if park is None:
            return output
        if isinstance(park, SuspendRequest):
            if past.resumed is not None:
                return past.resumed.get("input")
            fields: dict[str, Any] = {"reason": park.reason, "input_schema": park.input_schema}
            if park.signal:
                fields["kind"] = "signal"
            raise Parked([("Suspended", event_payload(node.id, scope, **fields))])
        output = without_park(output)
        if past.sleep_completed:
            return output
        if past.sleep_started is not None:
            wake_at = instant(past.sleep_started.get("wake_at"))
            if wake_at is None or self.clock.now() < wake_at:
                raise Parked([])
        else:
            started = (
                "SleepStarted",
                event_payload(node.id, scope, wake_at=timestamp(park.wake_at)),
            )
            if self.clock.now() < park.wake_at:
                raise Parked([started])
            buffer.append(started)  # already past: both on this drive
        buffer.append(("SleepCompleted", event_payload(node.id, scope)))
        return output

    def _tool_call(
        self,
        spec: ToolSpec,
        node_id: str,
        data: Any,
        scope: Scope,
        number: int,
        buffer: Buffer,
        past: NodeHistory,
        failure: str,
    ) -> Any:
        """One tool call, recorded: replayed when complete, re-issued when interrupted (or
        parked for reconciliation when it writes)."""
        recorded = past.tool_calls.get(number) or CallHistory()
        if recorded.completed is not None:
            return recorded.completed.get("output")
        if recorded.reconciled is not None and not recorded.reconciled.get("retry"):
            return recorded.reconciled.get("output")
        self.check_wall_time()
        key = hash_value(
            {"run": self.run_id, "node": node_id, "scope": scope_json(scope), "call": number}
        )
        identity = False  # a declared key on a call with an effect: one run executes it
        if spec.declared_key is not None:
            try:
                key = spec.declared_key(data)
            except ToolError as refusal:
                raise StepFailed(f"{failure}: {refusal}") from None
            identity = spec.effect is not ToolEffect.READ and isinstance(
                self.store, CallCommitments
            )
        retry = recorded.reconciled is not None  # a person asked to run the write again
        if identity:
            copied = self._claimed_elsewhere(spec, key, data, failure)
            if copied is not None:
                return self._copied_call(spec, node_id, data, scope, number, buffer, key, copied)
        if recorded.requested is None or retry:
            problem = first_violation(spec.input_schema, data)
            if problem is not None:
                raise StepFailed(
                    f"{failure}: the input does not match the tool's input schema: {problem}"
                )
            # A retry is recorded as a fresh request, so that a crash during it leaves a
            # request without completion again, which parks again instead of re-running.
            buffer.append(_call_requested(node_id, scope, spec, data, key, number))
        elif spec.effect is ToolEffect.WRITE:
            # A write whose outcome is unknown: a person decides (spec 04, Durability).
            raise Parked(
                [
                    (
                        "ReconciliationNeeded",
                        event_payload(
                            node_id,
                            scope,
                            tool=spec.name,
                            call=number,
                            input=recorded.requested.get("input"),
                            idempotency_key=key,
                        ),
                    )
                ]
            )
        self.flush(buffer)
        context = ToolContext(self.run_id, node_id, key, self.limits.tool_timeout)
        attempts = 1 + (self.limits.tool_retries if spec.effect is not ToolEffect.WRITE else 0)
        for attempt in range(attempts):
            try:
                output = self._call_with_timeout(
                    lambda: spec.func(data, context),
                    self.limits.tool_timeout,
                    f"{failure}: the call took longer than {self.limits.tool_timeout:g} s "
                    f"(GATEHOUSE_TOOL_TIMEOUT)",
                )
                break
            except StepFailed:
                if attempt + 1 == attempts:
                    raise
            except Exception as error:  # a tool's own failure, whatever its type
                if attempt + 1 == attempts:
                    raise StepFailed(f"{failure}: {error_message(error)}") from error
        problem = first_violation(spec.output_schema, output)
        if problem is not None:
            raise StepFailed(
                f"{failure}: its answer does not match the tool's output schema: {problem}"
            )
        if identity:
            cast("CallCommitments", self.store).settle_call(spec.name, key, self.run_id, output)
        buffer.append(
            (
                "ToolCallCompleted",
                event_payload(node_id, scope, tool=spec.name, output=output, call=number),
            )
        )
        if spec.effect is ToolEffect.WRITE:
            self.flush(buffer)  # the outcome of a write is recorded at once
        return output

    def _claimed_elsewhere(
        self, spec: ToolSpec, key: str, data: Any, failure: str
    ) -> CallClaim | None:
        """The settled call another run made under this declared identity (its output is this
        call's; the tool does not run), or ``None`` when this run holds the identity. Another
        run's unfinished call, or the same key over another input, fails the step."""
        claim = cast("CallCommitments", self.store).claim_call(spec.name, key, self.run_id, data)
        if claim.run_id == self.run_id:
            return None
        if not claim.settled:
            raise StepFailed(
                f"{failure}: the call `{key}` is in flight in run {claim.run_id}; it runs once "
                "across runs, so this run may be started again once that one has finished it"
            )
        if hash_value(claim.input) != hash_value(data):
            raise StepFailed(
                f"{failure}: the idempotency key `{key}` already names another call (in run "
                f"{claim.run_id}, over another input); one key names one operation"
            )
        return claim

    def _copied_call(
        self,
        spec: ToolSpec,
        node_id: str,
        data: Any,
        scope: Scope,
        number: int,
        buffer: Buffer,
        key: str,
        claim: CallClaim,
    ) -> Any:
        """Record the call and, as its completion, the output the holding run recorded."""
        buffer.append(_call_requested(node_id, scope, spec, data, key, number))
        buffer.append(
            (
                "ToolCallCompleted",
                event_payload(
                    node_id,
                    scope,
                    tool=spec.name,
                    output=claim.output,
                    call=number,
                    deduplicated_from=claim.run_id,
                ),
            )
        )
        self.flush(buffer)
        return claim.output

    def _call_with_timeout(self, call: Callable[[], Any], timeout: float, message: str) -> Any:
        """Run ``call`` on a thread of its own and wait at most ``timeout`` seconds for it, or
        what is left of the run's wall time when that is less (the failure names the wall time
        then).

        One thread per call, not a fixed pool: a wide map has as many calls in flight as its
        concurrency, and a call queued behind a full pool would spend its timeout waiting.
        A call that times out is left to finish on its own (daemon thread); its result is
        discarded."""
        # A call counts against the run's wall time: it may take only what is left of it.
        remaining = self.remaining_time()
        if remaining <= 0:
            raise self.wall_time_spent()
        if remaining < timeout:
            timeout, failure = remaining, self.wall_time_spent()
        else:
            failure = StepFailed(message, "limit_exceeded")
        future: Future[Any] = Future()

        def target() -> None:
            future.set_running_or_notify_cancel()
            try:
                future.set_result(call())
            except BaseException as error:  # re-raised in the waiting thread
                future.set_exception(error)

        threading.Thread(target=target, name="gatehouse-call", daemon=True).start()
        try:
            return future.result(timeout=timeout)
        except FutureTimeout:
            raise failure from None

    # agent --------------------------------------------------------------------------

    def _agent_node(
        self, node: AgentNode, value: Any, scope: Scope, buffer: Buffer, past: NodeHistory
    ) -> Any:
        self.check_schema(
            node.input_schema, value, f"agent node `{node.id}`: its input", "input_schema"
        )
        schema = node.output_schema
        if schema is None:  # the agent's own declared shape, when the node declares none
            definition = self.installation.agents.get(node.agent_hash)
            schema = definition.output_schema if definition is not None else None
        # With a schema the agent answers through `salvor_answer` (spec 08, section 4): the
        # loop returns an object already checked against it.
        return self._agent_loop(
            node.id, node.agent_hash, value, scope, buffer, past, answer_schema=schema
        )

    def _agent_loop(
        self,
        node_id: str,
        agent_hash: str,
        value: Any,
        scope: Scope,
        buffer: Buffer,
        past: NodeHistory,
        *,
        answer_schema: dict[str, Any] | bool | None = None,
    ) -> Any:
        """The agent's conversation until it answers. Without ``answer_schema`` the answer is
        the first reply without tool calls; with one it is the input of a lone, valid
        ``salvor_answer`` call, and anything else is answered with feedback and asked again
        (every retry a model call, counted by ``max_steps``)."""
        definition = self.installation.agents.get(agent_hash)
        assert definition is not None  # resolve_names checked it
        provider = self.installation.providers.provider_for(definition.model)
        assert provider is not None
        tools = tuple(self.installation.tools.get(name) for name in definition.tools)
        # A tool switched off on this installation is not offered to the model at all.
        offered = {spec.name: spec for spec in tools if spec is not None and spec.enabled}
        # Without a `max_steps` of its own an agent gets the installation's (a runaway model
        # that keeps asking for tools parks the run instead of holding a worker).
        budgets = _Budgets(definition, past, self.limits.agent_max_steps)
        # Wall time counts the run's time in `running` since the node was entered: time parked
        # (at this budget, or anywhere else in the run) does not count against it.
        entered = past.entered_running
        if entered is None:
            entered = self.limits.wall_time - self.remaining_time()
        messages: list[dict[str, Any]] = [{"role": "user", "content": compact_json(value)}]
        tool_number = 0
        step = 0
        while True:
            live = (past.model_calls.get(step) or CallHistory()).completed is None
            elapsed = self.limits.wall_time - self.remaining_time() - entered
            crossed = budgets.before_call(step, elapsed if live else None)
            if crossed is not None:
                raise Parked([("BudgetExceeded", event_payload(node_id, scope, **crossed))])
            reply, _ = self._model_call(
                definition,
                provider,
                node_id,
                scope,
                step,
                messages,
                tuple(offered.values()),
                buffer,
                past,
                answer_schema,
            )
            step += 1
            # Checked as soon as the usage is known: no tool call runs past a crossed budget.
            crossed = budgets.after_call(reply.usage)
            if crossed is not None:
                raise Parked([("BudgetExceeded", event_payload(node_id, scope, **crossed))])
            if answer_schema is not None:
                answer = self._structured_round(
                    node_id,
                    reply,
                    offered,
                    answer_schema,
                    messages,
                    scope,
                    tool_number,
                    buffer,
                    past,
                )
                tool_number += sum(1 for call in reply.tool_calls if call.name != ANSWER_TOOL)
                if answer is not MISSING:
                    return answer
                continue
            if reply.tool_calls:
                messages.append(_assistant_message(reply))
                for call in reply.tool_calls:
                    result = self._agent_tool_call(
                        node_id,
                        offered,
                        call.name,
                        call.arguments,
                        scope,
                        tool_number,
                        buffer,
                        past,
                    )
                    tool_number += 1
                    messages.append(
                        {"role": "tool", "tool_call_id": call.id, "content": compact_json(result)}
                    )
            if not reply.tool_calls:
                return _reply_value(reply.content)

    def _agent_tool_call(
        self,
        node_id: str,
        offered: dict[str, ToolSpec],
        name: str,
        arguments: Any,
        scope: Scope,
        number: int,
        buffer: Buffer,
        past: NodeHistory,
    ) -> Any:
        spec = offered.get(name)
        if spec is None:
            raise StepFailed(
                f"agent node `{node_id}`: the model asked for the tool `{name}`, "
                f"which its agent does not list"
            )
        failure = f"agent node `{node_id}`: the tool `{name}` failed"
        result = self._tool_call(spec, node_id, arguments, scope, number, buffer, past, failure)
        if asks_to_park(result):
            raise StepFailed(f"{failure}: {PARK_IN_AGENT}")
        return result

    def _structured_round(
        self,
        node_id: str,
        reply: ModelReply,
        offered: dict[str, ToolSpec],
        schema: dict[str, Any] | bool,
        messages: list[dict[str, Any]],
        scope: Scope,
        tool_number: int,
        buffer: Buffer,
        past: NodeHistory,
    ) -> Any:
        """One reply of the structured loop: the answer object, or :data:`MISSING` after
        appending to ``messages`` what the model is told before it is asked again. The real
        tool calls of the reply run and are recorded as usual; ``salvor_answer`` never runs."""
        answers = [call for call in reply.tool_calls if call.name == ANSWER_TOOL]
        if not reply.tool_calls:
            messages.append({"role": "assistant", "content": reply.content})
            messages.append({"role": "user", "content": NO_ANSWER_FEEDBACK})
            return MISSING
        messages.append(_assistant_message(reply))
        alone = len(reply.tool_calls) == 1 and len(answers) == 1
        for call in reply.tool_calls:
            if call.name != ANSWER_TOOL:
                result = self._agent_tool_call(
                    node_id, offered, call.name, call.arguments, scope, tool_number, buffer, past
                )
                tool_number += 1
                content = compact_json(result)
            elif not alone:
                content = NOT_ALONE_FEEDBACK
            else:
                problems = violations(schema, call.arguments)
                self.check_wall_time()  # the check's own time counts against the run's
                if not problems:
                    return call.arguments
                content = INVALID_ANSWER_FEEDBACK.format(
                    violations="; ".join(f"{p['path']}: {p['message']}" for p in problems)
                )
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
        return MISSING

    def _model_call(
        self,
        definition: AgentDefinition,
        provider: Any,
        node_id: str,
        scope: Scope,
        number: int,
        messages: list[dict[str, Any]],
        tools: tuple[ToolSpec, ...],
        buffer: Buffer,
        past: NodeHistory,
        answer_schema: dict[str, Any] | bool | None = None,
    ) -> tuple[ModelReply, int]:
        recorded = past.model_calls.get(number) or CallHistory()
        if recorded.completed is not None:
            reply = ModelReply.from_json(
                recorded.completed.get("reply") or {}, recorded.completed.get("usage")
            )
            return reply, reply.usage.input_tokens + reply.usage.output_tokens
        self.check_wall_time()
        key = hash_value(
            {"run": self.run_id, "node": node_id, "scope": scope_json(scope), "model_call": number}
        )
        request = ModelRequest(
            model=definition.model,
            system=definition.prompt,
            messages=tuple(messages),
            tools=tools,
            options=dict(definition.options),
            cursor=number,
            idempotency_key=key,
            timeout=self.limits.model_timeout,
            llm=dict(definition.llm),
            max_response_tokens=definition.max_response_tokens,
            answer_schema=answer_schema,
        )
        if recorded.requested is None:
            fields: dict[str, Any] = {
                "model": definition.model,
                "call": number,
                "idempotency_key": key,
            }
            if definition.record_prompts:
                # The agent asked for it (the reference's `record_prompts`): what the model is
                # sent, verbatim, including whatever user data the messages carry. A body too
                # large for one event is left out, saying so, rather than failing the run.
                body = {
                    "system": request.system,
                    "messages": list(request.messages),
                    "tools": [spec.name for spec in tools],
                }
                size = len(compact_json(body).encode("utf-8"))
                if self.limits.max_event_bytes and size > self.limits.max_event_bytes // 2:
                    fields["request_body_omitted"] = (
                        f"{size} bytes, over half of GATEHOUSE_EVENT_MAX_BYTES"
                    )
                else:
                    fields["request_body"] = body
            buffer.append(("ModelCallRequested", event_payload(node_id, scope, **fields)))
        self.flush(buffer)
        try:
            reply = self._call_with_timeout(
                lambda: provider.complete(request),
                self.limits.model_timeout,
                f"agent node `{node_id}`: the model call took longer than "
                f"{self.limits.model_timeout:g} s (GATEHOUSE_MODEL_TIMEOUT)",
            )
        except ProviderError as error:
            raise StepFailed(f"agent node `{node_id}`: {error}") from error
        except StepFailed:
            raise
        except Exception as error:
            raise StepFailed(f"agent node `{node_id}`: {error_message(error)}") from error
        usage = {
            "input_tokens": reply.usage.input_tokens,
            "output_tokens": reply.usage.output_tokens,
        }
        buffer.append(
            (
                "ModelCallCompleted",
                event_payload(node_id, scope, call=number, reply=reply.as_json(), usage=usage),
            )
        )
        return reply, reply.usage.input_tokens + reply.usage.output_tokens


class _Budgets:
    """An agent's declared budgets (spec 04, *agent*), each raised by the latest
    ``BudgetRaised`` of its kind, and what the loop has used of them.

    Checked in the reference's order: steps and wall time before each model call, tokens and
    cost as soon as a call's usage is known. Cost is counted from the usage and the agent's
    ``pricing`` (dollars per million tokens); wall time in seconds."""

    def __init__(self, definition: AgentDefinition, past: NodeHistory, default_steps: int) -> None:
        declared = definition.budget
        raised = past.raised_limits
        self.steps = raised.get("steps", declared.get("max_steps", default_steps))
        self.tokens = raised.get("tokens", declared.get("max_tokens"))
        self.pricing = definition.pricing
        cost = declared.get("max_cost_usd")
        self.cost = raised.get("cost_usd", cost) if self.pricing is not None else None
        self.wall_time = raised.get("wall_time", declared.get("max_wall_time_seconds"))
        self.input_tokens = 0
        self.output_tokens = 0

    def before_call(self, step: int, elapsed: float | None) -> dict[str, Any] | None:
        """The crossing that parks the loop before model call ``step`` (``elapsed``: the
        node's seconds in `running`, or ``None`` when the call is already recorded)."""
        if self.steps is not None and step >= self.steps:
            return _crossing("steps", self.steps, step)
        if self.wall_time is not None and elapsed is not None and elapsed >= self.wall_time:
            return _crossing("wall_time", self.wall_time, round(elapsed, 3))
        return None

    def after_call(self, usage: Usage) -> dict[str, Any] | None:
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        tokens = self.input_tokens + self.output_tokens
        if self.tokens is not None and tokens > self.tokens:
            return _crossing("tokens", self.tokens, tokens)
        if self.cost is not None and self.pricing is not None:
            cost = cost_usd(self.pricing, self.input_tokens, self.output_tokens)
            if cost > self.cost:
                return _crossing("cost_usd", self.cost, round(cost, 9))
        return None


def _call_requested(
    node_id: str, scope: Scope, spec: ToolSpec, data: Any, key: str | None, number: int
) -> tuple[str, dict[str, Any]]:
    """The ``ToolCallRequested`` of a tool call, recorded before the call happens."""
    return (
        "ToolCallRequested",
        event_payload(
            node_id,
            scope,
            tool=spec.name,
            input=data,
            effect=spec.effect.value,
            idempotency_key=key,
            call=number,
        ),
    )


def cost_usd(pricing: dict[str, float], input_tokens: int, output_tokens: int) -> float:
    """What ``input_tokens`` and ``output_tokens`` cost at ``pricing`` (dollars per million
    tokens), as the reference's ``Pricing::cost_usd`` counts it."""
    return (
        input_tokens / 1_000_000 * pricing["input_per_mtok"]
        + output_tokens / 1_000_000 * pricing["output_per_mtok"]
    )


def _crossing(kind: str, limit: float, observed: float) -> dict[str, Any]:
    return {"budget": {"kind": kind, "limit": limit}, "observed": observed}


def _assistant_message(reply: ModelReply) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": reply.content,
        "tool_calls": reply.as_json()["tool_calls"],
    }


def _reply_value(content: str | None) -> Any:
    """An agent's output: its final reply parsed as JSON when it is JSON, else the text."""
    if content is None:
        return None
    try:
        return read_json(content)
    except JsonError:
        return content
