def explode(x: str = ''):
    raise RuntimeError('tool exploded')
