"""The Textual UI: renders the core's model (tlview.model); no parsing happens here."""
