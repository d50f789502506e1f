raise RuntimeError('tool import failed')
