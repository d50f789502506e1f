"""Agent Zero's `helpers.runtime`: a notebook is never the development container, so development
functions run in this process."""
from __future__ import annotations

import inspect
import sys
from typing import Any, Callable


def is_development() -> bool:
    return False


def is_dockerized() -> bool:
    return False


def get_arg(name: str) -> Any:
    return None


def get_platform() -> str:
    return sys.platform


async def call_development_function(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    result = func(*args, **kwargs)
    return await result if inspect.isawaitable(result) else result


def call_development_function_sync(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return func(*args, **kwargs)
