"""extras_temporary["project_file_structure"]: a bounded file tree of the notebook folder (walked again
only when something in it changed: see file_tree)."""
from a0nb.ext import Extension, extra_text
from a0nb.ext import clean_ignore_list, file_tree

_LAST = [None]  # (the file_structure settings last seen, a copy of them, what they give)
_FOLDER = [None]  # (the workdir Path last seen, its text): one slot, replaced whole (a Path is immutable)


def tree_arguments(fs):
    """(enabled, file_tree's keyword arguments, the ignore list as shown, max_depth as given) from the
    project's file_structure settings; worked out again only when they differ from the last ones."""
    last = _LAST[0]
    if last is not None and last[0] is fs and last[1] == fs:  # (the same settings, not edited since)
        return last[2]
    given_fs, fs = fs, dict(fs)
    if not fs.get("enabled", True):
        given = (False, None, None, None)
    else:
        ignore = fs.get("gitignore", "")
        if isinstance(ignore, (list, tuple)):
            ignore = "\n".join(ignore)
        kwargs = {"max_depth": int(fs.get("max_depth", 5)), "max_files": int(fs.get("max_files", 20)),
                  "max_folders": int(fs.get("max_folders", 20)), "max_lines": int(fs.get("max_lines", 250)),
                  "ignore": ignore}
        given = (True, kwargs, clean_ignore_list(ignore), fs.get("max_depth", 5))
    _LAST[0] = (given_fs, fs, given)
    return given


class IncludeWorkdirExtras(Extension):
    def execute(self, loop_data=None, **kwargs):
        agent = self.agent
        enabled, tree_kwargs, shown_ignore, max_depth = tree_arguments(agent.project.file_structure)
        if not enabled:
            return
        workdir, last = agent.workdir, _FOLDER[0]
        if last is None or last[0] is not workdir:
            last = _FOLDER[0] = (workdir, str(workdir))
        folder = last[1]
        tree = file_tree(folder, **tree_kwargs)
        loop_data.extras_temporary["project_file_structure"] = extra_text(
            agent, "agent.extras.workdir_structure.md", folder=folder, max_depth=max_depth, gitignore=shown_ignore,
            file_structure=tree)
