"""Services of the oauth area: clients, consent, grants, and the tokens they give out."""
