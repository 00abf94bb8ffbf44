"""The request body parser: strict JSON, one object, within size and depth limits."""

from django.conf import settings
from rest_framework.parsers import BaseParser

from registry.http.jsonutil import JSONInputError, strict_loads
from registry.http.problems import ProblemError


class StrictJSONParser(BaseParser):
    """Reads any body as JSON (a non-JSON body is a 400, not a 415)."""

    media_type = "*/*"

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.REGISTRY_MAX_BODY_BYTES
        data = stream.read(limit + 1) if stream is not None else b""
        if len(data) > limit:
            raise ProblemError(
                413, "payload-too-large", f"The request body is larger than {limit} bytes."
            )
        try:
            value = strict_loads(data, max_depth=settings.REGISTRY_MAX_JSON_DEPTH)
        except JSONInputError as exc:
            raise ProblemError(400, "malformed-request", exc.detail, exc.problems) from None
        if not isinstance(value, dict):
            kind = "an array" if isinstance(value, list) else "a JSON scalar"
            raise ProblemError(
                400, "malformed-request", f"The body must be a JSON object, not {kind}."
            )
        return value
