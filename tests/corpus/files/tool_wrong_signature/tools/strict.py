def strict(a: int, b: int):
    return a + b
