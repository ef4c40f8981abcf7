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
from editor.engine.ports import (
    CallClaim,
    CallCommitments,
    ModelReply,
    ModelRequest,
    ToolContext,
    ToolEffect,
    ToolSpec,
)
from editor.engine.schemas import first_violation
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

__all__ = ["CallSteps"]


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
        self.check_schema(
            node.output_schema, output, f"tool node `{node.id}`: its output", "output_schema"
        )
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
            buffer.append(
                (
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
            )
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
        buffer.append(
            (
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
        )
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
        output = self._agent_loop(node.id, node.agent_hash, value, scope, buffer, past)
        schema = node.output_schema
        if schema is None:  # the agent's own declared shape, when the node declares none
            definition = self.installation.agents.get(node.agent_hash)
            schema = definition.output_schema if definition is not None else None
        self.check_schema(schema, output, f"agent node `{node.id}`: its output", "output_schema")
        return output

    def _agent_loop(
        self,
        node_id: str,
        agent_hash: str,
        value: Any,
        scope: Scope,
        buffer: Buffer,
        past: NodeHistory,
    ) -> Any:
        definition = self.installation.agents.get(agent_hash)
        assert definition is not None  # resolve_names checked it
        provider = self.installation.providers.provider_for(definition.model)
        assert provider is not None
        tools = tuple(self.installation.tools.get(name) for name in definition.tools)
        # A tool switched off on this installation is not offered to the model at all.
        offered = {spec.name: spec for spec in tools if spec is not None and spec.enabled}
        # Without a `max_steps` of its own an agent gets the installation's (a runaway model
        # that keeps asking for tools parks the run instead of holding a worker).
        declared_steps = definition.budget.get("max_steps", self.limits.agent_max_steps)
        max_steps = past.raised_limits.get("steps", declared_steps)
        max_tokens = past.raised_limits.get("tokens", definition.budget.get("max_tokens"))
        messages: list[dict[str, Any]] = [{"role": "user", "content": compact_json(value)}]
        tokens = 0
        tool_number = 0
        step = 0
        while True:
            if max_steps is not None and step >= max_steps:
                raise Parked(
                    [
                        (
                            "BudgetExceeded",
                            event_payload(
                                node_id,
                                scope,
                                budget={"kind": "steps", "limit": max_steps},
                                observed=step,
                            ),
                        )
                    ]
                )
            reply, usage_tokens = self._model_call(
                definition,
                provider,
                node_id,
                scope,
                step,
                messages,
                tuple(offered.values()),
                buffer,
                past,
            )
            step += 1
            tokens += usage_tokens
            # Checked as soon as the usage is known: no tool call runs past a crossed budget.
            if max_tokens is not None and tokens > max_tokens:
                raise Parked(
                    [
                        (
                            "BudgetExceeded",
                            event_payload(
                                node_id,
                                scope,
                                budget={"kind": "tokens", "limit": max_tokens},
                                observed=tokens,
                            ),
                        )
                    ]
                )
            if reply.tool_calls:
                messages.append(
                    {
                        "role": "assistant",
                        "content": reply.content,
                        "tool_calls": reply.as_json()["tool_calls"],
                    }
                )
                for call in reply.tool_calls:
                    spec = offered.get(call.name)
                    if spec is None:
                        raise StepFailed(
                            f"agent node `{node_id}`: the model asked for the tool `{call.name}`, "
                            f"which its agent does not list"
                        )
                    result = self._tool_call(
                        spec,
                        node_id,
                        call.arguments,
                        scope,
                        tool_number,
                        buffer,
                        past,
                        f"agent node `{node_id}`: the tool `{call.name}` failed",
                    )
                    tool_number += 1
                    messages.append(
                        {"role": "tool", "tool_call_id": call.id, "content": compact_json(result)}
                    )
            if not reply.tool_calls:
                return _reply_value(reply.content)

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
        if recorded.requested is None:
            buffer.append(
                (
                    "ModelCallRequested",
                    event_payload(
                        node_id, scope, model=definition.model, call=number, idempotency_key=key
                    ),
                )
            )
        self.flush(buffer)
        request = ModelRequest(
            model=definition.model,
            system=definition.prompt,
            messages=tuple(messages),
            tools=tools,
            options=dict(definition.options),
            cursor=number,
            idempotency_key=key,
            timeout=self.limits.model_timeout,
        )
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


def _reply_value(content: str | None) -> Any:
    """An agent's output: its final reply parsed as JSON when it is JSON, else the text."""
    if content is None:
        return None
    try:
        return read_json(content)
    except JsonError:
        return content
