"""The Textual UI: renders the core's model (tlview.index, tlview.domain, tlview.views); no parsing happens here."""
