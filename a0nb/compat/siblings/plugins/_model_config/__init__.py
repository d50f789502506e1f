"""a0nb's equivalents of upstream modules that Agent Zero files import by path (used when the search hierarchy has no file of that name)."""
