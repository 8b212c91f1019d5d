# Try to break it: open a network connection where the Python layers cannot see it.
# The same kind of fetch, done by libxml2, the C library inside lxml (part of the jail's data
# stack). lxml is no network module to the pre-check, and libxml2 makes its sockets itself,
# not through Python's socket module, so the audit hook has no event to judge. The kernel
# does: seccomp refuses the socket() call and the supervisor records it from outside the
# jail. (libxml2 first probes for IPv6 with an AF_INET6 socket: refused and recorded too.)
from lxml import etree

URL = "http://127.0.0.1:8080/feed.xml"

parser = etree.XMLParser(no_network=False)  # lxml refuses URLs unless asked
feed = etree.parse(URL, parser)
print(etree.tostring(feed, pretty_print=True).decode()[:500])
