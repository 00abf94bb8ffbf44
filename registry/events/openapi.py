"""The OpenAPI document's part that DRF views cannot describe: ``GET /events`` (a plain
Django view streaming ``text/event-stream``) and the event itself (``CloudEvent``, the body
of every webhook delivery and the ``data:`` of every server-sent event). A drf-spectacular
postprocessing hook (``SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]``)."""

from registry.discovery.filters import agent_filterset
from registry.events import envelope

CLOUD_EVENT = {
    "type": "object",
    "description": "A CloudEvents 1.0 event (structured JSON). Webhook deliveries carry it "
    "as their body, signed per Standard Webhooks (webhook-id = id, webhook-timestamp, "
    "webhook-signature: v1,<base64 HMAC-SHA256 of '<id>.<timestamp>.<body>'>); a new "
    "subscription first gets type org.a2a-registry.webhook.verification, whose "
    'data.challenge it must echo as {"challenge": "..."} with a 2xx. Event types: '
    + "; ".join(f"{name}: {text}" for name, text in envelope.DESCRIPTIONS.items()),
    "required": ["specversion", "id", "source", "type", "time", "datacontenttype", "data"],
    "properties": {
        "specversion": {"type": "string", "enum": ["1.0"]},
        "id": {"type": "string", "description": "The cursor: increasing, for since."},
        "source": {"type": "string", "description": "The registry's base URL."},
        "type": {
            "type": "string",
            "enum": [envelope.TYPE_PREFIX + name for name in envelope.EVENT_TYPES]
            + [envelope.TYPE_PREFIX + envelope.VERIFICATION],
        },
        "subject": {"type": "string", "format": "uuid", "description": "The agent's id."},
        "time": {"type": "string", "format": "date-time"},
        "datacontenttype": {"type": "string", "enum": ["application/json"]},
        "changed": {"type": "string", "description": "agent.updated: the parts changed."},
        "endpointid": {"type": "string", "description": "endpoint.liveness_changed."},
        "liveness": {"type": "string", "description": "endpoint.liveness_changed: status."},
        "signature": {"type": "string", "description": "card.signature_changed: status."},
        "cardversionseq": {
            "type": "string",
            "description": "agent.created, agent.updated: the card version the write stored.",
        },
        "cardversionbreaking": {
            "type": "string",
            "enum": ["true", "false"],
            "description": "agent.updated: whether that version breaks its clients.",
        },
        "cardversionchanges": {
            "type": "string",
            "description": "agent.updated: that version's change rules, comma-separated.",
        },
        "data": {
            "description": "The agent's listing as of the change (as GET /agents/<id>), an "
            "entity's JSON (entity.*), or a tombstone {id, deletedAt} (agent.deleted; "
            "agent.retired carries the listing).",
            "oneOf": [
                {"$ref": "#/components/schemas/Agent"},
                {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "format": "uuid"},
                        "deletedAt": {"type": "string", "format": "date-time"},
                    },
                },
                {"type": "object", "additionalProperties": True},
            ],
        },
    },
}


def events_schema_hook(result, generator, request, public):
    result.setdefault("components", {}).setdefault("schemas", {})["CloudEvent"] = CLOUD_EVENT
    filters = sorted(agent_filterset().base_filters)
    parameters = [
        {
            "name": "since",
            "in": "query",
            "schema": {"type": "integer", "minimum": 0},
            "description": "Replay the events after this cursor first (or Last-Event-ID).",
        },
        {
            "name": "events",
            "in": "query",
            "schema": {"type": "string"},
            "description": "Comma-separated event types (default: all).",
        },
        {"name": "Last-Event-ID", "in": "header", "schema": {"type": "string"}},
        *(
            {
                "name": name,
                "in": "query",
                "schema": {"type": "string"},
                "description": "A discovery filter, as GET /discover/agents takes it.",
            }
            for name in filters
        ),
    ]
    result.setdefault("paths", {})["/events"] = {
        "get": {
            "operationId": "events_stream",
            "tags": ["events"],
            "summary": "Every change as server-sent events: replayed from a cursor, then live",
            "description": "text/event-stream: each event is 'id: <cursor>', 'event: <type>' "
            "(agent.created, ...), 'data: <CloudEvent JSON>'. A ': keep-alive' comment "
            "every 15 s. A cursor older than the events kept, or a client too far behind, "
            "gets 'event: reset' whose data says updatedSince: resync from GET "
            "/agents?updated_since=, then follow from its cursor.",
            "parameters": parameters,
            "security": [{}],
            "responses": {
                "200": {
                    "description": "The stream.",
                    "content": {
                        "text/event-stream": {"schema": {"type": "string"}},
                        "application/cloudevents+json": {
                            "schema": {"$ref": "#/components/schemas/CloudEvent"}
                        },
                    },
                },
                "307": {"description": "Answered by the stream server (EVENTS_STREAM_URL)."},
                "400": {
                    "description": "A bad parameter, named.",
                    "content": {
                        "application/problem+json": {
                            "schema": {"$ref": "#/components/schemas/Problem"}
                        }
                    },
                },
                "429": {
                    "description": "The client (its API key when valid, else its address) "
                    "already holds EVENTS_STREAMS_PER_CLIENT streams open; Retry-After.",
                    "content": {
                        "application/problem+json": {
                            "schema": {"$ref": "#/components/schemas/Problem"}
                        }
                    },
                },
            },
        }
    }
    return result
