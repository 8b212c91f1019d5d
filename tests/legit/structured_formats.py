# Legit tool: the summary in structured formats: YAML (PyYAML safe_dump/safe_load), XML
# (xml.etree.ElementTree built, written, parsed; lxml with XPath), and a plistlib file.
# Covers: yaml.safe_dump to a file under ./artifacts and yaml.safe_load back (no arbitrary
#   tags), ElementTree.SubElement/indent/write(xml_declaration=True) and ET.parse + findall,
#   lxml.etree.parse + xpath, plistlib.dump/load, xml.sax.saxutils.escape.
# Proof: RESULT lines (values read back from each format) equal the host run's;
#   artifacts/summary.yaml, summary.xml and summary.plist have the host's bytes.
# inputs: sales.csv regions.csv
import plistlib
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

import pandas as pd
import yaml
from lxml import etree

sales = pd.read_csv("inputs/sales.csv")
regions = pd.read_csv("inputs/regions.csv").set_index("region")
summary = {
    "year": 2024,
    "source": "inputs/sales.csv",
    "regions": [
        {"name": r, "manager": regions.loc[r, "manager"], "orders": int(len(g)),
         "revenue": round(float(g["revenue"].sum()), 2)}
        for r, g in sales.groupby("region")
    ],
}

with open("artifacts/summary.yaml", "w", encoding="utf-8") as f:
    yaml.safe_dump(summary, f, sort_keys=True, allow_unicode=True)
with open("artifacts/summary.yaml", encoding="utf-8") as f:
    from_yaml = yaml.safe_load(f)

root = ET.Element("sales", year=str(summary["year"]))
for r in summary["regions"]:
    el = ET.SubElement(root, "region", name=r["name"])
    ET.SubElement(el, "manager").text = r["manager"]
    ET.SubElement(el, "revenue").text = f"{r['revenue']:.2f}"
ET.indent(root)
ET.ElementTree(root).write("artifacts/summary.xml", encoding="utf-8", xml_declaration=True)
parsed = ET.parse("artifacts/summary.xml").getroot()
xml_total = round(sum(float(e.text) for e in parsed.findall("./region/revenue")), 2)

doc = etree.parse("artifacts/summary.xml")
top = max(doc.xpath("//region"), key=lambda e: float(e.findtext("revenue"))).get("name")

with open("artifacts/summary.plist", "wb") as f:
    plistlib.dump(summary, f, sort_keys=True)
with open("artifacts/summary.plist", "rb") as f:
    from_plist = plistlib.load(f)

print(f"RESULT: yaml equal={from_yaml == summary} first={from_yaml['regions'][0]}")
print(f"RESULT: xml regions={[e.get('name') for e in parsed]} total={xml_total}")
print(f"RESULT: lxml top={top} managers={doc.xpath('//manager/text()')}")
print(f"RESULT: plist equal={from_plist == summary} escaped={escape('a < b & c/d')}")
