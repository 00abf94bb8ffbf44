import os

# One BLAS thread: OpenBLAS's extra threads spin after each call (when a search was a
# float32 matrix-vector product, it cost 19 ms of CPU with them, 2.3 ms without:
# bench/README.md); a search's byte dot products (simsimd) use this thread alone.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

from django.conf import settings  # noqa: E402
from django.core.management.base import BaseCommand  # noqa: E402

from registry.semantic.service import serve  # noqa: E402


class Command(BaseCommand):
    help = (
        "Run the embedding service: the model and every agent's vector in this one process, "
        "asked by the web workers over the Unix socket SEMANTIC_SOCKET (or --socket)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--socket", default="")

    def handle(self, *args, **options):
        path = (
            options["socket"] or settings.SEMANTIC_SOCKET or str(settings.VAR_DIR / "semantic.sock")
        )
        self.stdout.write(f"Embedding service on {path}")
        serve(path)
