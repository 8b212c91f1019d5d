# Legit tool: packaging the results: checksums of the input, compressed copies and a zip
# and a tar of report files, all under ./artifacts.
# Covers: hashlib.sha256/md5 of the input in chunks, hmac with a constant key, base64 and
#   binascii, zlib.compress/crc32, gzip.open for writing and reading, bz2 and lzma in memory,
#   zipfile.ZipFile('artifacts/...', 'w', ZIP_DEFLATED) with fixed timestamps (ZipInfo),
#   tarfile.open('artifacts/...', 'w') with a fixed mtime, io.BytesIO, reading both archives
#   back.
# Proof: RESULT lines (digests, archive listings) equal the host run's; the .gz/.zip/.tar files
#   have the host's bytes (timestamps are fixed).
# inputs: sales.csv
import base64
import binascii
import bz2
import gzip
import hashlib
import hmac
import io
import lzma
import tarfile
import zipfile
import zlib

sha = hashlib.sha256()
md5 = hashlib.md5()
with open("inputs/sales.csv", "rb") as f:
    for chunk in iter(lambda: f.read(4096), b""):
        sha.update(chunk)
        md5.update(chunk)
with open("inputs/sales.csv", "rb") as f:
    data = f.read()

mac = hmac.new(b"report-key", data, hashlib.sha256).hexdigest()
b64 = base64.b64encode(data[:48]).decode("ascii")
crc = zlib.crc32(data)
packed = zlib.compress(data, 9)

with open("artifacts/sales.csv.gz", "wb") as raw, gzip.GzipFile("sales.csv", "wb", fileobj=raw, mtime=0) as gz:
    gz.write(data)
with gzip.open("artifacts/sales.csv.gz", "rb") as gz:
    unzipped = gz.read()

n_rows = data.count(b"\n") - 1
summary = f"sha256 {sha.hexdigest()}\nmd5 {md5.hexdigest()}\nrows {n_rows}\n".encode()
with zipfile.ZipFile("artifacts/report.zip", "w", compression=zipfile.ZIP_DEFLATED) as z:
    for name, payload in (("summary.txt", summary), ("head/first_lines.csv", b"\n".join(data.splitlines()[:5]) + b"\n")):
        info = zipfile.ZipInfo(name, date_time=(2024, 12, 31, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(info, payload)
with zipfile.ZipFile("artifacts/report.zip") as z:
    zip_names = z.namelist()
    zip_ok = z.testzip() is None
    summary_back = z.read("summary.txt")

with tarfile.open("artifacts/report.tar", "w", format=tarfile.USTAR_FORMAT) as tar:
    info = tarfile.TarInfo("report/summary.txt")
    info.size, info.mtime, info.mode = len(summary), 1735603200, 0o644
    tar.addfile(info, io.BytesIO(summary))
with tarfile.open("artifacts/report.tar") as tar:
    tar_names = tar.getnames()
    tar_back = tar.extractfile("report/summary.txt").read()

print(f"RESULT: sha256={sha.hexdigest()} md5={md5.hexdigest()}")
print(f"RESULT: hmac={mac[:32]} b64={b64[:24]} hex={binascii.hexlify(data[:4]).decode()} crc={crc:08x}")
print(f"RESULT: zlib ratio={len(packed) / len(data):.4f} round trip={zlib.decompress(packed) == data}")
print(f"RESULT: bz2={bz2.decompress(bz2.compress(data)) == data} lzma={lzma.decompress(lzma.compress(data)) == data}")
print(f"RESULT: gzip round trip={unzipped == data}")
print(f"RESULT: zip={zip_names} ok={zip_ok} same={summary_back == summary}")
print(f"RESULT: tar={tar_names} same={tar_back == summary}")
