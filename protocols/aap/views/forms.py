"""The check page's form, and reading a JSON document typed or saved by a person."""

from typing import Any

from django import forms
from django.conf import settings

from registry.http.jsonutil import JSONInputError, strict_loads
from registry.outbound.hosts import InvalidHost, domain_parse


def json_document(text: str | bytes, what: str) -> Any:
    """Decode a document strictly; ValueError with a sentence naming ``what`` and where."""
    try:
        return strict_loads(text, max_depth=settings.REGISTRY_MAX_JSON_DEPTH)
    except JSONInputError as exc:
        detail = exc.detail.replace("the body", f"the {what}", 1)
        detail = detail.replace("the JSON", f"the {what}", 1)
        if not detail.startswith(f"the {what}"):
            detail = f"the {what} is not usable: {detail}"
        duplicates = [p.path for p in exc.problems if p.message == "duplicate key"]
        if duplicates:
            detail += f": {', '.join(duplicates)}"
        raise ValueError(detail[0].upper() + detail[1:] + ".") from None


class CheckForm(forms.Form):
    card = forms.CharField(
        required=False,
        label="Agent card (JSON)",
        widget=forms.Textarea(attrs={"rows": 14, "spellcheck": "false"}),
    )
    manifest = forms.CharField(
        required=False,
        label="Contract manifest (JSON, optional)",
        widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false"}),
    )
    domain = forms.CharField(
        required=False,
        max_length=300,
        label="Domain",
        help_text="Fetches https://<domain>/.well-known/agent-card.json and its manifest.",
        widget=forms.TextInput(attrs={"placeholder": "dealer.example", "spellcheck": "false"}),
    )

    def _document(self, name: str, what: str) -> Any:
        text = self.cleaned_data[name]
        if not text:
            return None
        try:
            return json_document(text, what)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean_card(self) -> dict | None:
        card = self._document("card", "card")
        if card is not None and not isinstance(card, dict):
            raise forms.ValidationError("The card must be a JSON object.")
        return card

    def clean_manifest(self) -> Any:
        return self._document("manifest", "manifest")

    def clean_domain(self) -> str:
        if not self.cleaned_data["domain"]:
            return ""
        try:
            return domain_parse(self.cleaned_data["domain"]).authority
        except InvalidHost as exc:
            raise forms.ValidationError(f"The domain {exc}.") from None

    def clean(self) -> dict:
        data = super().clean()
        has_card = bool(self.data.get("card", "").strip())
        has_manifest = bool(self.data.get("manifest", "").strip())
        has_domain = bool(self.data.get("domain", "").strip())
        if has_domain and (has_card or has_manifest):
            raise forms.ValidationError(
                "Give either a domain or pasted documents, not both.", code="both"
            )
        if not has_domain and not has_card:
            raise forms.ValidationError(
                "Paste an agent card (and, optionally, its manifest), or give a domain.",
                code="empty",
            )
        return data
