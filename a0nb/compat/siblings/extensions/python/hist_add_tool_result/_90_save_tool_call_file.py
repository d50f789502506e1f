"""The length from which upstream saves a tool result to a file (other files compare against it)."""
LEN_MIN = 500
