"""OpenAI Agents SDK: a `Session` whose conversation is captured into memdir's session records at the end.

    import memdir
    from agents import Agent, Runner, SQLiteSession
    from memdir.adapters.openai_agents import MemdirSession

    async with MemdirSession(memdir.open("memory"), "chat-42") as session:   # captured when the block ends
        await Runner.run(agent, "I like short answers.", session=session)

`MemdirSession` is the SDK's `agents.memory.Session` protocol: the items of
the conversation live in the session store it is given (`items=`, by
default the SDK's own `SQLiteSession` in memory; pass
`SQLiteSession(session_id, "conversations.db")` to keep them across
processes), and when the conversation ends (`async with` closes, or
`await session.capture()`, or `clear_session()` before it clears) memdir's
capture turns them into the session's record, `sessions/<stamp>-<id>.md`:
what was asked and done, corrections and preferences, decisions, what broke
and what is open, with credentials and relative dates replaced. Capturing the
same session again replaces its record, so a conversation that goes on is one
record. The agent reaches memdir's memory itself through MCP
(`agents.mcp.MCPServerStdio` on `memdir serve`): see docs/frameworks/openai-agents.md.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from agents import SQLiteSession
from agents.memory import Session

from ..core.memdir import Memdir
from ..remember.capture import Captured, capture

if TYPE_CHECKING:
    from agents.items import TResponseInputItem
    from agents.memory.session_settings import SessionSettings

__all__ = ["MemdirSession"]


class MemdirSession:
    """The SDK's `Session` protocol over another session store, captured into memdir when the conversation ends."""

    def __init__(self, md: Memdir, session_id: str, *, items: Session | None = None) -> None:
        self.md = md
        self.session_id = session_id
        self.items: Session = items if items is not None else SQLiteSession(session_id)
        self.session_settings: SessionSettings | None = self.items.session_settings
        self.captured: Captured | None = None  # what the last capture did

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        return await self.items.get_items(limit)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        await self.items.add_items(items)

    async def pop_item(self) -> TResponseInputItem | None:
        return await self.items.pop_item()

    async def clear_session(self) -> None:
        """Capture the conversation, then clear it: the record stays in memdir."""
        await self.capture()
        await self.items.clear_session()

    async def capture(self) -> Captured | None:
        """Write (or replace) this session's record from its items; None when it has none yet."""
        items: list[Any] = [dict(item) if isinstance(item, dict) else item for item in await self.items.get_items()]
        if not items:
            return None
        self.captured = await asyncio.to_thread(capture, self.md, self.session_id, items, event="openai-agents")
        return self.captured

    async def __aenter__(self) -> MemdirSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.capture()
