"""The notifications area: telling people what needs them, in the app and by email."""
