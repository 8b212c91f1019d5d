# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: attribute tb_frame (introspection denied by policy)
# attempt: a traceback's frame by a joined attribute name, from an exception the tool raised itself
try:
    1 / 0
except ZeroDivisionError as e:
    frame = getattr(e.__traceback__, "_".join(["tb", "frame"]))
    print("ESCAPED:", frame)
