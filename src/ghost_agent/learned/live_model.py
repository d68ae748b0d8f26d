"""LiveModel: the hot-swappable model slot the PRM scorer and the router are built on.

Both hold at most one fitted model, report its id and where it came from, load it from the daemon's setting
(no path → no model; a missing or unusable file → a warning and no model, never a crash) and swap it while
requests are in flight. The model and its id are stored as one tuple, replaced in one assignment: a reader
that takes `self._live` once sees the old pair or the new one, never a mix (no lock on the hot path).

Log events, prefixed with the model's kind: `<kind>_loaded`, `<kind>_model_missing`, `<kind>_model_unusable`,
`<kind>_swapped`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Generic, Self, TypeVar

from ghost_agent.learned.bound_model import BoundModel
from ghost_agent.learned.linear import CheckpointError, LogisticModel

M = TypeVar("M", bound=LogisticModel)


class LiveModel(Generic[M]):
    """A slot for one fitted model (or none) that can be loaded from a path and hot-swapped.

    Subclasses declare `MODEL` (the BoundModel class `load` reads), `NO_MODEL` (what happens without a model,
    for the warnings) and `log`; they may override `_checked` to refuse more than unfitted models.
    """

    MODEL: ClassVar[type[BoundModel]]
    NO_MODEL: ClassVar[str]
    log: ClassVar[Any]

    def __init__(self, model: M | None = None, *, source: str | None = None) -> None:
        self.source = source  # where the model came from (a path, "trainer"), for logs and /health
        self.swaps = 0
        self._live: tuple[M, str] | None = None if model is None else (self._checked(model), model.model_id)

    @property
    def model(self) -> M | None:
        """The live model (None = no model)."""
        live = self._live
        return None if live is None else live[0]

    @property
    def has_model(self) -> bool:
        """True when a fitted model is loaded."""
        return self._live is not None

    @property
    def model_id(self) -> str | None:
        """The live model's content id, or None."""
        live = self._live
        return None if live is None else live[1]

    @classmethod
    def load(cls, path: Path, **kwargs: Any) -> Self:
        """An instance with the checkpoint at `path` loaded (CheckpointError if it cannot be used).

        `kwargs` go to the constructor (e.g. the router's band and mode).
        """
        model: Any = cls.MODEL.load(Path(path))  # an M: MODEL is the class this slot is declared for
        cls.log.info(
            f"{cls.MODEL.KIND}_loaded", path=str(path), model_id=model.model_id,
            trained_at=model.metadata.get("trained_at"),
        )
        return cls(model, source=str(path), **kwargs)

    @classmethod
    def from_setting(cls, path: str | Path | None, **kwargs: Any) -> Self:
        """The daemon's startup rule: no path → no model; missing or unusable file → warning, no model."""
        if not path:
            return cls(**kwargs)
        p = Path(path).expanduser()
        kind = cls.MODEL.KIND
        if not p.exists():
            cls.log.warning(f"{kind}_model_missing", path=str(p), action=cls.NO_MODEL)
            return cls(**kwargs)
        try:
            return cls.load(p, **kwargs)
        except CheckpointError as exc:
            cls.log.warning(f"{kind}_model_unusable", path=str(p), error=str(exc), action=cls.NO_MODEL)
            return cls(**kwargs)

    def set_model(self, model: M | None, *, source: str | None = None) -> None:
        """Hot-swap the live model (None → no model); the very next call uses it.

        Raises ValueError for a model `_checked` refuses (at least any unfitted one); the live model stays.
        """
        live = None if model is None else (self._checked(model), model.model_id)
        previous = self.model_id
        self._live = live  # the one assignment a concurrent reader can observe
        self.source = source
        self.swaps += 1
        self.log.info(f"{self.MODEL.KIND}_swapped", previous=previous, model_id=self.model_id, source=source)

    def _checked(self, model: M) -> M:
        """`model` if it may go live; ValueError otherwise."""
        if not model.is_fitted:
            raise ValueError("cannot swap in an unfitted model")
        return model


__all__ = ["LiveModel"]
