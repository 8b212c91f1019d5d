# Try to break it: write outside ./artifacts where the Python layers cannot see it.
# libxml2, the C library inside lxml, writes the file itself, not through Python's open(),
# so the audit hook has no event to judge. Outside ./artifacts and /tmp nearly everything in
# the jail is a read-only mount (a C-level write to ./outside.xml fails with EROFS, a refusal
# the kernel records nowhere); the target here is one that is writable by its permissions:
# /dev/urandom, the host's own device node, bound into the jail for reading. Landlock
# refuses the write, and the supervisor explains it from the kernel's audit record.
from lxml import etree

TARGET = "/dev/urandom"

report = etree.Element("report")
etree.SubElement(report, "total").text = "200"
etree.ElementTree(report).write(TARGET)
print(f"wrote {TARGET}")
