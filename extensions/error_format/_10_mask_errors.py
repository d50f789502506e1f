"""Repairable error texts are masked before the model sees them."""
from a0nb.ext import Extension


class MaskErrors(Extension):
    def execute(self, msg=None, **kwargs):
        secrets = self.agent.secrets
        if secrets:
            msg["message"] = secrets.mask_text(msg["message"])
