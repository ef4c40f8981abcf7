"""Gatehouse's template tags and filters: the presentation the pages share (``{% load … %}``)."""
