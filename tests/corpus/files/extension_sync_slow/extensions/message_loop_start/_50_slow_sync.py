import time
from a0nb import Extension


class SlowSync(Extension):
    def execute(self, **kwargs):
        time.sleep(600)
