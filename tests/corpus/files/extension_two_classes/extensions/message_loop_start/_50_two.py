from a0nb import Extension


class A(Extension):
    pass


class B(Extension):
    pass
