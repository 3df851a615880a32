"""Web pages of OAuth: the consent page an app sends a person to, and their connected apps."""
