"""A real UDP DNS server on 127.0.0.1 for tests: TXT, A and AAAA answers, NXDOMAIN,
SERVFAIL, silence.

Use the fixture from a test module with ``pytest_plugins = ["tests.dns_server"]``.
"""

import socket
import threading

import dns.message
import dns.name
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.resolver
import dns.rrset
import pytest
from dns.rdtypes.ANY.TXT import TXT


class LocalDNSServer:
    """A UDP DNS server on 127.0.0.1 answering TXT queries from ``records``.

    ``records[name]`` is a list of TXT records, each a list of strings; a name
    that is absent is NXDOMAIN, one mapped to [] exists without TXT data.
    ``addresses[name]`` are the name's IPv4 and IPv6 addresses (A and AAAA answers).
    ``behaviour`` can be ``"servfail"`` or ``"silent"`` (never answers).
    """

    def __init__(self) -> None:
        self.records: dict[str, list[list[str]]] = {}
        self.addresses: dict[str, list[str]] = {}
        self.behaviour = "answer"
        self.queries: list[str] = []
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.settimeout(0.05)
        self.port = self._socket.getsockname()[1]
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def resolver(self, lifetime: float = 2.0) -> dns.resolver.Resolver:
        resolver = dns.resolver.Resolver(configure=False)
        resolver.nameservers = ["127.0.0.1"]
        resolver.port = self.port
        resolver.timeout = lifetime
        resolver.lifetime = lifetime
        return resolver

    def _serve(self) -> None:
        while not self._stopping.is_set():
            try:
                wire, client = self._socket.recvfrom(4096)
            except TimeoutError:
                continue
            query = dns.message.from_wire(wire)
            qname = query.question[0].name
            self.queries.append(qname.to_text(omit_final_dot=True))
            if self.behaviour == "silent":
                continue
            self._socket.sendto(self._answer(query, qname).to_wire(), client)

    def _answer(self, query: dns.message.Message, qname: dns.name.Name) -> dns.message.Message:
        response = dns.message.make_response(query)
        if self.behaviour == "servfail":
            response.set_rcode(dns.rcode.SERVFAIL)
            return response
        name = qname.to_text(omit_final_dot=True).lower()
        kind = query.question[0].rdtype
        if kind in (dns.rdatatype.A, dns.rdatatype.AAAA) and name in self.addresses:
            family = ":" if kind == dns.rdatatype.AAAA else "."
            found = [a for a in self.addresses[name] if family in a]
            if found:
                response.answer.append(
                    dns.rrset.from_text_list(qname, 300, "IN", dns.rdatatype.to_text(kind), found)
                )
            return response
        if name not in self.records:
            response.set_rcode(dns.rcode.NXDOMAIN)
            return response
        if self.records[name]:
            rrset = dns.rrset.RRset(qname, dns.rdataclass.IN, dns.rdatatype.TXT)
            for strings in self.records[name]:
                rrset.add(TXT(dns.rdataclass.IN, dns.rdatatype.TXT, strings), ttl=300)
            response.answer.append(rrset)
        return response

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join()
        self._socket.close()


@pytest.fixture
def dns_server():
    server = LocalDNSServer()
    yield server
    server.stop()
