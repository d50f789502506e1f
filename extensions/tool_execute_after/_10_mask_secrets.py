"""Replace secret values in a tool's output by their aliases before anything else sees it."""
from a0nb.ext import Extension


class MaskSecrets(Extension):
    def execute(self, response=None, tool_name=None, **kwargs):
        secrets = self.agent.secrets
        if secrets and response is not None:
            response.message = secrets.mask_text(response.message)
