"""A club made for the tests: players whose blitz games are generated deterministically, most
of them with a FIDE profile whose standard list the server makes from a known line
``FIDE = a + b × Lichess + noise`` (seeded), served by the local Lichess
(:class:`tests.lichess_server.LichessServer`).

Each player plays ``games_per_month`` rated blitz games a month against opponents outside the
club, from ``months[0]`` to ``months[-1]``; their Lichess rating wanders from a base spread over
``ratings`` (the post-game rating is ``rating + ratingDiff``, as Lichess writes it). A linked
player's FIDE standard list has one entry per month: ``round(a + b × L + e)``, where ``L`` is
the player's Lichess rating after their last game of that month and ``e`` is drawn from a
normal law of standard deviation ``noise`` (seeded). So a fit on the club recovers ``a`` and
``b`` within the noise.

>>> roster = make_roster(12, linked=10)   # doctest: +SKIP
>>> serve_roster(server, roster)          # doctest: +SKIP
>>> roster.csv()                          # username,fide_id lines for tracker group add --from
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

#: FIDE ids of the roster start here (none of them real).
FIRST_FIDE_ID = 90_000_001


@dataclass
class RosterPlayer:
    """One club member as the server knows them: username, FIDE id (``None``: no FIDE
    profile), the games (NDJSON objects, newest last), the Lichess blitz rating after the last
    game of each month, and the FIDE standard list by month."""

    username: str
    fide_id: int | None
    games: list[dict[str, Any]] = field(default_factory=list)
    monthly: dict[str, int] = field(default_factory=dict)
    fide_list: dict[str, int] = field(default_factory=dict)


@dataclass
class Roster:
    """The club: its players and the line their FIDE ratings were made from."""

    players: list[RosterPlayer]
    a: float
    b: float
    noise: float
    perf: str = "blitz"

    def csv(self, *, malformed: int | None = None) -> str:
        """A roster CSV (header ``username,fide_id``, one row per player); the row of player
        number ``malformed`` (from 0), when given, has a username no Lichess account can
        have."""
        lines = ["username,fide_id"]
        for i, p in enumerate(self.players):
            name = f"{p.username}!" if i == malformed else p.username
            lines.append(f"{name},{p.fide_id or ''}")
        return "\n".join(lines) + "\n"

    @property
    def games(self) -> int:
        return sum(len(p.games) for p in self.players)

    def linked(self) -> list[RosterPlayer]:
        return [p for p in self.players if p.fide_id is not None]


def _month_start_ms(month: str) -> int:
    y, m = int(month[:4]), int(month[5:])
    return int(datetime(y, m, 1, tzinfo=UTC).timestamp() * 1000)


def month_range(first: str, last: str) -> list[str]:
    """Every month ``"YYYY-MM"`` from ``first`` to ``last``."""
    y, m = int(first[:4]), int(first[5:])
    out = []
    while f"{y:04d}-{m:02d}" <= last:
        out.append(f"{y:04d}-{m:02d}")
        y, m = y + m // 12, m % 12 + 1
    return out


def make_roster(n: int = 12, *, linked: int = 10, a: float = 300.0, b: float = 0.75,
                noise: float = 15.0, months: Sequence[str] | None = None,
                games_per_month: int = 8, ratings: tuple[int, int] = (1300, 2300),
                seed: int = 22, prefix: str = "member") -> Roster:
    """``n`` players (``prefix01`` …), the first ``linked`` with a FIDE profile; see the
    module docstring. Deterministic for a given set of arguments."""
    rng = random.Random(seed)
    months = list(months or month_range("2024-03", "2025-02"))
    lo, hi = ratings
    bases = [lo + (hi - lo) * i // max(n - 1, 1) for i in range(n)]
    rng.shuffle(bases)
    players = []
    for i in range(n):
        name = f"{prefix}{i + 1:02d}"
        p = RosterPlayer(name, FIRST_FIDE_ID + i if i < linked else None)
        rating = bases[i]
        k = 0
        for month in months:
            start = _month_start_ms(month)
            for g in range(games_per_month):
                diff = rng.randint(-9, 10)
                opp = rating + rng.randint(-150, 150)
                created = start + (g + 1) * 3 * 86_400_000 + rng.randint(0, 3_600_000)
                white = (k % 2) == 0
                me = {"user": {"name": name, "id": name}, "rating": rating, "ratingDiff": diff}
                rival = f"opp{rng.randint(1, 400)}"
                them = {"user": {"name": rival, "id": rival}, "rating": opp,
                        "ratingDiff": -diff}
                won = diff > 0
                p.games.append({
                    "id": f"{prefix[:1]}{i + 1:02d}{k:05d}"[:8].ljust(8, "0"),
                    "rated": True, "variant": "standard", "speed": "blitz", "perf": "blitz",
                    "createdAt": created, "lastMoveAt": created + 400_000,
                    "status": "resign" if diff else "draw", "source": "pool",
                    "players": {"white": me, "black": them} if white else
                    {"white": them, "black": me},
                    **({"winner": ("white" if white == won else "black")} if diff else {}),
                    "moves": "e4 e5 Nf3 Nc6", "clock": {"initial": 180, "increment": 2,
                                                        "totalTime": 260},
                })
                rating += diff
                k += 1
            p.monthly[month] = rating
            if p.fide_id is not None:
                p.fide_list[month] = round(a + b * rating + rng.gauss(0.0, noise))
        players.append(p)
    return Roster(players, a, b, noise)


def fide_answers(p: RosterPlayer) -> tuple[dict[str, Any], dict[str, Any]]:
    """The two Lichess FIDE answers of a roster player: the profile and the lists (entries
    ``YYYYMMRRRR``, oldest first, as Lichess serves them)."""
    assert p.fide_id is not None
    last = p.fide_list[max(p.fide_list)]
    profile = {"id": p.fide_id, "name": f"Member, {p.username.title()}", "federation": "ENG",
               "year": 2000, "standard": last}
    lists = {"standard": [int(m[:4] + m[5:]) * 10_000 + r for m, r in
                          sorted(p.fide_list.items())]}
    return profile, lists


def serve_roster(server: Any, roster: Roster, *, only: Sequence[str] | None = None) -> None:
    """Give ``server`` (a :class:`tests.lichess_server.LichessServer`) the roster's accounts,
    games and FIDE profiles (``only``: these usernames' games)."""
    for p in roster.players:
        if only is not None and p.username not in only:
            continue
        server.add_user(p.username, [json.loads(json.dumps(g)) for g in p.games])
        if p.fide_id is not None:
            server.add_fide_player(p.fide_id, *fide_answers(p))
