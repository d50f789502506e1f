"""Agent Zero's `helpers.projects`: in a0nb the notebook folder is the project when it has `.a0proj/`
(its name is the folder's name); project data comes from a0nb's project reader."""
from __future__ import annotations

from typing import Any

PROJECT_META_DIR = ".a0proj"
CONTEXT_DATA_KEY_PROJECT = "project"
PROJECTS_PARENT_DIR = "projects"


def _engine(context: Any = None) -> Any:
    from a0nb.compat.agent import current_engine
    return current_engine(context)


def _project(name: str | None = None) -> Any:
    engine = _engine()
    if engine is None:
        return None
    project = engine.project
    if not project.meta.is_dir() or (name and name != project.folder.name):
        return None
    return project


def notebook_project_name(context: Any = None) -> str | None:
    """The project a chat has active: in a0nb the notebook folder, when it has `.a0proj/` (upstream activates a
    project per chat, in its context data under "project"; `AgentContext.get_data` answers with this)."""
    engine = _engine(context)
    if engine is not None and engine.project.meta.is_dir():
        return str(engine.project.folder.name)
    return None


def get_context_project_name(context: Any) -> str | None:
    named = context.get_data(CONTEXT_DATA_KEY_PROJECT) if context is not None else None
    return str(named) if named else notebook_project_name(context)


def get_project_folder(name: str) -> str:
    project = _project(name)
    if project is None:
        raise FileNotFoundError(f"no project {name!r}: a0nb's project is the notebook folder with .a0proj/")
    return str(project.folder)


def get_project_meta_folder(name: str, *sub: str) -> str:
    import os
    return os.path.join(get_project_folder(name), PROJECT_META_DIR, *sub)


def file_structure_of(fs: Any) -> dict[str, Any]:
    """a0nb's file-structure settings in upstream's shape: the ignore patterns as one gitignore text (a0nb keeps a
    tuple of lines; upstream's `_75_include_workdir_extras` splits the text)."""
    out = dict(fs)
    ignore = out.get("gitignore", "")
    out["gitignore"] = "\n".join(ignore) if isinstance(ignore, (list, tuple)) else str(ignore)
    return out


def load_basic_project_data(name: str) -> dict[str, Any]:
    project = _project(name)
    if project is None:
        raise FileNotFoundError(f"no project {name!r}: a0nb's project is the notebook folder with .a0proj/")
    return {"title": project.title or name, "description": project.description,
            "instructions": project.main_instructions, "color": "", "git_url": project.git_url,
            "file_structure": file_structure_of(project.file_structure)}


def build_system_prompt_vars(name: str) -> dict[str, Any]:
    project = _project(name)
    if project is None:
        return {"project_name": name, "project_description": "", "project_instructions": "", "project_path": "",
                "project_git_url": "", "knowledge_files": "(none)"}
    instructions = "\n\n".join(text for _, text in project.instructions)
    if project.main_instructions:
        instructions = project.main_instructions + ("\n\n" + instructions if instructions else "")
    # (knowledge_files: a0nb's copy of agent.system.projects.active.md lists them; upstream's ignores it)
    knowledge = "\n".join(f"- {p.relative_to(project.folder)}" for p in project.knowledge) or "(none)"
    return {"project_name": project.title or name, "project_description": project.description,
            "project_instructions": instructions, "project_path": str(project.folder),
            "project_git_url": project.git_url, "knowledge_files": knowledge}


def get_file_structure(name: str, basic_data: dict[str, Any] | None = None) -> str:
    from a0nb.ext import file_tree
    project = _project(name)
    if project is None:
        return ""
    fs = file_structure_of(project.file_structure)
    return str(file_tree(project.folder, max_depth=int(fs.get("max_depth", 5)), max_files=int(fs.get("max_files", 20)),
                         max_folders=int(fs.get("max_folders", 20)), max_lines=int(fs.get("max_lines", 250)),
                         ignore=fs["gitignore"]))


def get_active_projects_list() -> list[dict[str, Any]]:
    engine = _engine()
    if engine is None or not engine.project.meta.is_dir():
        return []
    return [{"name": engine.project.folder.name, **load_basic_project_data(engine.project.folder.name)}]
