"""What the A2A app shows on an agent's page (registry.extensions.AgentPanel): the served
card's skills, interfaces, security schemes and trust, and the card itself."""

import json

from protocols.a2a.cards.selectors import card_read
from protocols.a2a.models import CardVersion
from registry.agents.models import Agent


def _get(card: dict, camel: str, snake: str):
    """A member by its 1.0 JSON name or its snake_case (proto field) name."""
    return card[camel] if camel in card else card.get(snake)


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _skills(card: dict) -> list[dict]:
    default_in = _list(_get(card, "defaultInputModes", "default_input_modes"))
    default_out = _list(_get(card, "defaultOutputModes", "default_output_modes"))
    return [
        {
            "name": skill.get("name") or skill.get("id"),
            "description": skill.get("description", ""),
            "tags": _list(skill.get("tags")),
            "examples": _list(skill.get("examples")),
            "input_modes": _list(_get(skill, "inputModes", "input_modes")) or default_in,
            "output_modes": _list(_get(skill, "outputModes", "output_modes")) or default_out,
        }
        for skill in map(_dict, _list(card.get("skills")))
    ]


def _interfaces(card: dict) -> list[dict]:
    rows = [_dict(i) for i in _list(_get(card, "supportedInterfaces", "supported_interfaces"))]
    if not rows and card.get("url"):  # a 0.3 card: its main URL and additional interfaces
        rows = [
            {
                "url": card["url"],
                "protocolBinding": card.get("preferredTransport", "JSONRPC"),
                "protocolVersion": card.get("protocolVersion", ""),
            }
        ]
        rows += [_dict(i) for i in _list(card.get("additionalInterfaces"))]
    return [
        {
            "url": row.get("url", ""),
            "binding": _get(row, "protocolBinding", "protocol_binding") or row.get("transport"),
            "version": _get(row, "protocolVersion", "protocol_version") or "",
        }
        for row in rows
    ]


def _schemes(card: dict) -> list[dict]:
    schemes = _dict(_get(card, "securitySchemes", "security_schemes"))
    rows = []
    for name, scheme in schemes.items():
        scheme = _dict(scheme)
        # 1.0: {"httpAuthSecurityScheme": {...}}; 0.3: {"type": "http", ...}
        kind = scheme.get("type") or next(iter(scheme), "")
        detail = _dict(scheme.get(kind)) if kind in scheme else scheme
        rows.append({"name": name, "type": kind, "description": detail.get("description", "")})
    return rows


def card_panel(agent: Agent) -> dict | None:
    stored = card_read(agent.pk)
    if stored is None:
        return None
    body, sha256, updated_at = stored
    card = _dict(json.loads(body))
    provenance = getattr(agent, "a2a_provenance", None)
    return {
        "skills": _skills(card),
        "interfaces": _interfaces(card),
        "schemes": _schemes(card),
        "card_json": json.dumps(card, indent=2, ensure_ascii=False),
        "card_path": f"/a2a/agents/{agent.pk}",
        "card_sha256": sha256,
        "card_updated": updated_at,
        "spec_version": card.get("protocolVersion") or "",
        "provenance": provenance,
        "versions": _versions(agent),
    }


def _versions(agent: Agent, shown: int = 10) -> list[dict]:
    """The card's newest versions, each with what changed since the one before."""
    rows = CardVersion.objects.filter(agent=agent).order_by("-seq")[:shown]
    return [
        {
            "seq": row.seq,
            "version": row.card_version,
            "created": row.created_at,
            "change": row.change,
            "breaking": row.breaking,
            "changes": (row.summary or {}).get("changes", []),
            "card_path": f"/a2a/agents/{agent.pk}?version={row.seq}",
            "diff_path": f"/agents/{agent.pk}/versions/{row.seq - 1}/diff/{row.seq}"
            if row.seq > 1
            else None,
        }
        for row in rows
    ]


def verified_badge(agent: Agent) -> str | None:
    provenance = getattr(agent, "a2a_provenance", None)  # select_related (register_related)
    if provenance is None or not provenance.verified:
        return None
    return f"Verified {provenance.verified_domain}" if provenance.verified_domain else "Verified"


def signed_badge(agent: Agent) -> str | None:
    provenance = getattr(agent, "a2a_provenance", None)
    return "Signed" if provenance is not None and provenance.signature == "verified" else None
