"""Argument parsing for subcommands: argparse that raises `UsageError`, the leading options of an ask
line (the message stays raw text), and the opt-in `{name}` interpolation."""
from __future__ import annotations

import argparse
import re
import shlex
import typing
from typing import Any

from IPython.core.error import UsageError

_FIELD = re.compile(r"\{([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\}")
_WORD = re.compile(r"\s*(\S+)")
_VALUED = {"-f", "--format", "--model", "--profile", "-o", "--output"}


class Parser(argparse.ArgumentParser):
    """argparse whose errors are one-line UsageErrors instead of exits."""

    def error(self, message: str) -> typing.NoReturn:
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")

    def exit(self, status: int = 0, message: str | None = None) -> typing.NoReturn:
        raise UsageError(message or f"{self.prog}: bad arguments")


def ask_parser(prog: str) -> Parser:
    from a0nb.notebook.magic_config import FORMATS
    p = Parser(prog=prog, add_help=False)
    p.add_argument("-f", "--format", choices=FORMATS)
    p.add_argument("--model")
    p.add_argument("--profile")
    p.add_argument("--no-history", action="store_true")
    p.add_argument("-o", "--output", metavar="NAME")
    p.add_argument("-i", "--interpolate", action="store_true")
    return p


def split_options(text: str) -> tuple[list[str], str]:
    """Leading `-x` words of a line (and their values); the rest stays raw text (quotes, braces)."""
    tokens: list[str] = []
    pos = 0
    while (m := _WORD.match(text, pos)) and m.group(1).startswith("-") and m.group(1) != "-":
        pos = m.end()
        if m.group(1) == "--":
            break
        tokens.append(m.group(1))
        if m.group(1) in _VALUED and (v := _WORD.match(text, pos)):
            tokens.append(v.group(1))
            pos = v.end()
    return tokens, text[pos:].strip()


def split_words(prog: str, text: str) -> list[str]:
    """Shell-like words; an unbalanced quote is a UsageError naming the subcommand."""
    try:
        return shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"{prog}: {exc}") from None


def interpolate(text: str, namespace: dict[str, Any]) -> str:
    """`{name}` / `{name.attr}` from the namespace; any other brace is left as written."""
    def sub(m: re.Match[str]) -> str:
        head, *attrs = m.group(1).split(".")
        if head not in namespace:
            return m.group(0)
        value = namespace[head]
        for attr in attrs:
            if not hasattr(value, attr):
                return m.group(0)
            value = getattr(value, attr)
        return str(value)
    return _FIELD.sub(sub, text)


__all__ = ["Parser", "ask_parser", "split_options", "split_words", "interpolate"]
