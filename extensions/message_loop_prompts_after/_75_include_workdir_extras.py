"""extras_temporary["project_file_structure"]: a bounded file tree of the notebook folder."""
from a0nb.ext import Extension
from a0nb.ext import clean_ignore_list, file_tree


class IncludeWorkdirExtras(Extension):
    def execute(self, loop_data=None, **kwargs):
        agent = self.agent
        fs = dict(agent.project.file_structure)
        if not fs.get("enabled", True):
            return
        ignore = fs.get("gitignore", "")
        if isinstance(ignore, (list, tuple)):
            ignore = "\n".join(ignore)
        tree = file_tree(agent.workdir, max_depth=int(fs.get("max_depth", 5)), max_files=int(fs.get("max_files", 20)),
                         max_folders=int(fs.get("max_folders", 20)), max_lines=int(fs.get("max_lines", 250)),
                         ignore=ignore)
        text = agent.read_prompt("agent.extras.workdir_structure.md", folder=str(agent.workdir),
                                 max_depth=fs.get("max_depth", 5), gitignore=clean_ignore_list(ignore),
                                 file_structure=tree)
        loop_data.extras_temporary["project_file_structure"] = text.strip()
