"""Services of the sessions area: spec sessions, an interview guided by an AI model."""
