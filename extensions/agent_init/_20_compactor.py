"""Register the compactor used for one retry after a context-window error."""
from a0nb.ext import Extension
from a0nb.ext import compactor


class Compactor(Extension):
    def execute(self, **kwargs):
        self.agent.compactor = compactor
