"""Structured output: turn a model's text into a validated pydantic object, repairing common breakage.

Models wrap JSON in code fences, add prose around it, leave trailing commas, or stop mid-array when they hit
the token limit. `parse_structured` fixes those in order and validates; what still fails is reported with
the validation error, which the gateway sends back to the model once.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError, create_model, model_validator

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


class StructuredOutputError(ValueError):
    """The text could not be turned into the requested model, even after repair."""


def _extract_json_text(text: str) -> str:
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1)
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    return text[min(starts):].strip() if starts else text.strip()


def _scan(text: str) -> tuple[list[str], bool, int]:
    """Walk JSON text: the closers still open, whether it ends inside a string, and a cut offset (the end of
    the first complete top-level value, else the last element separator)."""
    stack: list[str] = []
    in_string = escaped = False
    cut = 0
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]":
            if stack:
                stack.pop()
            if not stack:
                return stack, False, index + 1
        elif char == "," and stack:
            cut = index
    return stack, in_string, cut


def _close_truncated(text: str) -> str:
    """Close strings, arrays and objects left open by a response cut off at the token limit."""
    stack, in_string, cut = _scan(text)
    if not stack and not in_string:
        return text[:cut] if cut else text
    body = (text[:cut] if cut else text).rstrip().rstrip(",")  # drop the unfinished last element
    closers, _, _ = _scan(body)
    return body + "".join(reversed(closers))


def repair_json(text: str) -> Any:
    """Parse JSON from model output, repairing fences, surrounding prose, trailing commas, truncation."""
    candidate = _extract_json_text(text)
    attempts = [candidate, _TRAILING_COMMA.sub(r"\1", candidate)]
    attempts.append(_TRAILING_COMMA.sub(r"\1", _close_truncated(attempts[-1])))
    last_error: json.JSONDecodeError | None = None
    for attempt in attempts:
        try:
            return json.loads(attempt)
        except json.JSONDecodeError as exc:
            last_error = exc
    raise StructuredOutputError(f"not valid JSON even after repair: {last_error}")


def parse_structured(text: str, model: type[T]) -> T:
    """The validated object, or StructuredOutputError saying why not (sent back to the model once)."""
    data = repair_json(text)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise StructuredOutputError(f"JSON does not match the schema: {exc}") from exc


def schema_instruction(model: type[BaseModel]) -> str:
    """The instruction appended for servers without a schema mode."""
    schema = json.dumps(model.model_json_schema(), separators=(",", ":"))
    return f"Answer with one JSON object only, no prose, matching this JSON schema: {schema}"


def list_answer(name: str, field: str, item: type, max_items: int | None = None) -> type[BaseModel]:
    """A model `{field: [item, ...]}` that also accepts the bare JSON array small models often answer with
    (tag lists, sub-queries, sentence numbers); `max_items` goes into the schema only, extras are kept."""
    def wrap(cls: type, data: Any) -> Any:
        return {field: data} if isinstance(data, list) else data

    extra = {"maxItems": max_items} if max_items else None
    return create_model(name, __validators__={"_bare_list": model_validator(mode="before")(wrap)},
                        **{field: (list[item], Field(default_factory=list, json_schema_extra=extra))})
