"""OpenAPI schema details drf-spectacular cannot infer."""

from drf_spectacular.extensions import (
    OpenApiAuthenticationExtension,
    OpenApiSerializerFieldExtension,
)
from drf_spectacular.openapi import AutoSchema


class RegistryAutoSchema(AutoSchema):
    def map_parsers(self):
        # The parser reads any body as JSON (so a wrong body is a 400, not a 415); what the
        # API takes is JSON.
        return ["application/json"]


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "registry.auth.ApiKeyAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An API key (`manage.py create_api_key`), as "
            "`Authorization: Bearer <key>` or `X-Api-Key: <key>`. Reads need none.",
        }


class MemberFieldExtension(OpenApiSerializerFieldExtension):
    """A member a protocol app added to the agent or endpoint JSON documents itself."""

    target_class = "registry.serializers.MemberField"

    def map_serializer_field(self, auto_schema, direction):
        return dict(self.target.member.schema)
