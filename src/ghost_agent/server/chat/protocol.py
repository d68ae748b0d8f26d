"""Pydantic models of the OpenAI chat-completions wire format (requests validated, responses documented).

Requests accept unknown fields (`extra="allow"`): backend-specific parameters (llama.cpp's `top_k`,
vLLM's `guided_json`, ...) pass through to the upstream untouched.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from ghost_agent.jsonsafe import find_problem
from ghost_agent.server.protocol_common import JsonInt, OpenModel, PositiveInt, integral

Role = Literal["system", "developer", "user", "assistant", "tool", "function"]


class TextPart(OpenModel):
    type: Literal["text"]
    text: str


class ImageUrl(OpenModel):
    url: str
    detail: str | None = None


class ImagePart(OpenModel):
    type: Literal["image_url"]
    image_url: ImageUrl


class InputAudio(OpenModel):
    data: str
    format: str


class AudioPart(OpenModel):
    type: Literal["input_audio"]
    input_audio: InputAudio


class FileRef(OpenModel):
    file_data: str | None = None
    file_id: str | None = None
    filename: str | None = None


class FilePart(OpenModel):
    type: Literal["file"]
    file: FileRef


# Non-text parts reach a backend that may read them, or are refused with a 400 by one that cannot
# (llm/content_parts.py); an unknown `type` is a 400 here.
ContentPart = Annotated[TextPart | ImagePart | AudioPart | FilePart, Field(discriminator="type")]


class FunctionCall(OpenModel):
    name: str
    arguments: str


class ToolCall(OpenModel):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class ChatMessage(OpenModel):
    """One message of the conversation."""

    role: Role
    content: str | list[ContentPart] | None = None
    name: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None


class FunctionDef(OpenModel):
    name: str = Field(min_length=1, max_length=64)
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class Tool(OpenModel):
    """A tool the client offers the model; its calls come back to the client unchanged."""

    type: Literal["function"]
    function: FunctionDef


class StreamOptions(OpenModel):
    include_usage: bool | None = None


class ChatCompletionRequest(OpenModel):
    """`POST /v1/chat/completions` body."""

    messages: list[ChatMessage] = Field(min_length=1)
    model: str | None = Field(
        default=None,
        description="Passed to the backend unless the daemon names the model itself (--model, --served-model-name); "
        "the reply's `model` follows the rule in docs/openai-api.md (Model names).",
    )
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    n: Annotated[int, Field(ge=1, le=16), BeforeValidator(integral)] | None = None
    max_tokens: PositiveInt | None = None
    max_completion_tokens: PositiveInt | None = None
    stop: str | list[str] | None = None
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    seed: JsonInt | None = None
    tools: list[Tool] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    response_format: dict[str, Any] | None = None
    user: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _writable(cls, data: Any) -> Any:
        """Refuse what Python's parser accepts but is not sendable JSON (lone surrogates, NaN, nesting past
        `jsonsafe.MAX_DEPTH`) anywhere in the body, unknown pass-through fields included."""
        problem = find_problem(data, big_ints=True)
        if problem is not None:
            raise PydanticCustomError(
                "unwritable_json", "{problem}", {"problem": problem.message, "param": problem.path or None}
            )
        return data


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class AssistantMessage(OpenModel):
    role: Literal["assistant"]
    content: str | None = None
    tool_calls: list[ToolCall] | None = None


class Choice(OpenModel):
    index: int
    message: AssistantMessage
    finish_reason: str | None = None


class ChatCompletion(OpenModel):
    """A non-streaming reply (`object: chat.completion`)."""

    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    choices: list[Choice]
    usage: Usage | None = None


class ChunkChoice(OpenModel):
    index: int
    delta: dict[str, Any]
    finish_reason: str | None = None


class ChatCompletionChunk(OpenModel):
    """One server-sent event of a streaming reply (`object: chat.completion.chunk`)."""

    id: str
    object: Literal["chat.completion.chunk"]
    created: int
    model: str
    choices: list[ChunkChoice]
    usage: Usage | None = None


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str


class ModelList(BaseModel):
    """`GET /v1/models`."""

    object: Literal["list"] = "list"
    data: list[ModelCard]


class ErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None = None
    code: str | None = None


class ErrorResponse(BaseModel):
    """Every error the daemon returns."""

    error: ErrorDetail


class BackendStatus(BaseModel):
    kind: str
    reachable: bool
    model_loaded: bool
    detail: str = ""


class LearnedModelStatus(BaseModel):
    """A learned model the daemon uses (PRM, router): loaded or neutral, which checkpoint, which weights."""

    loaded: bool
    model_id: str | None = None
    source: str | None = None


HealthStatus = Literal["ok", "degraded", "starting"]


class Health(BaseModel):
    """`GET /health`, open to anyone: only what a load balancer needs. The detail is `GET /v1/ghost/health`."""

    status: HealthStatus = Field(
        description="`starting` while the model loads; `degraded` when a part named in `degraded` is not working "
        "as it should (the daemon still answers); else `ok`."
    )
    version: str
    degraded: list[Literal["backend", "sandbox"]] = Field(
        default_factory=list,
        description="The degraded parts, by name only (details behind auth at /v1/ghost/health): `backend` "
        "(upstream unreachable, model failed to load), `sandbox` (code tools refused, or code runs unisolated).",
    )


class HealthDetail(Health):
    """`GET /v1/ghost/health` (same bearer auth as every /v1 path): the backend (URL credentials redacted), the
    served model, the learned models and the sandbox (backend, isolation, probes, host paths, warnings)."""

    backend: BackendStatus
    model: str
    uptime_s: float
    learned: dict[str, LearnedModelStatus] = Field(default_factory=dict)
    sandbox: dict[str, Any] = Field(
        default_factory=dict,
        description="The sandbox for model-written code: backend, what it isolates, probe results, `warnings` "
        "and `code_tools` (`enabled` | `disabled`). `status`: `probing` right after startup, `ready`, or "
        "`refused` (no isolating sandbox and unisolated code not opted into; `error` and `fix` say why and how) "
        "/ `unavailable` (nothing can run code).",
    )
    extra: dict[str, Any] = Field(default_factory=dict)
