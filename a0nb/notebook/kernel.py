"""The "Agent Zero" kernel: ipykernel's IPKernelApp with the a0nb extension loaded and chat mode
on (a plain cell is a message to the agent; `%%python` cells run code). `python -m a0nb.notebook.kernel -f CONN`."""
from __future__ import annotations

from ipykernel.kernelapp import IPKernelApp


class A0KernelApp(IPKernelApp):
    """IPKernelApp (same config files and options) that loads a0nb and turns chat mode on."""

    def init_extensions(self) -> None:
        super().init_extensions()
        from a0nb.notebook.magics import load
        magics = load(self.shell)
        magics.options.chat = True


def main(argv: list[str] | None = None) -> None:
    A0KernelApp.launch_instance(argv)


if __name__ == "__main__":
    main()
