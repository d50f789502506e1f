import time


def hang_tool():
    time.sleep(600)
