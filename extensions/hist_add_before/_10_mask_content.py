"""Every history add is masked: secret values never enter history, records or cassettes."""
from a0nb.ext import Extension


class MaskContent(Extension):
    def execute(self, content_data=None, ai=None, **kwargs):
        secrets = self.agent.secrets
        if secrets:
            content_data["content"] = secrets.mask(content_data["content"])
