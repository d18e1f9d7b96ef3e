"""Evaluation of personalised dialog (`egomem eval dialog`, docs/eval.md)."""
