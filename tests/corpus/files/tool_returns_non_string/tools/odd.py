def odd():
    return {'bytes': b'\x00\xff', 'set': {1, 2}, 'none': None}
