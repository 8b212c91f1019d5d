# expect-layer: precheck
# expect-status: blocked
# expect-message: blocked: write path '/etc/anvil-escape-canary.png' outside ALLOWED_WRITE_PATHS (./artifacts)
# host-untouched: /etc/anvil-escape-canary.png
# attempt: matplotlib savefig to an absolute path under /etc
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

plt.plot([1, 2, 3])
plt.savefig("/etc/anvil-escape-canary.png")
print("ESCAPED: saved a figure under /etc")
