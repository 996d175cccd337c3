"""The person's guard: trust review, approvals, spend, sampling and elicitation rules.

- ``setup.Policy``: wires everything into ``ConnectionHooks`` and makes a ``ToolGuard``.
- ``ask``: a Prompter question with a timeout; abort / timeout / refusal -> declined.
- ``prompters.NonInteractivePrompter``: refuses every question with the next step to take.
- ``trust`` / ``trust_store`` / ``netcheck``: project-server trust, the
  HTTP reasons, persistent decisions (DNS pinning itself is a transport mechanism,
  ``portico.runtime.transports.pinning``).
- ``redirects``: no cross-origin redirects; OAuth endpoint checks for the auth code.
- ``approvals`` / ``approval_store`` / ``validation`` / ``spend`` / ``guard``: tool calls.
- ``sampling`` / ``elicitation``: the SDK callbacks for server-initiated requests.
- ``hooks``: the policy used by terminal commands.
"""
