"""Review commands: decide hand-ins and rules, proposals and messages, answer the inbox."""
