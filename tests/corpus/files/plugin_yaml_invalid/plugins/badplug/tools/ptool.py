def ptool():
    return 'x'
