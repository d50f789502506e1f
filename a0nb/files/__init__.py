"""The file layer: roots and search order, the prompt engine, discovery of extensions, tools, profiles,
projects, plugins and skills, secrets. Imports only the ground modules (errors, diagnostics, settings,
resources), the standard library and yaml: nothing above it."""
