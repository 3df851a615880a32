"""One module per area of the web app; each exposes ROUTES."""
