"""Identity rules: roles, scopes, toolsets and token kinds; token secrets; password hashing."""
