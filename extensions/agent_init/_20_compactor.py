"""Register the compactor used for one retry after a context-window error."""
from a0nb import Extension
from a0nb.organize import compactor


class Compactor(Extension):
    def execute(self, **kwargs):
        self.agent.data["_compactor"] = compactor
