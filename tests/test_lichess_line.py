from __future__ import annotations

from datetime import UTC, datetime
from itertools import pairwise

from tests.conftest import INDEXINATOR
from tracker.core.records import GameRecord, Side
from tracker.importing import import_file
from tracker.report.lichess_line import lichess_line, monthly_last
from tracker.store import queries
from tracker.store.db import Store


def test_indexinator_blitz_rating_chain_holds_in_at_least_2880_of_2890_links(
    store: Store,
) -> None:
    import_file(INDEXINATOR, store=store)
    games = list(queries.player_games(store, "indexinator", "blitz"))
    assert len(games) == 2891
    mine = [g.side(g.color_of("indexinator")) for g in games]
    links = list(pairwise(mine))
    assert len(links) == 2890
    held = sum(1 for a, b in links if a.rating + a.rating_diff == b.rating)
    assert held >= 2880


def _g(gid: str, created: datetime, ended: datetime, rating: int, diff: int) -> GameRecord:
    return GameRecord(
        id=gid, source="api", created_at=created, last_move_at=ended, rated=True,
        perf="correspondence", result="1-0",
        white=Side("me", "me", None, rating, diff), black=Side("you", "you", None, 1500, -diff),
    )


def test_overlapping_game_uses_previous_post_game_rating_plus_diff() -> None:
    # B created Jan 20 ends Feb 2 (+10 from 1500); A created Jan 10 with rating 1500 ends
    # Mar 5 with +9 → 1519, not 1509 (spec LICHESS.md).
    jan10, jan20 = datetime(2024, 1, 10, tzinfo=UTC), datetime(2024, 1, 20, tzinfo=UTC)
    b = _g("BBBBBBBB", jan20, datetime(2024, 2, 2, tzinfo=UTC), 1500, 10)
    a = _g("AAAAAAAA", jan10, datetime(2024, 3, 5, tzinfo=UTC), 1500, 9)
    line = lichess_line([b, a], "me")
    assert [p.rating for p in line] == [1510, 1519]
    assert monthly_last(line) == {"2024-02": 1510, "2024-03": 1519}
