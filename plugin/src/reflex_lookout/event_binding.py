"""Whether an exception of a Reflex event is the client's doing: Reflex raised it binding the event
to its handler (an argument missing or unknown, a `setvar` of no such var), before any of the app's
code ran. A page from before a deploy sends such events, and so does any websocket client that makes
its own; they are neither errors nor work of the app (event_errors.py, event_tracing.py)."""

from __future__ import annotations

# Where Reflex 0.10 binds an event to its handler (reflex_base's `process_event` calls the handler with
# the payload's arguments; `setvar` looks up the var's setter): an exception raised in these frames
# themselves means the handler never ran.
BINDING_FRAMES = (("/reflex_base/event/processor/base_state_processor.py", "process_event"),
                  ("/reflex/state.py", "setvar"))


def client_fault(exception: BaseException | None) -> bool:
    """Whether Reflex raised `exception` binding the client's event to its handler: a TypeError or
    AttributeError whose innermost frame is one of BINDING_FRAMES (a handler that raises one itself
    has its own frame innermost)."""
    if not isinstance(exception, (TypeError, AttributeError)) or exception.__traceback__ is None:
        return False
    innermost = exception.__traceback__
    while innermost.tb_next is not None:
        innermost = innermost.tb_next
    code = innermost.tb_frame.f_code
    return any(code.co_name == name and code.co_filename.replace("\\", "/").endswith(path) for path, name in BINDING_FRAMES)
