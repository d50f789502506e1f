import sys
from a0nb.files.prompts import VariablesPlugin


class V(VariablesPlugin):
    def get_variables(self, file, backup_dirs=None, **kwargs):
        sys.exit(2)
