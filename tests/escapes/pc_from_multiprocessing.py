# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: multiprocessing.Process (process creation denied by policy)
# attempt: start a second process with multiprocessing.Process
from multiprocessing import Process


def work():
    print("ESCAPED: child process ran")


p = Process(target=work)
p.start()
p.join()
