"""Board rules: task fields, statuses and relations; the week's arithmetic."""
