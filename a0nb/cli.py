"""The `a0nb` command line: install the "Agent Zero" kernelspec, run a notebook headless, print a
rendered prompt with its sources, check the installation (`doctor`), and the demo entry."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable

KERNEL_NAME = "a0nb"
_VERSIONED = ("a0nb", "ipython", "ipykernel", "jupyter_client", "nbclient", "nbformat", "ipywidgets", "litellm")


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    return handler(args)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="a0nb", description="Agent Zero's agent loop in Jupyter.")
    sub = p.add_subparsers(dest="command")
    kernel = sub.add_parser("kernel", help="the Agent Zero kernel").add_subparsers(dest="action")
    install = kernel.add_parser("install", help="install the 'Agent Zero' kernelspec")
    where = install.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="into the user's Jupyter data folder")
    where.add_argument("--sys-prefix", action="store_true", help="into this Python environment (sys.prefix)")
    where.add_argument("--prefix", metavar="P", help="into P/share/jupyter/kernels")
    install.set_defaults(handler=kernel_install)

    run = sub.add_parser("run", help="execute a notebook headless (nbclient) and save the executed copy")
    run.add_argument("notebook")
    run.add_argument("--model", metavar="SPEC", help="sets A0NB_MODEL for the kernel")
    run.add_argument("--output", metavar="PATH", help="default: NAME.executed.ipynb next to the notebook")
    run.add_argument("--kernel", metavar="NAME", help="kernel name (default: the notebook's kernelspec)")
    run.add_argument("--timeout", type=int, default=600, help="per-cell timeout in seconds")
    run.set_defaults(handler=run_notebook)

    prompt = sub.add_parser("prompt", help="print a rendered prompt file of a notebook folder")
    prompt.add_argument("--workdir", default=".", metavar="DIR")
    prompt.add_argument("--profile", default="default")
    prompt.add_argument("--file", default="agent.system.main.md", metavar="NAME")
    prompt.add_argument("--sources", action="store_true",
                        help="instead of the text, list each file read, its root and the copies it overrode")
    prompt.set_defaults(handler=print_prompt)

    mem = sub.add_parser("memory", help="the long-term memory of a notebook folder: list, search, show, delete, import")
    mem.add_argument("--workdir", default=".", metavar="DIR")
    mem.add_argument("words", nargs=argparse.REMAINDER, help="list [AREA] | search QUERY | show ID | delete ID ... | import")
    mem.set_defaults(handler=memory)

    sub.add_parser("doctor", help="versions, API key variables (set or not), paths, diagnostics").set_defaults(
        handler=doctor)
    sub.add_parser("demo", help="the guided demo").set_defaults(handler=demo)
    return p


# -- kernel install ---------------------------------------------------------------------------------

def kernel_install(args: argparse.Namespace) -> int:
    from jupyter_client.kernelspec import KernelSpecManager

    from a0nb.resources import bundled_root
    source = bundled_root() / "kernel" / KERNEL_NAME
    if not (source / "kernel.json").is_file():
        print(f"a0nb: the kernelspec is missing from {source} (reinstall a0nb)", file=sys.stderr)
        return 1
    prefix = args.prefix or (sys.prefix if args.sys_prefix else None)
    user = args.user or (prefix is None and sys.prefix == sys.base_prefix)
    if prefix is None and not user:
        prefix = sys.prefix  # inside a virtual environment: the kernel belongs to it
    with tempfile.TemporaryDirectory() as tmp:
        staged = Path(tmp) / KERNEL_NAME
        shutil.copytree(source, staged)
        spec = json.loads((staged / "kernel.json").read_text(encoding="utf-8"))
        spec["argv"] = [sys.executable if a == "python" else a for a in spec["argv"]]
        (staged / "kernel.json").write_text(json.dumps(spec, indent=2) + "\n", encoding="utf-8")
        dest = KernelSpecManager().install_kernel_spec(str(staged), KERNEL_NAME, user=user, prefix=prefix)
    print(f"installed the Agent Zero kernelspec in {dest}")
    return 0


# -- run --------------------------------------------------------------------------------------------

def run_notebook(args: argparse.Namespace) -> int:
    import nbformat
    from nbclient.exceptions import CellExecutionError

    from a0nb.notebook.headless import notebook_client

    path = Path(args.notebook).resolve()
    if not path.is_file():
        print(f"a0nb run: {path} not found", file=sys.stderr)
        return 2
    output = Path(args.output).resolve() if args.output else path.with_name(path.stem + ".executed.ipynb")
    if args.model:
        os.environ["A0NB_MODEL"] = args.model  # the kernel inherits this process's environment
    nb = nbformat.read(path, as_version=4)
    kernel = args.kernel or nb.metadata.get("kernelspec", {}).get("name") or "python3"
    status = 0
    with notebook_client(nb, kernel_name=kernel, timeout=args.timeout, folder=path.parent) as client:
        try:
            client.execute()
        except CellExecutionError as exc:
            print(f"a0nb run: a cell failed: {str(exc).strip().splitlines()[-1] if str(exc).strip() else exc}",
                  file=sys.stderr)
            status = 1
    from a0nb.atomic_io import write_text
    write_text(output, nbformat.writes(nb), "executed notebook")  # atomic: never half a notebook
    print(f"executed {path.name} → {output}")
    return status


# -- prompt -----------------------------------------------------------------------------------------

def print_prompt(args: argparse.Namespace) -> int:
    from a0nb.files.api import render_prompt
    from a0nb.errors import A0Error
    workdir = Path(args.workdir)
    if not workdir.is_dir():
        print(f"a0nb prompt: {workdir} is not a folder", file=sys.stderr)
        return 2
    try:
        rendered = render_prompt(args.file, workdir=workdir, profile=args.profile)
    except A0Error as exc:
        print(f"a0nb prompt: {exc}", file=sys.stderr)
        return 1
    if not args.sources:
        print(rendered.text)
        if rendered.unknown:  # (stderr: the text on stdout stays the file's own)
            names = ", ".join("{{" + n + "}}" for n in rendered.unknown)
            print(f"a0nb prompt: {names} left as written: the code that uses {args.file} passes "
                  f"{'them' if len(rendered.unknown) > 1 else 'it'} when a call is made (see `%a0 inspect` for a "
                  "call's whole prompt)", file=sys.stderr)
        return 0
    for s in rendered.sources:
        print(f"{s.name}  [{s.label}]  {s.path}  ({s.via})")
        for lower in s.overrode:
            print(f"    overrides {lower}")
    if rendered.unknown:
        print("unknown variables: " + ", ".join(rendered.unknown))
    return 0


# -- doctor -----------------------------------------------------------------------------------------

def memory(args: argparse.Namespace) -> int:
    import shlex
    from a0nb.engine.agent import Agent
    from a0nb.engine.memory.commands import MemoryCommandError, memory_command
    try:
        print(memory_command(Agent(args.workdir), " ".join(shlex.quote(w) for w in args.words)))
    except MemoryCommandError as exc:
        print(f"a0nb {exc}", file=sys.stderr)
        return 2
    return 0


def doctor(args: argparse.Namespace) -> int:
    from importlib import metadata
    print(f"{'python':<15} {sys.version.split()[0]}  ({sys.executable})")
    for dist in _VERSIONED:
        try:
            version = metadata.version(dist)
        except metadata.PackageNotFoundError:
            version = _own_version() if dist == "a0nb" else "not installed"
        print(f"{dist:<15} {version}")
    print("\nAPI key variables (values are never shown):")
    for var in _key_vars():
        print(f"  {'✓' if os.environ.get(var) else '✗'} {var}")
    settings = sorted(k for k in os.environ if k.startswith("A0NB_"))
    print("\na0nb environment: " + (", ".join(settings) if settings else "(no A0NB_* variables set)"))
    _doctor_kernelspec()
    return _doctor_paths(Path.cwd())


def _own_version() -> str:
    from a0nb import __version__
    return f"{__version__} (not installed as a distribution; imported from {Path(__file__).parent})"


def _key_vars() -> list[str]:
    from a0nb.providers.faults import KEY_VARS
    return sorted(set(KEY_VARS.values()))


def _doctor_kernelspec() -> None:
    from jupyter_client.kernelspec import KernelSpecManager
    specs = KernelSpecManager().find_kernel_specs()
    where = specs.get(KERNEL_NAME)
    print(f"\nkernelspec {KERNEL_NAME}: " + (where or "not installed (run: a0nb kernel install)"))


def _doctor_paths(cwd: Path) -> int:
    from a0nb.engine.agent import Agent
    from a0nb.errors import A0Error
    print(f"\nsearch hierarchy for {cwd}:")
    try:
        agent = Agent(cwd)
    except A0Error as exc:
        print(f"  cannot create an agent here: {exc}")
        return 1
    for i, root in enumerate(agent.paths, 1):
        print(f"  {i:2d}. {root.label:<24} {root.path}{'' if root.path.is_dir() else '  (missing)'}")
    agent.tools.available()
    agent.skills()
    agent.profiles()
    agent.extensions.validate()
    problems = list(agent.diagnostics)
    print(f"\ndiagnostics: {len(problems) or 'none'}")
    for d in problems:
        print(f"  {d}")
    return 0


# -- demo -------------------------------------------------------------------------------------------

def demo(args: argparse.Namespace) -> int:
    from a0nb.notebook.demo import main as run_demo
    return int(run_demo() or 0)


if __name__ == "__main__":
    raise SystemExit(main())
