"""The bundled usage footer and status bar (see README.md): which fields each line shows comes from the
plugin's config, which the `config` element lets the user edit."""
from a0nb.ext import FOOTER_FIELDS, STATUS_FIELDS


class UsageFooter:
    def get_ui_elements(self, config, tags, models):
        footer = config.get("footer") or list(FOOTER_FIELDS[:5])
        status = config.get("status") or list(STATUS_FIELDS[:4])
        return [
            {"type": "message_footer", "fields": footer},
            {"type": "status_bar", "fields": status},
            {"type": "config", "fields": {
                "footer": {"type": "list", "label": "footer fields", "choices": list(FOOTER_FIELDS),
                           "help": "shown under each answer, in this order"},
                "status": {"type": "list", "label": "status fields", "choices": list(STATUS_FIELDS),
                           "help": "the agent's status line"}}},
        ]
