raise RuntimeError('loader import failed')
