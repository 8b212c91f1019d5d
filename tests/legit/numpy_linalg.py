# Legit tool: linear algebra on a region x product revenue matrix: solve, inverse,
# determinant, eigenvalues, SVD, norms, and the matrices written with np.savetxt.
# Covers: building a matrix with np.add.at, np.linalg.solve/inv/det/eigvalsh/svd/norm/
#   matrix_rank/pinv, matrix products (@), broadcasting, np.savetxt and np.loadtxt under
#   ./artifacts, np.tofile/np.fromfile round trip.
# Proof: RESULT lines (determinant, eigenvalues, solution vector, singular values) equal the
#   host run's; artifacts/*.txt and artifacts/gram.bin have the host's bytes.
# inputs: sales.csv
import numpy as np
import pandas as pd

sales = pd.read_csv("inputs/sales.csv")
regions = sorted(sales["region"].unique())
products = sorted(sales["product"].unique())
r_idx = sales["region"].map({r: i for i, r in enumerate(regions)}).to_numpy()
p_idx = sales["product"].map({p: i for i, p in enumerate(products)}).to_numpy()

M = np.zeros((len(regions), len(products)))
np.add.at(M, (r_idx, p_idx), sales["units"].to_numpy())

G = M @ M.T  # symmetric, positive definite: 5x5 Gram matrix of the regions
b = M.sum(axis=1)
x = np.linalg.solve(G, b)
assert np.allclose(G @ x, b)
G_inv = np.linalg.inv(G)
assert np.allclose(G @ G_inv, np.eye(len(regions)))
eig = np.linalg.eigvalsh(G)
s = np.linalg.svd(M, compute_uv=False)
norm_fro = np.linalg.norm(M)
share = M / M.sum(axis=0, keepdims=True)  # broadcasting: column shares

np.savetxt("artifacts/units_matrix.txt", M, fmt="%d", header=" ".join(p.replace(" ", "_") for p in products))
np.savetxt("./artifacts/shares.txt", share, fmt="%.6f", delimiter=",")
G.tofile("artifacts/gram.bin")
assert np.array_equal(np.loadtxt("artifacts/units_matrix.txt"), M)
assert np.array_equal(np.fromfile("artifacts/gram.bin").reshape(G.shape), G)

print(f"RESULT: shape={M.shape} total units={int(M.sum())} rank={np.linalg.matrix_rank(M)}")
print(f"RESULT: log det={np.log(np.linalg.det(G)):.6f} cond={np.linalg.cond(G):.4f}")
print(f"RESULT: eig={np.round(eig, 3).tolist()}")
print(f"RESULT: x={np.round(x, 8).tolist()}")
print(f"RESULT: singular={np.round(s, 4).tolist()} fro={norm_fro:.4f} check={np.isclose(norm_fro, np.sqrt((s ** 2).sum()))}")
print(f"RESULT: pinv ok={np.allclose(np.linalg.pinv(M) @ M, np.eye(len(products)), atol=1e-8)}")
