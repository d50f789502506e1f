"""Agent Zero's `helpers.print_style`: styled console output (ANSI), secrets masked, and an HTML copy
appended to `logs/log_<time>.html` under the base folder (a0nb: `$A0NB_HOME`), created on first output."""
from __future__ import annotations

import html
import os
import sys
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from a0nb.compat.helpers import files
from a0nb.compat.helpers.strings import sanitize_string

_NAMED = {"black": (0, 0, 0), "white": (255, 255, 255), "red": (255, 0, 0), "green": (0, 128, 0),
          "blue": (0, 0, 255), "yellow": (255, 255, 0), "orange": (255, 165, 0), "gray": (128, 128, 128),
          "grey": (128, 128, 128), "cyan": (0, 255, 255), "magenta": (255, 0, 255), "purple": (128, 0, 128)}


def _rgb(color: str) -> tuple[int, int, int] | None:
    if color.startswith("#") and len(color) == 7:
        try:
            return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)
        except ValueError:
            return None
    return _NAMED.get(color.lower())


class PrintStyle:
    last_endline = True
    log_file_path: str | None = None

    def __init__(self, bold: bool = False, italic: bool = False, underline: bool = False,
                 font_color: str = "default", background_color: str = "default", padding: bool = False,
                 log_only: bool = False) -> None:
        self.bold, self.italic, self.underline = bold, italic, underline
        self.font_color, self.background_color = font_color, background_color
        self.padding, self.padding_added, self.log_only = padding, False, log_only

    # -- formatting ---------------------------------------------------------------------------------
    @staticmethod
    def _format_args(args: tuple[Any, ...], sep: str) -> str:
        if not args:
            return ""
        head, *tail = args
        if isinstance(head, str) and tail and ("%" in head or "{" in head):
            mapping = len(tail) == 1 and isinstance(tail[0], Mapping)
            try:
                return head % (tail[0] if mapping else tuple(tail))
            except (TypeError, ValueError, KeyError):
                try:
                    return head.format(**tail[0]) if mapping else head.format(*tail)
                except (KeyError, IndexError, ValueError):
                    pass
        return sep.join(str(a) for a in args)

    def _ansi(self, text: str) -> str:
        codes = ("\033[1m" if self.bold else "") + ("\033[3m" if self.italic else "") + ("\033[4m" if self.underline else "")
        if (fg := _rgb(self.font_color)) is not None:
            codes += "\033[38;2;%d;%d;%dm" % fg
        if (bg := _rgb(self.background_color)) is not None:
            codes += "\033[48;2;%d;%d;%dm" % bg
        return f"{codes}{text}\033[0m" if codes else text

    def _html(self, text: str) -> str:
        styles = [s for s, on in (("font-weight: bold;", self.bold), ("font-style: italic;", self.italic),
                                  ("text-decoration: underline;", self.underline)) if on]
        if (fg := _rgb(self.font_color)) is not None:
            styles.append("color: rgb(%d, %d, %d);" % fg)
        if (bg := _rgb(self.background_color)) is not None:
            styles.append("background-color: rgb(%d, %d, %d);" % bg)
        return f'<span style="{" ".join(styles)}">{html.escape(text).replace(chr(10), "<br>")}</span>'

    def get(self, *args: Any, sep: str = " ", **kwargs: Any) -> tuple[str, str, str]:
        """(plain, ANSI-styled, HTML) text of `args`, secrets masked, unencodable characters replaced."""
        text = self._format_args(args, sep)
        try:
            if not hasattr(self, "secrets_mgr"):
                from a0nb.compat.helpers.secrets import get_secrets_manager
                self.secrets_mgr = get_secrets_manager()
            text = self.secrets_mgr.mask_values(text)
        except Exception:  # masking must never break output (upstream behaves the same)
            pass
        text = sanitize_string(text)
        return text, self._ansi(text), self._html(text)

    # -- output -------------------------------------------------------------------------------------
    def _log_html(self, markup: str) -> None:
        if PrintStyle.log_file_path is None:
            folder = files.get_abs_path("logs")
            os.makedirs(folder, exist_ok=True)
            PrintStyle.log_file_path = os.path.join(folder, datetime.now().strftime("log_%Y%m%d_%H%M%S.html"))
            with open(PrintStyle.log_file_path, "w", encoding="utf-8", errors="replace") as f:
                f.write("<html><body style='background-color:black;font-family: Arial, Helvetica, sans-serif;'><pre>\n")
        with open(PrintStyle.log_file_path, "a", encoding="utf-8", errors="replace") as f:
            f.write(sanitize_string(markup))

    def _pad(self) -> None:
        if self.padding and not self.padding_added:
            if not self.log_only:
                print()
            self._log_html("<br>")
            self.padding_added = True

    def print(self, *args: Any, sep: str = " ", end: str = "\n", flush: bool = True, **kwargs: Any) -> None:
        self._pad()
        plain, styled, markup = self.get(*args, sep=sep)
        if not PrintStyle.last_endline:
            print(file=sys.stdout)
            self._log_html("<br>")
        if not self.log_only:
            print(styled, end=end, flush=flush)
        self._log_html(markup + "<br>\n")
        PrintStyle.last_endline = True

    def stream(self, *args: Any, sep: str = " ", flush: bool = True, **kwargs: Any) -> None:
        self._pad()
        plain, styled, markup = self.get(*args, sep=sep)
        if not self.log_only:
            print(styled, end="", flush=flush)
        self._log_html(markup)
        PrintStyle.last_endline = False

    def is_last_line_empty(self) -> bool:
        return PrintStyle.last_endline

    @staticmethod
    def standard(*args: Any, **kwargs: Any) -> None:
        PrintStyle().print(*args, **kwargs)

    @staticmethod
    def hint(*args: Any, **kwargs: Any) -> None:
        PrintStyle(font_color="#6C3483", padding=True).print("Hint:", *args, **kwargs)

    @staticmethod
    def info(*args: Any, **kwargs: Any) -> None:
        PrintStyle(font_color="#0000FF", padding=True).print("Info:", *args, **kwargs)

    @staticmethod
    def success(*args: Any, **kwargs: Any) -> None:
        PrintStyle(font_color="#008000", padding=True).print("Success:", *args, **kwargs)

    @staticmethod
    def warning(*args: Any, **kwargs: Any) -> None:
        PrintStyle(font_color="#FFA500", padding=True).print("Warning:", *args, **kwargs)

    @staticmethod
    def debug(*args: Any, **kwargs: Any) -> None:
        PrintStyle(font_color="#808080", padding=True).print("Debug:", *args, **kwargs)

    @staticmethod
    def error(*args: Any, **kwargs: Any) -> None:
        PrintStyle(font_color="red", padding=True).print("Error:", *args, **kwargs)
