"""OpenAPI schema details drf-spectacular cannot infer."""

from drf_spectacular.extensions import (
    OpenApiAuthenticationExtension,
    OpenApiSerializerExtension,
    OpenApiSerializerFieldExtension,
)
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import extend_schema_serializer
from rest_framework import permissions, serializers

from registry.access.auth import ReadOnlyOrApiKey
from registry.http.problems import PROBLEM_CONTENT_TYPE

PROBLEM_RESPONSES = {
    400: "The request is invalid: a body, a field or a query parameter (see errors[]).",
    401: "No API key, or one that is unknown, revoked or expired.",
    403: "The API key may not do this.",
    404: "There is no such resource (also for an id that is not a UUID).",
    409: "The request conflicts with the resource's state (or, with an Idempotency-Key, "
    "the first request with that key is still in flight: idempotency-in-progress).",
    410: "The agent was retired (retired): gone from discovery, its history kept; retiredAt "
    "says when.",
    412: "If-Match names an ETag that is no longer current (precondition-failed): read the "
    "resource again and retry.",
    413: "The request body is larger than REGISTRY_MAX_BODY_BYTES.",
    422: "The request is well formed but cannot be carried out (the problem's type says why: "
    "discovery-failed, idempotency-key-reused …).",
    429: "Too many requests: retry after Retry-After seconds.",
    503: "The database does not answer (service-unavailable): retry after Retry-After seconds.",
}
IDEMPOTENCY_KEY = {
    "in": "header",
    "name": "Idempotency-Key",
    "required": False,
    "schema": {"type": "string", "minLength": 1, "maxLength": 255},
    "description": "Makes a retry safe: the same key with the same body within 24 hours "
    "replays the first success (with `Idempotent-Replayed: true`) and creates nothing more.",
}
WRITES = {"POST", "PUT", "PATCH", "DELETE"}
# A view whose writes can answer 409 says so with a class attribute ``may_conflict = True``;
# other problems only some of its methods give, with ``extra_problems = {"GET": {410}}``.
# A view whose GET answers without reading a key (a card served as published) says so with
# ``key_ignored_methods = {"GET"}``: no 401, and no key in its security.


class ProblemFieldErrorSerializer(serializers.Serializer):
    path = serializers.CharField(help_text="Where: a JSON path into the body, or a parameter.")
    message = serializers.CharField()


@extend_schema_serializer(component_name="Problem")
class ProblemSerializer(serializers.Serializer):
    """An RFC 9457 problem: every error of the API."""

    type = serializers.CharField(help_text="/problems/<slug>: what this kind of problem means.")
    title = serializers.CharField()
    status = serializers.IntegerField()
    detail = serializers.CharField()
    errors = ProblemFieldErrorSerializer(many=True, required=False)
    requestId = serializers.CharField(
        required=False,
        help_text="The request's id, as in the answer's X-Request-Id: its log lines carry it.",
    )


class RegistryAutoSchema(AutoSchema):
    def map_parsers(self):
        # The parser reads any body as JSON (so a wrong body is a 400, not a 415); what the
        # API takes is JSON.
        return ["application/json"]

    def _needs_key(self) -> bool:
        for permission in self.view.get_permissions():
            if isinstance(permission, permissions.AllowAny):
                return False
            if isinstance(permission, ReadOnlyOrApiKey):
                return self.method in WRITES
        return bool(self.view.get_permissions())

    def _reads_key(self) -> bool:
        """An API key, when sent, is checked (an unknown one is a 401)."""
        return bool(self.view.get_authenticators()) and self.method not in getattr(
            self.view, "key_ignored_methods", ()
        )

    def get_auth(self):
        """A key where one is needed; elsewhere none, or one (``{}`` first: none is fine)."""
        if not self._reads_key():
            return [{}]
        keyed = [requirement for requirement in super().get_auth() if requirement]
        return keyed if self._needs_key() else [{}, *keyed]

    def problem_statuses(self, operation: dict) -> set[int]:
        """The problem responses an operation can give, from what it takes."""
        statuses = {429, 503}
        has_body = "requestBody" in operation
        if has_body or any(p["in"] == "query" for p in operation.get("parameters", [])):
            statuses.add(400)
        if has_body:
            statuses.add(413)
        if any(p["in"] == "path" for p in operation.get("parameters", [])):
            statuses.add(404)
        if self._reads_key():
            statuses.add(401)
        if self._needs_key():
            statuses |= {401, 403}
        statuses |= set(getattr(self.view, "extra_problems", {}).get(self.method, ()))
        if self.method in WRITES and getattr(self.view, "may_conflict", False):
            statuses.add(409)
        if self._idempotent():
            statuses |= {409, 422}
        return statuses

    def _idempotent(self) -> bool:
        return getattr(getattr(self.view, self.method.lower(), None), "idempotent", False)

    def get_operation(self, path, path_regex, path_prefix, method, registry):
        operation = super().get_operation(path, path_regex, path_prefix, method, registry)
        if operation is None:
            return None
        if self._idempotent():
            operation.setdefault("parameters", []).append(IDEMPOTENCY_KEY)
        problem = self.resolve_serializer(ProblemSerializer, "response").ref
        responses = operation["responses"]
        for status in self.problem_statuses(operation):
            responses.setdefault(
                str(status),
                {
                    "description": PROBLEM_RESPONSES[status],
                    "content": {PROBLEM_CONTENT_TYPE: {"schema": problem}},
                },
            )
        operation["responses"] = dict(sorted(responses.items()))
        return operation


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "registry.access.auth.ApiKeyAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An API key (`manage.py create_api_key`), as "
            "`Authorization: Bearer <key>` or `X-Api-Key: <key>`; or a token (a JWT) from an "
            "identity provider the registry accepts (`OIDC_ISSUERS`), as "
            "`Authorization: Bearer <token>`. Reads need none.",
        }


class MemberFieldExtension(OpenApiSerializerFieldExtension):
    """A member a protocol app added to the agent or endpoint JSON documents itself."""

    target_class = "registry.agents.serializers.MemberField"

    def map_serializer_field(self, auto_schema, direction):
        return dict(self.target.member.schema)


class InputSerializerExtension(OpenApiSerializerExtension):
    """A request body refuses the members it does not list: ``additionalProperties``."""

    target_class = "registry.http.inputs.InputSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_basic_serializer(self.target, direction)
        if direction == "request":
            schema["additionalProperties"] = False
        return schema


# Creates whose new resource lives under another collection than the one posted to.
CREATED_UNDER = {"/agents/{agent_id}/transfers": ["/transfers"], "/a2a/agents": ["/agents"]}


def _has_id(schema: dict, components: dict) -> bool:
    ref = schema.get("$ref", "")
    if ref:
        schema = components.get(ref.rsplit("/", 1)[-1], {})
    return "id" in schema.get("properties", {})


def links_hook(result, generator, request, public):
    """OpenAPI links from each create to what reads, changes or deletes what it created.

    A POST whose success answers an object with an ``id`` links to every operation under
    ``<its path>/{<x>_id}`` (and under the collections of ``CREATED_UNDER``), that id as
    the new path parameter and the POST's own path parameters as they were sent.
    """
    paths, components = result["paths"], result.get("components", {}).get("schemas", {})
    for path, item in paths.items():
        create = item.get("post")
        if not create:
            continue
        for status, response in create["responses"].items():
            body = response.get("content", {}).get("application/json", {}).get("schema", {})
            if status not in {"200", "201", "202"} or not _has_id(body, components):
                continue
            links = {}
            for base in [path, *CREATED_UNDER.get(path, [])]:
                for target, target_item in paths.items():
                    head, slash, rest = target.partition(base + "/{")
                    if head or not slash:
                        continue
                    new_id = rest.split("}", 1)[0]
                    for method, operation in target_item.items():
                        if method not in {"get", "put", "patch", "post", "delete"}:
                            continue
                        parameters = {
                            p["name"]: f"$request.path.{p['name']}"
                            for p in operation.get("parameters", [])
                            if p["in"] == "path" and f"{{{p['name']}}}" in path
                        }
                        parameters[new_id] = "$response.body#/id"
                        if set(parameters) != {
                            p["name"] for p in operation.get("parameters", []) if p["in"] == "path"
                        }:
                            continue  # another id it needs that this answer does not give
                        links[operation["operationId"]] = {
                            "operationId": operation["operationId"],
                            "parameters": parameters,
                        }
            if links:
                response["links"] = dict(sorted(links.items()))
    return result
