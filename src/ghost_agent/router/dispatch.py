"""The router's runtime face: a deterministic `dispatch(request) → RouterDecision` (DESIGN §4 step 3).

`fast` = one upstream call; `agent` = the tool loop. The rule, in order:

1. mode `always-agent` / `always-fast` → that route, reason `forced` (with a model loaded, `p` is still
   computed and reported: a forced router runs the learned one in shadow, so its calls can be evaluated
   against outcomes before anyone trusts it);
2. no request text (empty or whitespace) → `agent`, `empty_request`: the router sees only the last user
   message, so with none it has no evidence, and "unsure → agent" is the fail-safe; such turns are usually
   continuations (a tool result, "go on") of something already in progress;
3. no model → the untrained prior (`router/prior.py`): conversation and facts → `fast`, `prior_fast`;
   computation, code, files, run/test/check → `agent`, `prior_agent`; neither → `agent`, `prior_uncertain`.
   `p` is None: the prior is a rule table, not a probability;
4. `p` inside `[0.5 − band, 0.5 + band]` → `agent`, `uncertain`;
5. `p < 0.5 − band` → `fast`, `confident_fast`; `p > 0.5 + band` → `agent`, `confident_agent`;
6. any exception while reading the request or predicting → `agent`, `error` (logged, never raised).

Why the asymmetry: a wrong `agent` costs latency, a wrong `fast` costs a wrong answer. Dispatch is pure and
cheap (cached regex features + a pure-Python dot product, or the cached prior; no numpy, no I/O); it does not
log decisions — the agent turn records `RouterDecision.to_dict()` in the trajectory and its own log event,
including `confidence`, the model's probability of the route it took (None when no model decided).

Hot swap: `set_model` replaces one reference (model and its id together); `dispatch` reads it once, so a
concurrent swap gives each call the old model or the new one, never a mix.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ghost_agent.learned.linear import LogisticModel
from ghost_agent.learned.live_model import LiveModel
from ghost_agent.llm.wire import last_user_text
from ghost_agent.logging import get_logger
from ghost_agent.router.features import router_features
from ghost_agent.router.model import RouterModel, is_router_model
from ghost_agent.router.prior import REASON_PRIOR_AGENT, REASON_PRIOR_FAST, REASON_PRIOR_UNCERTAIN, prior_verdict
from ghost_agent.trajectories.record import Trajectory

Route = Literal["fast", "agent"]
FAST: Route = "fast"
AGENT: Route = "agent"

MODES = ("auto", "always-agent", "always-fast")
DEFAULT_BAND = 0.15

REASON_FORCED = "forced"
REASON_EMPTY = "empty_request"
REASON_UNCERTAIN = "uncertain"
REASON_FAST = "confident_fast"
REASON_AGENT = "confident_agent"
REASON_ERROR = "error"


@dataclass(frozen=True)
class RouterRequest:
    """What the router sees of a request: the last user message's text and the conversation length.

    Built the same way at dispatch (`from_body`) and at training time (`from_trajectory`), so the model is
    trained on exactly the inputs it will be asked about.
    """

    text: str
    n_messages: int = 1

    @classmethod
    def from_body(cls, body: Any) -> RouterRequest:
        """From an OpenAI chat body. Raises ValueError when the body or its `messages` has the wrong shape."""
        if not isinstance(body, Mapping):
            raise ValueError(f"request body is {type(body).__name__}, not an object")
        messages = body.get("messages")
        if not isinstance(messages, list):
            raise ValueError(f"request messages is {type(messages).__name__}, not a list")
        return cls(text=last_user_text(body if isinstance(body, dict) else dict(body)), n_messages=len(messages))

    @classmethod
    def from_trajectory(cls, traj: Trajectory) -> RouterRequest:
        """From a recorded turn: its `user_request` and the message count the recorder kept in `extra`."""
        extra = traj.extra if isinstance(traj.extra, dict) else {}
        count = extra.get("messages", 1)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            count = 1  # a damaged record: fall back to the single-message default, as dispatch would
        return cls(text=traj.user_request if isinstance(traj.user_request, str) else "", n_messages=count)

    @property
    def is_empty(self) -> bool:
        """True when there is no text to judge (empty or whitespace only)."""
        return not self.text or self.text.isspace()

    def features(self) -> tuple[float, ...]:
        """`ROUTER_FEATURE_NAMES` for this request (the row the model is trained on and asked about)."""
        return router_features(self.text, self.n_messages)


@dataclass(frozen=True)
class RouterDecision:
    """The route taken, the model's P(needs the agent) when computed, why, and which model decided."""

    route: Route
    p: float | None
    reason: str
    model_id: str | None

    @property
    def confidence(self) -> float | None:
        """The model's probability of the route it took: `p` for `agent`, `1 − p` for `fast`.

        None when no model made this decision: no `p` (the prior, an empty request, an error) or a forced
        route (its `p` is the shadow model's opinion, not the reason the route was taken). Inside the
        uncertainty band the fail-safe `agent` can have a confidence below 0.5. Training scales router samples
        by it (`training.confidence_multiplier`, seed 004 Phase 2a).
        """
        if self.p is None or self.reason == REASON_FORCED:
            return None
        return self.p if self.route == AGENT else 1.0 - self.p

    def to_dict(self) -> dict[str, Any]:
        """The dict recorded as `trajectory.router`: `{decision, p, reason, model, confidence}`.

        `confidence` was added later (seed 004 Phase 2a); readers treat a record without it as one without a
        confidence (`training.router_confidence`).
        """
        return {
            "decision": self.route, "p": self.p, "reason": self.reason, "model": self.model_id,
            "confidence": self.confidence,
        }


def as_request(value: Any) -> RouterRequest:
    """A RouterRequest from a RouterRequest, an OpenAI chat body, or a bare text (ValueError otherwise)."""
    if isinstance(value, RouterRequest):
        return value
    if isinstance(value, str):
        return RouterRequest(value)
    return RouterRequest.from_body(value)


class Router(LiveModel[LogisticModel]):
    """Decides fast path vs full agent per request; fail-safe to `agent` (see the module docstring).

    Loading, `from_setting`, `set_model` and the model/has_model/model_id/source/swaps attributes come from
    `LiveModel` (events `router_loaded`, `router_model_missing`, `router_model_unusable`, `router_swapped`);
    any fitted core model with the router's kind and layout is accepted, others raise ValueError.
    """

    MODEL = RouterModel
    NO_MODEL = "requests are routed by the untrained prior (conversation and facts fast, the rest to the agent)"
    log = get_logger("router")

    def __init__(
        self, model: LogisticModel | None = None, *, band: float = DEFAULT_BAND, mode: str = "auto",
        source: str | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown router mode {mode!r}; valid modes are {', '.join(MODES)}")
        if not isinstance(band, (int, float)) or not math.isfinite(band) or not 0.0 <= band <= 0.5:
            raise ValueError(f"router band must be a number in [0, 0.5], got {band!r}")
        self.band = float(band)
        self.mode = mode
        super().__init__(model, source=source)

    def _checked(self, model: LogisticModel) -> LogisticModel:
        if not is_router_model(model):
            raise ValueError(
                f"not a fitted router model (kind {getattr(model, 'kind', None)!r}, "
                f"fitted={getattr(model, 'is_fitted', False)})"
            )
        return model

    def dispatch(self, request: Any) -> RouterDecision:
        """The route for a RouterRequest, an OpenAI chat body or a text. Deterministic; never raises."""
        live = self._live  # read once: a concurrent set_model cannot change it under us
        model_id = None if live is None else live[1]
        mode = self.mode
        if mode != "auto":
            route: Route = FAST if mode == "always-fast" else AGENT
            return RouterDecision(route, self._shadow_p(live, request), REASON_FORCED, model_id)
        try:
            req = as_request(request)
            if req.is_empty:
                return RouterDecision(AGENT, None, REASON_EMPTY, model_id)
            if live is None:
                verdict = prior_verdict(req.text)
                return RouterDecision(verdict.route, None, verdict.reason, None)
            p = _predict(live[0], req)
        except Exception as exc:
            self.log.warning("router_dispatch_error", error=repr(exc), model_id=model_id)
            return RouterDecision(AGENT, None, REASON_ERROR, model_id)
        if p < 0.5 - self.band:
            return RouterDecision(FAST, p, REASON_FAST, model_id)
        if p > 0.5 + self.band:
            return RouterDecision(AGENT, p, REASON_AGENT, model_id)
        return RouterDecision(AGENT, p, REASON_UNCERTAIN, model_id)

    @staticmethod
    def _shadow_p(live: tuple[LogisticModel, str] | None, request: Any) -> float | None:
        """The model's p for a forced decision (None without a model, text or on any error)."""
        if live is None:
            return None
        try:
            req = as_request(request)
            return None if req.is_empty else _predict(live[0], req)
        except Exception:  # shadow information only: the forced route stands regardless
            return None


def _predict(model: LogisticModel, req: RouterRequest) -> float:
    p = model.predict_one(router_features(req.text, req.n_messages))
    if not 0.0 <= p <= 1.0:  # also catches NaN: the core never returns one, but a wrong p must not route
        raise ValueError(f"model returned p={p!r}")
    return p


__all__ = [
    "AGENT",
    "DEFAULT_BAND",
    "FAST",
    "MODES",
    "REASON_AGENT",
    "REASON_EMPTY",
    "REASON_ERROR",
    "REASON_FAST",
    "REASON_FORCED",
    "REASON_PRIOR_AGENT",
    "REASON_PRIOR_FAST",
    "REASON_PRIOR_UNCERTAIN",
    "REASON_UNCERTAIN",
    "Route",
    "Router",
    "RouterDecision",
    "RouterRequest",
    "as_request",
]
