"""The notebook layer: the `%a0` magics, the Agent Zero kernel, chat mode, completion, the live view and demo.
May import every layer below it; nothing imports it but `a0nb/__init__.py`'s IPython hooks and the CLI."""
