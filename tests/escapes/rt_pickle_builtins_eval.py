# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: pickle.find_class builtins.eval (code execution through unpickling denied by policy)
# attempt: pickle.loads of a base64-carried pickle that calls builtins.eval on source
import base64
import pickle

payload = base64.b64decode(b"Y2J1aWx0aW5zCmV2YWwKKFMnX19pbXBvcnRfXyhcJ29zXCcpLmdldHBpZCgpJwp0Ui4=")
print("ESCAPED:", pickle.loads(payload))
