import sys


def quitter():
    sys.exit(5)
