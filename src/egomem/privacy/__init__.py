"""Privacy rules that every layer applies: consent, "forget me", sensitivity, who may erase whom.

A neutral package (like `schemas` or `relations`): plain text and decision rules over the
shared schemas, importing no layer, so identity, retrieval, memory and the runtime all
apply the same rule. The state that goes with them lives where it is used: pending
biometric keys in `identity/consent_gate.py`, the turn handling in `runtime/privacy_turns.py`.
docs/privacy.md explains the policy.
"""
