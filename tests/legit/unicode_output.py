# Legit tool: a report with non-ASCII text: accented names, check marks, CJK, emoji-free
# symbols, printed to stdout and written to a UTF-8 file under ./artifacts.
# Covers: print of é, ✓, ✗, 中文, €, unicodedata.name/normalize, str.casefold, encode/decode
#   round trips, ljust alignment with wide text, a pandas DataFrame with a unicode column
#   written to_csv(encoding='utf-8') and read back, a UTF-8 BOM file (utf-8-sig).
# Proof: RESULT lines (the unicode text itself) equal the host run's; artifacts/rapport.csv,
#   artifacts/résumé.txt and artifacts/bom.csv have the host's bytes.
# inputs: sales.csv regions.csv
import unicodedata

import pandas as pd

sales = pd.read_csv("inputs/sales.csv")
regions = pd.read_csv("inputs/regions.csv")

labels = {"North": "Nord", "South": "Süd", "East": "Est (東)", "West": "Ouest", "Central": "Centre (中)"}
report = sales.groupby("region")["revenue"].sum().round(2).rename("chiffre d'affaires €").to_frame()
report["région"] = report.index.map(labels)
report = report.merge(regions.set_index("region")[["manager", "target"]], left_index=True, right_index=True)
report["✓"] = ["✓" if r >= t else "✗" for r, t in zip(report["chiffre d'affaires €"], report["target"])]
report.to_csv("artifacts/rapport.csv", encoding="utf-8")
back = pd.read_csv("artifacts/rapport.csv", encoding="utf-8", index_col=0)
report[["région", "manager"]].to_csv("artifacts/bom.csv", encoding="utf-8-sig")

with open("artifacts/résumé.txt", "w", encoding="utf-8") as f:
    f.write("Résumé des ventes — 2024\n")
    for region, row in report.iterrows():
        f.write(f"{row['région']}: {row.iloc[0]:,.2f} € {row['✓']}\n")

print("Ventes par région ✓ 中文报告")
cafe = "café"
nfd = unicodedata.normalize("NFD", cafe)
print(f"RESULT: héllo wörld ✓ 中文 €")
for region, row in report.iterrows():
    print(f"RESULT: {row['région']:<12}|{row['manager']}|{row['✓']}")
print(f"RESULT: names={[unicodedata.name(c) for c in '✓é中']}")
print(f"RESULT: nfd len={len(nfd)} nfc equal={unicodedata.normalize('NFC', nfd) == cafe} casefold={'Straße'.casefold()}")
print(f"RESULT: utf8 bytes={len('中文✓'.encode('utf-8'))} round trip={'中文✓'.encode('utf-8').decode('utf-8')}")
print(f"RESULT: columns back={list(back.columns)}")
