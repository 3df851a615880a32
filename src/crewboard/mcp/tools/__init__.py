"""Tool handlers: each parses nothing (the argument model did), calls one service, renders."""
