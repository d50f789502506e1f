def execute(**kwargs):
    return None
