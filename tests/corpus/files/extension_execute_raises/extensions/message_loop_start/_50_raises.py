from a0nb import Extension


class Raises(Extension):
    def execute(self, **kwargs):
        raise RuntimeError('extension exploded')
