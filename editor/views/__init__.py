"""Page and fragment views, one module per resource."""
