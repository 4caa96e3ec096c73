"""The competition hold-out protocol: score M1, M3 and Tourism as those competitions did.

Each series is fitted on its published training part and forecast once over the published horizon
``h``; the competition panels right-align every series so that the published test parts occupy the last
``h`` columns (:mod:`tycheon.data.competitions`). The protocol is therefore one origin at column
``T - h``, with no embargo, refitting nothing: a rolling origin with ``n_origins = 1`` and
``stride = horizon``, which is how the engine runs it. Scores with the competitions' own metrics come
from :mod:`tycheon.analysis.competition`.

>>> CompetitionHoldout(horizon=18).describe()["kind"]
'competition'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from tycheon._typing import ProtocolMode
from tycheon.backtest.protocol import ProtocolError, RollingOrigin
from tycheon.data.panel import Panel

__all__ = ["CompetitionHoldout"]


@dataclass(frozen=True, kw_only=True)
class CompetitionHoldout(RollingOrigin):
    """One origin at the published hold-out: fit on the training part, forecast the published horizon.

    Parameters
    ----------
    horizon : int
        The competition's published forecast horizon (the length of each series' test part), >= 1.

    Use :meth:`from_panel` to read the horizon from a competition panel's ``horizon`` attribute.
    """

    horizon: int
    stride: int = field(init=False)
    n_origins: int | None = field(default=1, init=False)
    first_origin: None = field(default=None, init=False)
    embargo: int = field(default=0, init=False)
    mode: ProtocolMode = field(default="benchmark", init=False)

    kind: ClassVar[str] = "competition"

    def __post_init__(self) -> None:
        object.__setattr__(self, "stride", self.horizon)
        super().__post_init__()

    @classmethod
    def from_panel(cls, panel: Panel) -> CompetitionHoldout:
        """The hold-out of a competition panel: its one published horizon (attribute ``horizon``).

        Raises
        ------
        ProtocolError
            The panel has no ``horizon`` attribute or more than one published horizon.
        """
        if "horizon" not in panel.attributes.columns:
            raise ProtocolError(
                f"{panel.name}: the competition protocol needs the published horizon as "
                "attribute 'horizon'; competition panels carry it"
            )
        horizons = sorted({int(h) for h in panel.attributes["horizon"]})
        if len(horizons) != 1:
            raise ProtocolError(f"{panel.name}: the competition protocol needs one published horizon, got {horizons}")
        return cls(horizon=horizons[0])
