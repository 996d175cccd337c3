"""The person's guard: trust review, approvals, spend, sampling and elicitation rules."""
