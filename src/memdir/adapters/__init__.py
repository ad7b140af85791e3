"""The frameworks' own memory interfaces over a `Memdir`, one module per framework, each an optional extra.

    from memdir.adapters.langgraph import MemdirStore      # memdir[langgraph]: LangGraph's BaseStore
    from memdir.adapters.deepagents import MemdirBackend   # memdir[deepagents]: Deep Agents' BackendProtocol
    from memdir.adapters.adk import MemdirMemoryService    # memdir[adk]: Google ADK's BaseMemoryService
    from memdir.adapters.pydantic_ai import MemdirMemoryStore  # memdir[pydantic-ai]: the harness's MemoryStore
    from memdir.adapters.openai_agents import MemdirSession  # memdir[openai-agents]: the Agents SDK's Session

Each module imports its framework at the top, so import it only where the extra
is installed; this package itself imports nothing. Every adapter calls the
public `Memdir` API only, so limits, scopes, the secret guard and the journal
(history and undo) hold inside the framework's own memory calls.
"""
