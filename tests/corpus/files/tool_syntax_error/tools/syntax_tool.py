def syntax_tool(:
    pass
