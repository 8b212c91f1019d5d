# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: pickle.find_class os.system (code execution through unpickling denied by policy)
# attempt: pickle.loads of a crafted pickle (protocol 0, built at run time) that calls os.system('id')
import pickle

payload = "\n".join(["cos", "system", "(S'id'", "tR."]).encode()
print("ESCAPED:", pickle.loads(payload))
