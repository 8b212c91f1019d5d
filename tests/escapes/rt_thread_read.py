# expect-layer: audit
# expect-status: ok
# expect-message: blocked at runtime: open('/etc/passwd', 'r') (read outside ALLOWED_READ_PATHS)
# expect-stdout: main thread carried on
# attempt: read /etc/passwd from a worker thread, whose exception never reaches the main thread: ok, still recorded
import threading


def reader():
    with open("/".join(["", "etc", "passwd"])) as f:
        print("ESCAPED:", f.readline())


t = threading.Thread(target=reader)
t.start()
t.join()
print("main thread carried on")
