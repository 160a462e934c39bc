"""Helpers shared by the tests: small studies, plans, fake servers, fixture paths."""
