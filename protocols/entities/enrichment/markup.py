"""What a business's website says about it: Schema.org markup (JSON-LD, microdata, RDFa) and,
as a fallback, Open Graph, read with extruct (no network: it parses the bytes it is given).
 The best item wins: a ``LocalBusiness`` (or one of its subtypes: its type gives the
category, mapped onto the entity-card categories), then an ``Organization``, then a
``Place``, JSON-LD before microdata before RDFa among equals. An item whose ``url`` or
``@id`` names another domain is ignored: a page may describe other businesses (a review
site, a group's sister restaurants), and only what it says about its own domain counts.
Pages are hostile input: one broken JSON-LD script is skipped alone, every value is
checked (``protocols.entities.cards.facts.values_clean``) and nothing found is an empty result.
"""

import logging
from typing import Any
from urllib.parse import urljoin, urlsplit

from protocols.entities.cards.facts import clean_text, coordinates, values_clean
from protocols.entities.cards.hours import hours_from_specification, hours_from_text
from protocols.entities.enrichment.categories import (
    BUSINESS,
    SCHEMA_PREFIXES,
    category_of,
    item_types,
    local_name,
    rank_of,
)

logger = logging.getLogger(__name__)

# Where an item may stand besides the top level: a page's main entity, what it is about.
NESTED_KEYS = ("@graph", "mainEntity", "about")
MAX_ITEMS = 200
# RDFa costs some 0.6 ms per annotated element (pyRdfa), microdata some 0.13 ms per item: a
# page with more is not read in that syntax (a hostile page would cost seconds).
MAX_RDFA_ELEMENTS = 2000
MAX_MICRODATA_ITEMS = 2000
MAX_SAME_AS = 10


def same_site(url: str, domain: str) -> bool:
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    return host in (domain, f"www.{domain}") or f"www.{host}" == domain


def _names_other_domain(item: dict, page_url: str, domain: str) -> bool:
    for key in ("url", "@id"):
        values = item.get(key)
        for value in values if isinstance(values, list) else [values]:
            if not isinstance(value, str) or value.startswith("_:"):
                continue
            absolute = urljoin(page_url, value.strip())
            if urlsplit(absolute).scheme in ("http", "https") and not same_site(absolute, domain):
                return True
    return False


def _first(value: Any) -> Any:
    if isinstance(value, list):
        return value[0] if value else None
    return value


def _text(value: Any) -> Any:
    value = _first(value)
    if isinstance(value, dict):  # {"@value": …} or a node with a name
        return value.get("@value", value.get("name"))
    return value


def _address(item: dict) -> dict:
    address = _first(item.get("address"))
    if isinstance(address, str):
        return {"address": address}
    if not isinstance(address, dict):
        return {}
    country = _first(address.get("addressCountry"))
    if isinstance(country, dict):
        country = country.get("identifier") or country.get("name")
    return {
        "address": _text(address.get("streetAddress")),
        "city": _text(address.get("addressLocality")),
        "postal_code": _text(address.get("postalCode")),
        "country": country,
    }


def _coordinates(item: dict) -> dict | None:
    geo = _first(item.get("geo"))
    source = geo if isinstance(geo, dict) else item
    return coordinates(_text(source.get("latitude")), _text(source.get("longitude")))


def _same_as(item: dict) -> list[str]:
    raw = item.get("sameAs")
    found = []
    for value in raw if isinstance(raw, list) else [raw]:
        text = clean_text(value, 2048)
        if text and urlsplit(text).scheme in ("http", "https"):
            found.append(text)
    return list(dict.fromkeys(found))[:MAX_SAME_AS]


def item_values(item: dict, page_url: str) -> dict:
    """The facts of one Schema.org item, checked."""
    email = clean_text(_text(item.get("email")), 300)
    hours = hours_from_specification(item.get("openingHoursSpecification"))
    hours = hours or hours_from_text(item.get("openingHours"))
    url = _text(item.get("url"))
    values = {
        "name": _text(item.get("name")) or _text(item.get("legalName")),
        "description": _text(item.get("description")),
        "category": category_of(item_types(item)),
        **_address(item),
        "coordinates": _coordinates(item),
        "phone": _text(item.get("telephone")),
        "email": email.removeprefix("mailto:"),
        "hours": hours,
        "website": urljoin(page_url, url.strip()) if isinstance(url, str) else page_url,
        "same_as": _same_as(item),
    }
    return values_clean(values)


def _walk(items: list, depth: int = 0):
    for item in items:
        if not isinstance(item, dict):
            continue
        yield item
        if depth < 2:
            for key in NESTED_KEYS:
                nested = item.get(key)
                if isinstance(nested, (dict, list)):
                    yield from _walk(nested if isinstance(nested, list) else [nested], depth + 1)


def _rdfa_items(nodes: list[dict]) -> list[dict]:
    """extruct's RDFa (expanded JSON-LD: full IRIs, values in lists) as plain items."""
    by_id = {n.get("@id"): n for n in nodes if isinstance(n, dict)}

    def plain(node: dict, depth: int) -> dict:
        item: dict[str, Any] = {"@type": [local_name(t) for t in node.get("@type", [])]}
        if isinstance(node.get("@id"), str) and not node["@id"].startswith("_:"):
            item["@id"] = node["@id"]
        for key, values in node.items():
            if key.startswith("@") or not any(key.startswith(p) for p in SCHEMA_PREFIXES):
                continue
            out = []
            for value in values if isinstance(values, list) else [values]:
                if not isinstance(value, dict):
                    continue
                if "@value" in value:
                    out.append(value["@value"])
                elif "@id" in value:
                    target = by_id.get(value["@id"])
                    if target is not None and depth < 3 and target is not node:
                        out.append(plain(target, depth + 1))
                    else:
                        out.append(value["@id"])
            item[local_name(key)] = out[0] if len(out) == 1 else out
        return item

    return [plain(n, 0) for n in nodes if isinstance(n, dict) and n.get("@type")]


def _json_ld(tree) -> list:
    from extruct.jsonld import JsonLdExtractor

    items = []
    for script in tree.xpath('//script[@type="application/ld+json"]'):
        try:
            items += JsonLdExtractor().extract_items(script)
        except Exception:  # one broken script must not hide the page's others
            logger.info("A JSON-LD script of the page is not JSON; it is skipped.")
    return items


def _syntax(tree, syntax: str, page_url: str) -> list:
    import extruct

    try:
        found = extruct.extract(
            tree, base_url=page_url, syntaxes=[syntax], uniform=True, errors="strict"
        )
    except Exception:  # hostile markup: that syntax gives nothing
        logger.info("Reading the %s markup of %s failed.", syntax, page_url)
        return []
    return found.get(syntax, [])


def _microdata(tree, page_url: str) -> list:
    items = tree.xpath("count(//*[@itemscope])")
    if items > MAX_MICRODATA_ITEMS:
        logger.info("%s has %d microdata items: not read as microdata.", page_url, items)
        return []
    return _syntax(tree, "microdata", page_url)


def _rdfa(tree, page_url: str) -> list:
    annotated = tree.xpath("count(//*[@typeof or @property or @vocab or @resource])")
    if annotated > MAX_RDFA_ELEMENTS:
        logger.info("%s has %d RDFa elements: not read as RDFa.", page_url, annotated)
        return []
    return _syntax(tree, "rdfa", page_url)


def _open_graph(properties: dict, page_url: str, domain: str) -> dict:
    url = properties.get("og:url")
    if isinstance(url, str) and not same_site(urljoin(page_url, url), domain):
        return {}

    def get(*names):
        for name in names:
            value = properties.get(name)
            if value:
                return _first(value)
        return None

    values = {
        "name": get("og:site_name", "og:title"),
        "description": get("og:description"),
        "address": get("business:contact_data:street_address", "og:street-address"),
        "city": get("business:contact_data:locality", "og:locality"),
        "postal_code": get("business:contact_data:postal_code", "og:postal-code"),
        "country": get("business:contact_data:country_name", "og:country-name"),
        "coordinates": coordinates(
            get("place:location:latitude", "og:latitude"),
            get("place:location:longitude", "og:longitude"),
        ),
        "phone": get("business:contact_data:phone_number", "og:phone_number"),
        "website": urljoin(page_url, url) if isinstance(url, str) else page_url,
    }
    return values_clean(values)


def markup_read(
    html: bytes, *, page_url: str, domain: str, encoding: str = "utf-8"
) -> tuple[dict, str]:
    """The facts a page's markup gives about ``domain`` and the syntax they came from
    (``json-ld``, ``microdata``, ``rdfa``, ``opengraph``): the best item's, else Open
    Graph's; ``({}, "")`` when none.

    extruct (with rdflib) is imported here, by the job that reads websites: importing it
    costs some 1.3 s and 33 MiB, which the web workers need not carry."""
    from extruct.utils import parse_xmldom_html

    try:
        tree = parse_xmldom_html(html, encoding=encoding)
    except Exception:
        return {}, ""
    if tree is None:
        return {}, ""
    readers = (
        ("json-ld", lambda: _json_ld(tree)),
        ("microdata", lambda: _microdata(tree, page_url)),
        ("rdfa", lambda: _rdfa_items(_rdfa(tree, page_url))),
    )
    candidates = []
    for syntax, read in readers:
        for item in list(_walk(read()))[:MAX_ITEMS]:
            rank = rank_of(item_types(item))
            if rank is not None and not _names_other_domain(item, page_url, domain):
                values = item_values(item, page_url)
                if values.get("name"):
                    candidates.append((rank, len(candidates), values, syntax))
        if any(c[0] == BUSINESS for c in candidates):
            break  # a business found: the later (slower) syntaxes cannot beat it
    if candidates:
        _, _, values, syntax = min(candidates, key=lambda c: c[:2])
        return values, syntax
    for properties in _syntax(tree, "opengraph", page_url):
        values = _open_graph(properties, page_url, domain)
        if values.get("name"):
            return values, "opengraph"
    return {}, ""
