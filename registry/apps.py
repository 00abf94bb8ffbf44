from django.apps import AppConfig
from django.conf import settings
from django.core.signals import request_finished
from django.db.models.signals import post_migrate


class RegistryConfig(AppConfig):
    name = "registry"
    verbose_name = "Registry"

    def ready(self) -> None:
        # schema: OpenAPI extensions; security: its deployment checks; the admin pages.
        from registry import extensions, schema  # noqa: F401
        from registry.access import admin as access_admin  # noqa: F401
        from registry.agents import admin as agents_admin  # noqa: F401
        from registry.agents import holds
        from registry.agents.demo import native_demo_load
        from registry.agents.models import NATIVE_SOURCE
        from registry.discovery.receivers import generation_on_vectors_rebuilt, listings_on_write

        # The events' jobs are queued by name from the writes (registry.events.outbox):
        # registered in every process, not only in workers.
        from registry.events import outbox
        from registry.events import tasks as events_tasks  # noqa: F401
        from registry.events.liveness import on_endpoints_liveness_written
        from registry.health import healthz_lean
        from registry.http import security  # noqa: F401
        from registry.liveness.heartbeats import heartbeat_lean
        from registry.moderation import admin as moderation_admin  # noqa: F401
        from registry.moderation import blocklist, changes, publishers, rules, scanning
        from registry.moderation import tasks as moderation_tasks  # noqa: F401
        from registry.moderation import trust_signals as moderation_trust
        from registry.moderation.metrics import moderation_gauges
        from registry.observability.jobs import jobs_observe
        from registry.observability.requests import request_id_clear
        from registry.observability.tracing import tracing_start
        from registry.semantic.vectors import vectors_on_write
        from registry.signals import (
            agent_changed,
            agent_listing_changed,
            agent_moderated,
            agent_status_changed,
            agents_written,
            endpoints_liveness_written,
            moderation_noted,
            probes_written,
            vectors_rebuilt,
        )
        from registry.trust import measures as trust_measures
        from registry.trust.duplicates import interface_keys
        from registry.trust.pages import (
            copy_badge,
            copy_href,
            duplicates_panel,
            trust_badge,
            trust_href,
            trust_panel,
        )
        from registry.trust.services import (
            BAND_KIND,
            trust_on_agents_written,
            trust_on_probes_written,
        )

        # Trust scores first: the listings built next show them (registry.trust).
        agents_written.connect(trust_on_agents_written, dispatch_uid="trust-scores")
        probes_written.connect(trust_on_probes_written, dispatch_uid="trust-probes")
        extensions.register_scrape_gauges("moderation", moderation_gauges)
        for signal in [*trust_measures.SIGNALS, *moderation_trust.SIGNALS]:
            extensions.register_trust_signal(signal)
        extensions.register_duplicate_keys("interface", interface_keys)
        extensions.register_badge(extensions.Badge("trust", trust_badge, 10, href=trust_href))
        extensions.register_agent_panel(
            extensions.AgentPanel("trust", "registry/trust_panel.html", trust_panel, 15)
        )
        extensions.register_badge(extensions.Badge("copy", copy_badge, 5, href=copy_href))
        extensions.register_agent_panel(
            extensions.AgentPanel(
                "duplicates", "registry/duplicates_panel.html", duplicates_panel, 5
            )
        )
        extensions.register_fact_kind(
            extensions.FactKind(BAND_KIND, "The trust score's band: 75-100, 50-74, 25-49 or 0-24.")
        )
        # Discovery's stored listings follow every write (registry.signals), then the
        # outbox writes each change's events with the fresh listings (registry.events).
        agents_written.connect(listings_on_write, dispatch_uid="discovery-listings")
        # Each written agent's text embedded for search by meaning (registry.semantic).
        agents_written.connect(vectors_on_write, dispatch_uid="semantic-vectors")
        vectors_rebuilt.connect(generation_on_vectors_rebuilt, dispatch_uid="discovery-vectors")
        agent_changed.connect(outbox.on_agent_changed, dispatch_uid="events-changes")
        agents_written.connect(outbox.on_agents_written, dispatch_uid="events-outbox")
        agent_status_changed.connect(outbox.on_agent_status_changed, dispatch_uid="events-status")
        agent_listing_changed.connect(
            outbox.on_agent_listing_changed, dispatch_uid="events-listing"
        )
        agent_moderated.connect(outbox.on_agent_moderated, dispatch_uid="events-moderation")
        # Every write of an agent, on every path, meets the blocklist (registry.moderation).
        agent_changed.connect(blocklist.on_agent_changed, dispatch_uid="moderation-blocklist")
        agent_changed.connect(publishers.on_agent_changed, dispatch_uid="moderation-publishers")
        agent_changed.connect(scanning.on_agent_changed, dispatch_uid="moderation-scanning")
        moderation_noted.connect(outbox.on_moderation_noted, dispatch_uid="events-noted")
        for scanner in rules.SHIPPED:
            extensions.register_scanner(scanner)
        # Changes of approved agents through the core may wait for review (native ones, and
        # the apps' through the core's update: registry.moderation.changes).
        for kind in (changes.NATIVE, changes.UPDATE):
            extensions.register_held_change(extensions.HeldChange(kind, changes.native_apply))
        extensions.register_held_change(
            extensions.HeldChange(changes.NATIVE_ENDPOINT, changes.native_endpoint_apply)
        )
        holds.pending_readers.append(changes.change_of)
        rules.protected_sources.append(publishers.protected_names)
        # Verified publishers: a filter and facet, and trust.verifiedPublisher (read with
        # the agent: its moderation row).
        extensions.register_fact_kind(
            extensions.FactKind(
                publishers.FACT,
                "true: agents of verified publishers (an owner or domain the moderators "
                "verified); false: the others.",
                filter="present",
            )
        )
        extensions.register_related("moderation")
        extensions.register_badge(
            extensions.Badge("verified-publisher", publishers.publisher_badge, 10)
        )
        endpoints_liveness_written.connect(
            on_endpoints_liveness_written, dispatch_uid="events-liveness"
        )

        # Jobs carry the request id that queued them and are counted (registry/observability).
        jobs_observe()
        # Traces when OTEL_* asks for them; otherwise nothing (registry/observability).
        tracing_start()
        request_finished.connect(request_id_clear, dispatch_uid="request-id-clear")
        extensions.register_source(NATIVE_SOURCE, "Native registration")
        # Agents written before listings were stored get theirs once every app's tables
        # exist (the listing shows the apps' members): after migrate, not in a migration.
        post_migrate.connect(listings_after_migrate, sender=self)
        extensions.register_demo_loader("native", native_demo_load)
        extensions.register_lean_route(
            extensions.LeanRoute(
                "/healthz", healthz_lean, exact=True, read_limited=False, database=False
            )
        )
        from registry.discovery.lean import discover_lean

        extensions.register_lean_route(
            extensions.LeanRoute("/discover/agents", discover_lean, exact=True, anonymous=True)
        )
        # Heartbeats and renewals: the hottest write (registry.liveness.heartbeats).
        extensions.register_lean_route(
            extensions.LeanRoute("/agents/", heartbeat_lean, read_limited=False, method="POST")
        )
        extensions.register_schedule(
            "endpoints-expire",
            "registry.liveness.tasks.endpoints_expire",
            settings.LIVENESS_SWEEP_INTERVAL_SECONDS,
        )
        extensions.register_schedule(
            "idempotency-prune",
            "registry.access.tasks.idempotency_prune",
            settings.IDEMPOTENCY_PRUNE_INTERVAL_SECONDS,
        )
        extensions.register_schedule(
            "ownership-expire", "registry.agents.tasks.ownership_expire", 3600
        )
        extensions.register_schedule(
            "endpoints-probe",
            "registry.liveness.tasks.endpoints_probe",
            settings.PROBE_SWEEP_SECONDS,
        )
        extensions.register_schedule(
            "events-sweep", "registry.events.tasks.events_sweep", settings.EVENTS_SWEEP_SECONDS
        )
        extensions.register_schedule("events-prune", "registry.events.tasks.events_prune", 3600)
        extensions.register_schedule("vectors-fill", "registry.semantic.tasks.vectors_fill", 300)
        extensions.register_schedule(
            "trust-refresh", "registry.trust.tasks.trust_refresh", settings.TRUST_REFRESH_SECONDS
        )


def listings_after_migrate(sender, using: str = "default", **kwargs) -> None:
    from django.db import transaction

    from registry.discovery.listings import listings_missing_build
    from registry.semantic.vectors import vectors_rebuild

    with transaction.atomic(using=using):
        listings_missing_build()
    # Agents written before search by meaning (or under another model) get their vectors.
    vectors_rebuild(missing_only=True)
