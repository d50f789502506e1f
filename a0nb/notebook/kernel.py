"""The "Agent Zero" kernel: ipykernel's IPKernelApp with the a0nb extension loaded and chat mode
on (a plain cell is a message to the agent; `%%python` cells run code). `python -m a0nb.notebook.kernel -f CONN`."""
from __future__ import annotations

from typing import Any

from ipykernel.ipkernel import IPythonKernel
from ipykernel.kernelapp import IPKernelApp
from ipykernel.kernelbase import Kernel
from traitlets import Type


class A0Kernel(IPythonKernel):
    """IPython's kernel, announcing chat text: a plain cell is a message, so front ends highlight it as
    Markdown rather than Python (`%%python` cells still run code; only their colouring is plain)."""

    language_info: dict[str, Any] = {**IPythonKernel.language_info, "codemirror_mode": "markdown",
                                     "mimetype": "text/markdown", "pygments_lexer": "markdown"}


class A0KernelApp(IPKernelApp):
    """IPKernelApp (same config files and options) that loads a0nb and turns chat mode on."""

    kernel_class = Type(A0Kernel, klass=Kernel, help="The chat kernel (IPython's, announced as chat text).").tag(config=True)

    def init_extensions(self) -> None:
        super().init_extensions()
        from a0nb.notebook.magics import load
        magics = load(self.shell)
        magics.options.chat = True


def main(argv: list[str] | None = None) -> None:
    A0KernelApp.launch_instance(argv)


if __name__ == "__main__":
    main()
