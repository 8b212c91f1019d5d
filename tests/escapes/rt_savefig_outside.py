# expect-layer: audit
# expect-status: blocked
# expect-message: blocked at runtime: open('/etc/anvil-escape-canary.png', 'w+') (write outside ALLOWED_WRITE_PATHS)
# host-untouched: /etc/anvil-escape-canary.png
# attempt: matplotlib savefig to a path under /etc built at run time (PIL opens it 'w+b'; the audit event carries 'w+')
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

plt.plot([1, 2, 3])
target = "/".join(["", "etc", "anvil-escape-canary.png"])
plt.savefig(target)
print("ESCAPED: saved", target)
