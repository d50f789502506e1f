from a0nb import Extension


class X(Extension):
    pass
