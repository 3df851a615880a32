"""Identity pages: signing in and out, the password, and API tokens."""
