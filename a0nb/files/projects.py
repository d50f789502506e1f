"""The notebook folder as an Agent Zero project: reading `NB/.a0proj/` (project.json, instructions,
variables, knowledge, secrets files, file-tree settings) and a stat-keyed cache of the result."""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from a0nb.diagnostics import Diagnostics
from a0nb.resources import user_home
from a0nb.files.file_events import Quiet, folders_within, quiet_for
from a0nb.files.prompt_lookup import racy_ns
from a0nb.files.secrets import parse_dotenv

__all__ = ["DEFAULT_FILE_STRUCTURE", "Project", "ProjectCache", "load_project"]

META = ".a0proj"
MAX_INSTRUCTION_BYTES = 1_000_000
MAX_KNOWLEDGE_FILES = 200
SECRETS_IGNORE = f"{META}/secrets.env"  # never listed in the file tree, whatever project.json says
DEFAULT_GITIGNORE = (
    ".git/", "__pycache__/", "*.pyc", ".ipynb_checkpoints/", ".venv/", "venv/", "node_modules/",
    ".mypy_cache/", ".pytest_cache/", ".ruff_cache/", ".DS_Store", SECRETS_IGNORE,
)
DEFAULT_FILE_STRUCTURE: Mapping[str, Any] = MappingProxyType({
    "enabled": True, "max_depth": 5, "max_files": 20, "max_folders": 20, "max_lines": 250,
    "gitignore": DEFAULT_GITIGNORE,
})
_TEXT_FIELDS = ("title", "description", "instructions", "git_url")


@dataclass(frozen=True)
class Project:
    folder: Path
    title: str = ""
    description: str = ""
    instructions: tuple[tuple[Path, str], ...] = ()
    variables: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    knowledge: tuple[Path, ...] = ()
    secrets_files: tuple[Path, ...] = ()
    file_structure: Mapping[str, Any] = field(default_factory=lambda: DEFAULT_FILE_STRUCTURE)
    main_instructions: str = ""  # project.json "instructions"
    git_url: str = ""

    @property
    def meta(self) -> Path:
        return self.folder / META

    def instructions_text(self) -> str:
        """Main instructions, then each instruction file, separated by blank lines (Agent Zero glues
        the main text to the first file with no separator)."""
        parts = [self.main_instructions.strip()] + [text.strip() for _, text in self.instructions]
        return "\n\n".join(p for p in parts if p)


def load_project(folder: Path, diagnostics: Diagnostics, home: Path | None = None) -> Project:
    """Read `folder/.a0proj/`; every part is optional and every problem becomes a diagnostic."""
    folder = Path(folder).resolve()
    meta = folder / META
    home = Path(home).expanduser() if home is not None else user_home()
    data = _read_project_json(meta / "project.json", diagnostics)
    texts = {k: _text_field(data, k, meta / "project.json", diagnostics) for k in _TEXT_FIELDS}
    secrets = (home / "secrets.env", meta / "secrets.env")
    return Project(
        folder=folder,
        title=texts["title"],
        description=texts["description"],
        instructions=_read_instructions(meta / "instructions", diagnostics),
        variables=_read_variables(meta / "variables.env", diagnostics),
        knowledge=_list_knowledge(meta / "knowledge", diagnostics),
        secrets_files=tuple(p for p in secrets if p.is_file()),
        file_structure=_file_structure(data.get("file_structure"), meta / "project.json", diagnostics),
        main_instructions=texts["instructions"],
        git_url=texts["git_url"],
    )


def _read_project_json(path: Path, diagnostics: Diagnostics) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        diagnostics.add("error", "project", f"invalid JSON: {exc.msg}", path, exc.lineno,
                        fix="fix the JSON syntax; the file is ignored until then")
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        diagnostics.add("error", "project", f"cannot read: {exc}", path, fix="save it as UTF-8 JSON")
        return {}
    if not isinstance(data, dict):
        diagnostics.add("error", "project", "project.json must hold a JSON object", path,
                        fix='write {"title": ..., "description": ..., "instructions": ...}')
        return {}
    return data


def _text_field(data: Mapping[str, Any], key: str, path: Path, diagnostics: Diagnostics) -> str:
    value = data.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        diagnostics.add("warning", "project", f'"{key}" must be a string; ignored', path)
        return ""
    return value


def _file_structure(override: Any, path: Path, diagnostics: Diagnostics) -> Mapping[str, Any]:
    if override is None:
        return DEFAULT_FILE_STRUCTURE
    if not isinstance(override, dict):
        diagnostics.add("warning", "project", '"file_structure" must be an object; defaults used', path)
        return DEFAULT_FILE_STRUCTURE
    settings = dict(DEFAULT_FILE_STRUCTURE)
    for key, value in override.items():
        problem = _check_setting(key, value)
        if problem:
            diagnostics.add("warning", "project", f'"file_structure.{key}": {problem}; ignored', path)
        elif key == "gitignore":
            settings[key] = _gitignore(value)
        else:
            settings[key] = value
    return MappingProxyType(settings)


def _check_setting(key: str, value: Any) -> str:
    if key not in DEFAULT_FILE_STRUCTURE:
        return f"unknown setting (known: {', '.join(DEFAULT_FILE_STRUCTURE)})"
    if key == "enabled":
        return "" if isinstance(value, bool) else "must be true or false"
    if key == "gitignore":
        ok = isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))
        return "" if ok else "must be a string of lines or a list of patterns"
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return "" if ok else "must be a non-negative integer"


def _gitignore(value: str | list[str]) -> tuple[str, ...]:
    lines = value.splitlines() if isinstance(value, str) else value
    patterns = [p.strip() for p in lines if p.strip() and not p.strip().startswith("#")]
    if SECRETS_IGNORE not in patterns:
        patterns.append(SECRETS_IGNORE)
    return tuple(patterns)


def _read_instructions(folder: Path, diagnostics: Diagnostics) -> tuple[tuple[Path, str], ...]:
    if not folder.is_dir():
        return ()
    out: list[tuple[Path, str]] = []
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        if path.name.startswith("."):
            continue
        if not path.is_file():
            diagnostics.add("info", "project", "sub-folder of instructions/ ignored", path,
                            fix="put instruction files directly in .a0proj/instructions/")
            continue
        text = _read_text(path, diagnostics)
        if text is not None:
            out.append((path, text))
    return tuple(out)


def _read_text(path: Path, diagnostics: Diagnostics) -> str | None:
    try:
        size = path.stat().st_size
        if size > MAX_INSTRUCTION_BYTES:
            diagnostics.add("warning", "project", f"instruction file is {size} bytes (limit 1 MB); skipped",
                            path, fix="shorten it or move it to .a0proj/knowledge/")
            return None
        data = path.read_bytes()
    except OSError as exc:
        diagnostics.add("warning", "project", f"cannot read instruction file: {exc}", path)
        return None
    try:
        if b"\x00" in data:
            raise UnicodeDecodeError("utf-8", data, 0, 1, "NUL byte")
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        diagnostics.add("warning", "project", "instruction file is not UTF-8 text; skipped", path,
                        fix="instructions/ holds text files only; put other files in .a0proj/knowledge/")
        return None


def _read_variables(path: Path, diagnostics: Diagnostics) -> Mapping[str, str]:
    if not path.is_file():
        return MappingProxyType({})
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        diagnostics.add("error", "project", f"cannot read variables: {type(exc).__name__}", path,
                        fix="save it as UTF-8 text in dotenv syntax")
        return MappingProxyType({})
    entries, problems = parse_dotenv(text)
    for line, reason in problems:
        diagnostics.add("warning", "project", f"line ignored: {reason}", path, line,
                        fix="write NAME=value or # comment")
    return MappingProxyType({e.key: e.value for e in entries})


def _list_knowledge(folder: Path, diagnostics: Diagnostics) -> tuple[Path, ...]:
    if not folder.is_dir():
        return ()
    found: list[Path] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(f for f in files if not f.startswith(".")):
            if len(found) == MAX_KNOWLEDGE_FILES:
                diagnostics.add("warning", "project",
                                f"more than {MAX_KNOWLEDGE_FILES} knowledge files; only the first "
                                f"{MAX_KNOWLEDGE_FILES} are listed", folder,
                                fix="group files into fewer, larger documents")
                return tuple(found)
            found.append(Path(root) / name)
    return tuple(found)


# ---------------------------------------------------------------- cache


Fingerprint = tuple[Any, ...]


class ProjectCache:
    """`load_project` once per change: a hit costs a handful of `stat` calls. The cache owns the
    "project" area of the diagnostics it is given and keeps it in step with what it holds."""

    def __init__(self, diagnostics: Diagnostics, home: Path | None = None) -> None:
        self._diagnostics = diagnostics
        self._home = Path(home).expanduser() if home is not None else None
        self._entries: dict[Path, tuple[Fingerprint, Project, Diagnostics, bool]] = {}  # (.., whether any)
        self._resolved: dict[Path, tuple[tuple[int, int], Path]] = {}
        # the folder asked last (the agent asks for its own once a step): (that Path object, home, its name,
        # (device, inode), the folder it leads to, the names `fingerprint` stats): a hit costs the stats only
        self._last: tuple[Any, ...] = (None, None)
        # the last check's (names, fingerprint, the asked folder's name and mtime, when it stat'ed the folder, else
        # None, None): it stats both secrets.env files (`secrets_identities`) and the folder (`folder_mtime`)
        self.checked: tuple[tuple[str, ...], Fingerprint, str | None, int | None] | None = None
        # the asked folder's mtime when its .a0proj/ was found missing after the folder's last change (outside the
        # clock's reach, `racy_ns`): while the folder keeps that mtime nothing was added to it, .a0proj/ is still
        # missing and a check need not stat it (None: no such mtime); `_missing`: the last check found none
        self._absent_in: int | None = None
        self._missing = False
        self._quiet: Quiet | None = None  # taken before the last check of the folder asked last (file_events)

    def get(self, folder: Path) -> Project:
        home = self._home if self._home is not None else user_home()
        last = self._last
        if last[0] is folder and last[1] is home:
            quiet, self._quiet = self._quiet, None
            if quiet is not None and quiet.quiet() and self.checked is not None:  # no file event since the last check
                hit = self._entries.get(last[4])
                if hit is not None and hit[0] == self.checked[1]:
                    self._quiet = quiet
                    if hit[3]:
                        self._diagnostics.extend(hit[2])  # someone may have cleared them since
                    return hit[1]
            had_meta = self.checked is not None and self.checked[1][1] is not None  # (as the last check found it)
            quiet = quiet_for(_watched_folders(last[2], last[4], home, had_meta))  # (before the stats)
            try:
                st = os.stat(last[2])
                same = (st.st_dev, st.st_ino) == last[3]
            except (OSError, ValueError):
                same = False
            if same:  # the same path leading to the same folder
                mtime = st.st_mtime_ns
                absent = mtime == self._absent_in
                now = 0 if absent or not self._missing else time.time_ns()  # (before .a0proj/'s stat)
                key = fingerprint(last[4], home, last[5], absent)  # taken before loading: an edit during it is seen next time
                if not absent:
                    self._missing = key[1] is None
                    self._absent_in = mtime if self._missing and now > mtime + racy_ns(mtime) else None
                self.checked = (last[5], key, last[2], mtime)
                self._quiet = quiet if (key[1] is not None) == had_meta else None  # (.a0proj/ came or went: not those)
                hit = self._entries.get(last[4])
                if hit is not None and hit[0] == key:
                    if hit[3]:
                        self._diagnostics.extend(hit[2])  # someone may have cleared them since
                    return hit[1]
                return self._load(last[4], home, key)
        self._absent_in, self._missing, self._quiet = None, False, None
        resolved = self._resolve(folder)
        hit_place = self._resolved.get(folder)
        if hit_place is not None and hit_place[1] is resolved:
            self._last = (folder, home, os.fspath(folder), hit_place[0], resolved, _fingerprint_names(resolved, home))
        names = _fingerprint_names(resolved, home)
        key = fingerprint(resolved, home, names)
        self.checked = (names, key, None, None)
        hit = self._entries.get(resolved)
        if hit is not None and hit[0] == key:
            self._diagnostics.extend(hit[2])  # someone may have cleared them since
            return hit[1]
        return self._load(resolved, home, key)

    def _load(self, folder: Path, home: Path, key: Fingerprint) -> Project:
        local = Diagnostics()
        project = load_project(folder, local, home)
        self._entries[folder] = (key, project, local, len(local) > 0)
        self._diagnostics.clear("project")
        for _, _, diags, _ in self._entries.values():
            self._diagnostics.extend(diags)
        return project

    def clear(self) -> None:
        self._entries.clear()
        self._diagnostics.clear("project")

    def _resolve(self, folder: Path) -> Path:
        """`folder.resolve()`, kept while the path leads to the same folder (its device and inode)."""
        try:
            st = os.stat(folder)
        except (OSError, ValueError):
            return Path(folder).resolve()
        hit = self._resolved.get(folder)
        if hit is None or hit[0] != (st.st_dev, st.st_ino):
            hit = self._resolved[folder] = ((st.st_dev, st.st_ino), Path(folder).resolve())
        return hit[1]


def fingerprint(folder: Path, home: Path, names: tuple[str, ...] | None = None, absent: bool = False) -> Fingerprint:
    """(mtime_ns, size) of every file read and the mtime of every folder listed (`names`: the files' names,
    from `_fingerprint_names`, when the caller keeps them; `absent`: the caller knows .a0proj/ is missing)."""
    if names is None:
        names = _fingerprint_names(folder, home)
    if absent:
        return (names[6], None, None, None, None, _stat(names[4]), None)
    try:
        st = os.stat(names[0])
    except OSError:  # no .a0proj/: nothing under it exists (one stat, not eight)
        return (names[6], None, None, None, None, _stat(names[4]), None)
    parts: list[Any] = [names[6], (st.st_ino, st.st_mtime_ns, st.st_size)]  # (as `_stat`)
    parts.extend(_stat(name) for name in names[1:6])  # (names[6] is home's own name)
    parts.extend(_entry_stats(folder / META / "instructions"))
    parts.extend(_folder_stats(folder / META / "knowledge"))
    return tuple(parts)


def _watched_folders(asked: str, folder: Path, home: Path, meta_there: bool) -> list[str]:
    """The folders whose file events stand for `fingerprint`'s stats: the asked folder, the project folder, home
    (missing: no Quiet, the stats as before), and with .a0proj/ what exists of it, its instructions/ and every
    folder `_folder_stats` walks in its knowledge/ (one that is missing appears as an event in the folder above)."""
    meta = folder / META
    out = [asked, os.fspath(folder), os.fspath(home)]
    if meta_there:
        out += [os.fspath(meta), *folders_within(os.fspath(meta / "instructions")),
                *folders_within(os.fspath(meta / "knowledge"), hidden=False)]
    return list(dict.fromkeys(out))


def secrets_identities(checked: tuple[Any, ...]) -> tuple[str, Any, str, Any]:
    """From a check's (names, fingerprint, ...): (home's secrets.env name, its (inode, mtime, size) or (), the
    project's secrets.env name, the same) as `fingerprint` found them."""
    names, key = checked[0], checked[1]
    return names[4], key[5] or (), names[3], key[4] or ()  # (no .a0proj/: key[4] is None, the file is missing)


_names: dict[tuple[Path, Path], tuple[str, ...]] = {}


def _fingerprint_names(folder: Path, home: Path) -> tuple[str, ...]:
    names = _names.get((folder, home))
    if names is None:
        meta = folder / META
        paths = (meta, meta / "project.json", meta / "variables.env", meta / "secrets.env", home / "secrets.env",
                 meta / "instructions", home)
        names = _names[(folder, home)] = tuple(str(p) for p in paths)
        if len(_names) > 256:
            _names.clear()
    return names


def _stat(path: Path | str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size  # (the inode: a file replaced by another is another file)


def _entry_stats(folder: Path) -> list[tuple[str, Any]]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [(name, _stat(folder / name)) for name in names]


def _folder_stats(folder: Path) -> list[tuple[str, int]]:
    out = []
    for root, dirs, _ in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        try:
            out.append((root, os.stat(root).st_mtime_ns))
        except OSError:
            continue
    return sorted(out)
