"""Replace §§secret(NAME) aliases in tool arguments by the real values (unknown alias → the model is told)."""
from a0nb.ext import Extension


class UnmaskSecrets(Extension):
    def execute(self, tool_args=None, tool_name=None, **kwargs):
        if tool_args and ("§§secret(" in repr(tool_args)):
            resolved = self.agent.secrets.resolve(dict(tool_args))
            tool_args.clear()
            tool_args.update(resolved)
