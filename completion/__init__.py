"""The completion rules that need no LSP session, shared by every front end."""
