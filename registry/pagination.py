from rest_framework.pagination import CursorPagination

from registry.jsonutil import Problem
from registry.problems import ProblemError


class AgentCursorPagination(CursorPagination):
    """Opaque cursors over (created, id): stable while agents are added."""

    ordering = ("-created_at", "id")
    page_size = 20
    max_page_size = 100
    page_size_query_param = "limit"
    cursor_query_param = "cursor"

    def get_page_size(self, request):
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None or raw == "":
            return self.page_size
        try:
            value = int(raw)
        except ValueError:
            value = 0
        if value < 1:
            message = "must be a whole number from 1 to 100"
            raise ProblemError(
                400, "validation-error", f"limit {message}.", [Problem("limit", message)]
            )
        return min(value, self.max_page_size)

    def decode_cursor(self, request):
        try:
            return super().decode_cursor(request)
        except Exception:
            message = "is not valid: use the next link as given"
            raise ProblemError(
                400, "validation-error", f"cursor {message}.", [Problem("cursor", message)]
            ) from None
