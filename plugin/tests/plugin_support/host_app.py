"""A host app as the plugin's `post_compile` sees it: the attributes of `rx.App` it reads and writes
(for plugin/tests/, which build a host app's backend without compiling one)."""

from __future__ import annotations

from typing import Any

from reflex.app import default_backend_exception_handler, default_frontend_exception_handler


class HostApp:
    """The attributes of `rx.App` that `post_compile` reads and writes."""

    def __init__(self) -> None:
        self.api_transformer: Any = None
        self.frontend_exception_handler: Any = default_frontend_exception_handler
        self.backend_exception_handler: Any = default_backend_exception_handler
        self.lifespan_tasks: list[Any] = []

    def register_lifespan_task(self, task: Any) -> Any:
        self.lifespan_tasks.append(task)
        return task
