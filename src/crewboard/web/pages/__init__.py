"""Web pages, grouped in one package (or module) per area; each page module exposes ROUTES."""
