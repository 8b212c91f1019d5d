# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: pickle.find_class logging.os.system (code execution through unpickling denied by policy)
# attempt: a protocol 4 pickle whose global is a dotted name, followed by the unpickler from
#   an innocent module (logging) to the os module it imported and on to os.system
import pickle

payload = (b"\x80\x04\x8c\x07logging\x8c\x09os.system\x93\x8c\x02id\x85R.")
print("ESCAPED:", pickle.loads(payload))
