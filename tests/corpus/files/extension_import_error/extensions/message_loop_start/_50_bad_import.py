raise ImportError('no such thing')
