"""a0nb's equivalents of upstream system_prompt modules imported by path."""
